"""Challengers in nightly runs: the stored DeLong comparison matches a brute-force DeLong on
the loans binned on the frozen grids; orientation, missing challenger scores, a challenger the
baseline has no grid for, the rule's levels and the configuration's checks."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskmon.config import ModelConfig
from riskmon.errors import ConfigError
from riskmon.metrics import Binning
from riskmon.plan import plan_run
from riskmon.records import CHALLENGER_GRID, Status, challenger_variable
from riskmon.report import render_run_report
from riskmon.run import run_model

from .books import book_model, fresh_store, report_config, write_loans

AS_OF = dt.date(2025, 6, 30)


def _book(seed: int) -> pd.DataFrame:
    """Two years of loans: a latent risk z; ``pd_champion`` sees it through more noise than
    ``pd_better``, ``pd_same`` through the same noise; ``points`` is the champion as a
    scorecard (higher is safer). 5 % of ``pd_better`` is NULL."""
    rng = np.random.default_rng(seed)
    n = 30_000
    start = dt.date(2023, 7, 1)
    days = rng.integers(0, 900, n)
    z = rng.normal(size=n)
    defaults = (rng.random(n) < 1 / (1 + np.exp(2.5 - 1.2 * z))).astype(int)

    def pd_of(noise: float) -> np.ndarray:
        return np.round(1 / (1 + np.exp(2.5 - (z + rng.normal(0, noise, n)))), 5)

    champion = pd_of(1.0)
    better = pd_of(0.4)
    better[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "loan_id": np.arange(n),
            "score_date": [start + dt.timedelta(days=int(d)) for d in days],
            "default_12m": defaults,
            "pd_champion": champion,
            "pd_better": better,
            "pd_same": pd_of(1.0),
            "points": np.round(600 - 40 * np.log(champion / (1 - champion)), 2),
        }
    )


@pytest.fixture(scope="module")
def book_url(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("challenger")
    url = f"sqlite:///{folder / 'book.db'}"
    book = _book(seed=5)
    write_loans(url, book)
    return url, book


def _model(url: str, score: str, direction: str, **extra: Any) -> ModelConfig:
    columns = {"id": "loan_id", "score_date": "score_date", "score": score, "label": "default_12m"}
    return book_model(
        url,
        columns=columns,
        score_direction=direction,
        bins={"challenger_grid": 20},
        **extra,
    )


_store = fresh_store


def _brute_delong(y: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """AUC_a − AUC_b, its DeLong standard error and two-sided p, over every (bad, good)
    pair (higher is riskier for both)."""

    def placements(score: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        bad, good = score[y == 1], score[y == 0]
        psi = (bad[:, None] > good[None, :]) + 0.5 * (bad[:, None] == good[None, :])
        return psi.mean(axis=1), psi.mean(axis=0), float(psi.mean())

    v10a, v01a, auc_a = placements(a)
    v10b, v01b, auc_b = placements(b)
    n_bad, n_good = int((y == 1).sum()), int((y == 0).sum())
    var = np.var(v10a - v10b, ddof=1) / n_bad + np.var(v01a - v01b, ddof=1) / n_good
    se = float(np.sqrt(var))
    diff = auc_a - auc_b
    return diff, se, float(2 * stats.norm.sf(abs(diff / se)))


@pytest.mark.parametrize(
    ("score", "direction"), [("pd_champion", "higher_is_riskier"), ("points", "higher_is_safer")]
)
def test_stored_comparison_matches_a_brute_force_delong_on_the_gridded_loans(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path, score: str, direction: str
) -> None:
    url, book = book_url
    # the challenger is a PD (higher is riskier) whatever the champion's direction
    challengers = [
        {"column": "pd_better", "name": "better", "score_direction": "higher_is_riskier"}
    ]
    model = _model(url, score, direction, challengers=challengers)
    store = _store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    got = {f.name: f for f in outcome.figures if f.variable == "better" and not f.segment}
    # the loans of the cohort binned on the grids the baseline froze
    baseline = store.latest_baseline("m")
    assert baseline is not None
    grid = Binning.from_dict(baseline.variables[CHALLENGER_GRID].binning)
    other = Binning.from_dict(baseline.variables[challenger_variable("better")].binning)
    assert grid.n_bins - 1 == 20  # 20 cells and the missing bin
    window = plan_run(model, AS_OF).performance
    cohort = book[book["score_date"].map(window.__contains__)]
    both = cohort[cohort["pd_better"].notna()]
    champion_cell = grid.assign(both[score].to_numpy(float)).astype(float)
    if direction == "higher_is_safer":
        champion_cell = -champion_cell
    challenger_cell = other.assign(both["pd_better"].to_numpy(float)).astype(float)
    y = both["default_12m"].to_numpy()
    diff, se, p = _brute_delong(y, challenger_cell, champion_cell)
    assert got["challenger_n"].value == len(both)
    assert got["challenger_n"].params["n_without_challenger"] == len(cohort) - len(both)
    difference = got["challenger_auc_difference"]
    assert difference.value == pytest.approx(diff, rel=1e-9)
    assert difference.params["std_error"] == pytest.approx(se, rel=1e-9)
    assert got["challenger_delong_p"].value == pytest.approx(p, rel=1e-6)
    z = stats.norm.ppf(0.975)
    assert difference.params["interval_low"] == pytest.approx(diff - z * se, rel=1e-9)
    # the grid's ties cost little: the gridded AUCs lie near the exact ones on the same loans
    sign = 1.0 if direction == "higher_is_riskier" else -1.0
    exact_champion = stats.mannwhitneyu(
        sign * both[score][y == 1], sign * both[score][y == 0]
    ).statistic / ((y == 1).sum() * (y == 0).sum())
    assert difference.params["champion_auc"] == pytest.approx(exact_champion, abs=0.01)
    # the challenger sees the risk through less noise: significantly better, RED by default
    assert diff > 0
    alert = next(a for a in outcome.alerts if a.rule == "challenger_outperforms")
    assert alert.variable == "better"
    assert alert.status == (Status.RED if p < 0.001 else Status.AMBER if p < 0.05 else "GREEN")
    assert alert.thresholds == {"amber": 0.05, "red": 0.001}


def test_a_challenger_no_better_stays_green_and_a_worse_one_too(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    model = _model(url, "pd_champion", "higher_is_riskier", challengers=["pd_same"])
    outcome = run_model(model, AS_OF, store=_store(tmp_path))
    assert outcome.ok, outcome.error
    alerts = [a for a in outcome.alerts if a.rule == "challenger_outperforms"]
    p = next(f for f in outcome.figures if f.name == "challenger_delong_p" and not f.segment)
    assert p.variable == "pd_same"  # named after its column by default
    assert [a.status for a in alerts] == [Status.GREEN if p.value >= 0.05 else Status.AMBER]


def test_a_challenger_added_after_the_freeze_is_not_available_and_says_why(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    store = _store(tmp_path)
    first = run_model(_model(url, "pd_champion", "higher_is_riskier"), AS_OF, store=store)
    assert first.ok, first.error
    later = _model(url, "pd_champion", "higher_is_riskier", challengers=["pd_same"])
    outcome = run_model(later, dt.date(2025, 7, 31), store=store)
    assert outcome.ok, outcome.error
    figures = [f for f in outcome.figures if f.variable == "pd_same" and not f.segment]
    assert len(figures) == 4
    assert all(f.value is None for f in figures)
    assert all("freeze" in (f.reason or "") for f in figures)
    (alert,) = [a for a in outcome.alerts if a.rule == "challenger_outperforms"]
    assert alert.status == Status.NOT_EVALUABLE
    assert "pd_same" in alert.message


def test_the_section_shows_each_challenger(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    model = _model(url, "pd_champion", "higher_is_riskier", challengers=["pd_better", "pd_same"])
    store = _store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    config = report_config(store, model, tmp_path)
    page = render_run_report(config, store, "m", AS_OF).read_text()
    section = page[page.index('<section id="challenger">') :]
    section = section[: section.index("</section>")]
    assert 'data-challenger="pd_better"' in section
    assert 'data-challenger="pd_same"' in section
    assert "20 equal-frequency cells" in section
    assert 'href="#challenger"' in page


@pytest.mark.parametrize(
    ("challengers", "message"),
    [
        (["pd_same", {"column": "pd_better", "name": "pd_same"}], "unique challenger names"),
        (["pd_champion"], r"challengers\[0\]: expected a column other than the score"),
        ([{"column": "pd_same", "name": "a b"}], "challenger names of letters"),
    ],
)
def test_the_configuration_refuses_ambiguous_challengers(
    challengers: list[Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        _model("sqlite://", "pd_champion", "higher_is_riskier", challengers=challengers)


def test_a_missing_challenger_column_is_named(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=1).head(2000))
    model = _model(url, "pd_champion", "higher_is_riskier", challengers=["pd_nowhere"])
    outcome = run_model(model, AS_OF, store=_store(tmp_path))
    assert not outcome.ok
    assert "pd_nowhere" in (outcome.error or "")
    assert "challengers[0].column" in (outcome.error or "")
