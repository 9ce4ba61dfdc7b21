"""The WOE/IV section: the baseline's WOE per bin, stored with the run or, for a run stored
before bins carried it, taken from the baseline — the same rows either way."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np

from riskmon.figure_table import Figures
from riskmon.figures import Alerts, Bins, RunView
from riskmon.figures.strength import iv_figure, section, woe_bins
from riskmon.metrics import CountTable, fit_binning
from riskmon.records import PERFORMANCE, FigureRecord


class _Baseline:
    version = 1

    def __init__(self, labeled: CountTable):
        self.labeled = labeled

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        return None

    def labeled_table(self, variable: str, segment: str = "") -> CountTable:
        return self.labeled


class _NoHistory:
    def series(
        self, name: str, population: str, variable: str = ""
    ) -> tuple[list[tuple[dt.date, float | None]], float | None]:
        return [], None


def _table(rng: np.random.Generator, binning, shift: float) -> CountTable:
    x = rng.normal(size=3000) + shift
    y = (rng.random(3000) < 1 / (1 + np.exp(2 - x))).astype(int)
    return CountTable.from_bins(binning.assign(x), binning, y)


def _view(bins, baseline, figure) -> RunView:
    return RunView(Figures([figure]), Alerts([]), Bins(bins), baseline, _NoHistory())  # type: ignore[arg-type]


def test_a_run_without_stored_baseline_woe_shows_the_same_rows() -> None:
    rng = np.random.default_rng(3)
    binning = fit_binning(rng.normal(size=5000), kind="numeric", n_bins=8)
    base, now = _table(rng, binning, 0.0), _table(rng, binning, 0.3)
    baseline = _Baseline(base)
    stored = woe_bins(now, variable="income", baseline=base)
    older = [dataclasses.replace(b, extra={}) for b in stored]
    figure = iv_figure(now, variable="income", population=PERFORMANCE)
    (with_extra,) = section(_view(stored, baseline, figure))
    (recomputed,) = section(_view(older, baseline, figure))
    assert recomputed == with_extra
    assert all(r.base_woe is not None for r in with_extra.rows if r.base_n)
    assert sum(r.base_n for r in with_extra.rows) == int(base.n_total.sum())
