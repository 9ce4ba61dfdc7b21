"""Challenger: does another score of the same loans rank them better than the model's own?

Each challenger (``models[].challengers``) is compared with the score (the champion) on the
performance cohort by DeLong's paired test, from one joint count table the database groups:
the champion's and the challenger's cells of ``bins.challenger_grid`` equal-frequency bins
each, both frozen with the baseline (``challenger:NAME``, see :mod:`riskmon.baseline`). Loans
in one cell of a score are tied under it, so both AUCs are those of the gridded scores; the
champion's AUC on its own ranking table (the discrimination figures) may differ from its
gridded AUC by the ties the grid adds. Loans without a challenger score are left out of the
comparison and counted.

Figures (performance cohort, per segment, ``variable`` = the challenger's name):
``challenger_n`` (loans with both scores), ``challenger_auc``, ``challenger_auc_difference``
(challenger − champion, with DeLong's standard error and interval in its params) and
``challenger_delong_p`` (two-sided).

Rule (whole population, per challenger): ``challenger_outperforms`` — the challenger's AUC is
significantly higher than the champion's (p-value levels ``thresholds.challenger``);
NOT_EVALUABLE below ``thresholds.min_bads`` bads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.charts import Chart, trend_chart
from riskmon.config import Challenger
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Judge,
    Rule,
    Section,
    describe_p,
    finite,
    measured,
    p_levels,
    p_status,
    where,
)
from riskmon.figures._formulas import CHALLENGER_FORMULAS
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import CountTable, delong_test_from_counts
from riskmon.records import (
    ALL,
    CHALLENGER_GRID,
    PERFORMANCE,
    FigureRecord,
    Status,
    challenger_variable,
)

FIGURES = ("challenger_n", "challenger_auc", "challenger_auc_difference", "challenger_delong_p")


@dataclass(frozen=True)
class JointCounts:
    """Goods and bads of a cohort per (challenger bin, champion bin), both axes running from
    the safest bin to the riskiest; the loans left out for a missing challenger score."""

    goods: np.ndarray
    bads: np.ndarray
    n_without: int


def joint_counts(
    table: CountTable,
    n_champion: int,
    n_challenger: int,
    *,
    champion_riskier: bool,
    challenger_riskier: bool,
) -> JointCounts:
    """Unpack a joint table keyed ``champion bin · n_challenger + challenger bin`` (numeric
    binnings: the last bin of each holds the missing values)."""
    assert table.n_bads is not None
    goods = np.zeros((n_champion, n_challenger))
    bads = np.zeros((n_champion, n_challenger))
    keys = np.asarray(table.values, dtype=np.int64)
    champion, challenger = np.divmod(keys, n_challenger)
    np.add.at(goods, (champion, challenger), table.n_goods)
    np.add.at(bads, (champion, challenger), table.n_bads)
    n_without = int(goods[:, -1].sum() + bads[:, -1].sum())
    # the champion's missing bin holds no loan of a run (a NULL score stops it); drop both
    goods, bads = goods[:-1, :-1], bads[:-1, :-1]
    if not champion_riskier:
        goods, bads = goods[::-1, :], bads[::-1, :]
    if not challenger_riskier:
        goods, bads = goods[:, ::-1], bads[:, ::-1]
    return JointCounts(goods.T.copy(), bads.T.copy(), n_without)


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[Any]]:
    """Every challenger's comparison per segment of the performance cohort."""
    figures: list[FigureRecord] = []
    for challenger in tables.model.challengers:
        for segment in tables.segments():
            if tables.rows(PERFORMANCE, segment) is None:
                continue
            figures += _compare(tables, challenger, segment)
    return figures, []


def _compare(tables: RunTables, challenger: Challenger, segment: str) -> list[FigureRecord]:
    name = challenger.label
    variable = challenger_variable(name)
    grid = tables.baseline.binning(CHALLENGER_GRID)
    binning = tables.baseline.binning(variable)

    def figure(
        figure_name: str, value: float | None, reason: str | None, **params: Any
    ) -> FigureRecord:
        value = finite(value)
        why = None if value is not None else (reason or "not defined on this cohort")
        return FigureRecord(
            figure_name,
            value,
            PERFORMANCE,
            variable=name,
            segment=segment,
            reason=why,
            params=params,
        )

    if grid is None or binning is None:
        why = (
            f"baseline version {tables.baseline.version} has no grid for challenger {name!r} "
            f"(added after the freeze, or without a score in the baseline window); "
            f"`riskmon baseline freeze` freezes one"
        )
        return [figure(f, None, why) for f in FIGURES]
    if not tables.has(PERFORMANCE, variable, segment):
        return [figure(f, None, "no loans" + where("", segment)) for f in FIGURES]
    joint = joint_counts(
        tables.table(PERFORMANCE, variable, segment),
        grid.n_bins,
        binning.n_bins,
        champion_riskier=tables.model.higher_is_riskier,
        challenger_riskier=tables.model.challenger_is_riskier(challenger),
    )
    n = float(joint.goods.sum() + joint.bads.sum())
    counts = {"n_bads": int(joint.bads.sum()), "n_without_challenger": joint.n_without}
    result, reason = measured(lambda: delong_test_from_counts(joint.goods, joint.bads))
    if result is None:
        return [figure("challenger_n", n, None, **counts)] + [
            figure(f, None, reason) for f in FIGURES[1:]
        ]
    params: dict[str, Any] = {
        "champion_auc": finite(result.auc_b),
        "challenger_auc": finite(result.auc_a),
        "std_error": finite(result.std_error),
        "interval_low": finite(result.interval[0]),
        "interval_high": finite(result.interval[1]),
        "confidence_level": result.confidence_level,
        "statistic": finite(result.statistic),
        "grid_cells": [grid.n_bins - 1, binning.n_bins - 1],
        "column": challenger.column,
    }
    return [
        figure("challenger_n", n, None, **counts),
        figure("challenger_auc", result.auc_a, reason, champion_auc=finite(result.auc_b)),
        figure("challenger_auc_difference", result.difference, reason, **params),
        figure("challenger_delong_p", result.pvalue, reason, **params),
    ]


# --------------------------------------------------------------------------- rules


def _judge(judge: Judge, _: str) -> None:
    levels = p_levels(judge.thresholds.challenger)
    for name in judge.figures.variables("challenger_delong_p"):
        p = judge.figures.get("challenger_delong_p", PERFORMANCE, variable=name)
        assert p is not None
        few = judge.too_few_bads(ALL)
        if few or p.value is None:
            reason = few or p.reason or "no p-value"
            judge.add("challenger_outperforms", Status.NOT_EVALUABLE, None, levels, reason, name)
            continue
        x = p.params
        champion, challenger = x.get("champion_auc"), x.get("challenger_auc")
        if challenger is None or champion is None:
            why = "the AUCs are not defined on this cohort"
            judge.add("challenger_outperforms", Status.NOT_EVALUABLE, None, levels, why, name)
            continue
        message = (
            f"challenger {name!r}: AUC {challenger:.4f} against the score's {champion:.4f} on "
            f"the same loans (gridded; difference {challenger - champion:+.4f}, "
            f"{x.get('confidence_level', 0.95):.0%} interval {x.get('interval_low', 0):+.4f} "
            f"to {x.get('interval_high', 0):+.4f}, DeLong p = {p.value:.3g})"
        )
        status = (
            p_status(p.value, judge.thresholds.challenger)
            if challenger > champion
            else Status.GREEN
        )
        judge.add("challenger_outperforms", status, p.value, levels, message, name)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class ChallengerRow:
    """One challenger beside the champion."""

    name: str
    column: str
    n: int | None
    n_without: int | None
    champion_auc: float | None
    challenger_auc: float | None
    difference: FigureRecord | None
    pvalue: FigureRecord | None
    status: str | None
    reason: str | None
    #: the AUC difference over the runs up to this one
    trend: Chart


@dataclass(frozen=True)
class ChallengerSection:
    """The challengers compared with the champion on the performance cohort."""

    rows: list[ChallengerRow]
    grid_cells: int | None


def section(run: RunView) -> ChallengerSection | None:
    f = run.figures
    names = f.variables("challenger_delong_p")
    if not names:
        return None
    rows = []
    cells = None
    for name in names:
        p = f.get("challenger_delong_p", PERFORMANCE, variable=name)
        difference = f.get("challenger_auc_difference", PERFORMANCE, variable=name)
        count = f.get("challenger_n", PERFORMANCE, variable=name)
        params = difference.params if difference is not None else {}
        cells = params.get("grid_cells", [None])[0] if params else cells
        alert = run.alerts.get("challenger_outperforms", variable=name)
        series, _ = run.history.series("challenger_auc_difference", PERFORMANCE, name)
        trend = trend_chart(
            f"AUC of {name} − the score's over time",
            series,
            y_label="AUC difference",
            guides=[(0.0, "base", "equal")],
            digits=4,
            y_floor=None,
        )
        rows.append(
            ChallengerRow(
                name=name,
                column=str(params.get("column", name)),
                n=None if count is None or count.value is None else int(count.value),
                n_without=None if count is None else count.params.get("n_without_challenger"),
                champion_auc=params.get("champion_auc"),
                challenger_auc=params.get("challenger_auc"),
                difference=difference,
                pvalue=p,
                status=alert.status if alert is not None else None,
                reason=p.reason if p is not None else None,
                trend=trend,
            )
        )
    return ChallengerSection(rows, cells)


FAMILY = Family(
    name="challenger",
    order=20,
    figures=(
        FigureSpec("challenger_n", PERFORMANCE, "variable", "loans with both scores", count=True),
        FigureSpec("challenger_auc", PERFORMANCE, "variable", "challenger AUC (gridded)"),
        FigureSpec(
            "challenger_auc_difference", PERFORMANCE, "variable", "challenger − champion AUC"
        ),
        FigureSpec("challenger_delong_p", PERFORMANCE, "variable", "DeLong paired test p-value"),
    ),
    compute=compute,
    rules=(
        Rule(
            "challenger_outperforms",
            "run",
            "challenger AUC above the champion's",
            lambda t: p_levels(t.challenger),
            describe_p,
            _judge,
            finding="A challenger ranks the loans significantly better than the model",
            worse="lower",
        ),
    ),
    sections=(Section("challenger", "Challengers", "challenger", 32, "_challenger.html", section),),
    default_population={"challenger_delong_p": PERFORMANCE},
    formulas=CHALLENGER_FORMULAS,
)
