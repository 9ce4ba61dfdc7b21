"""The rating system's concentration figures in nightly runs: the stored figures equal the
ECB's formulas and scipy computed on the loans themselves; a book whose loans crowd into one
grade turns RED, a stable one does not."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskmon.config import ModelConfig
from riskmon.plan import plan_run
from riskmon.records import CURRENT, Status
from riskmon.run import run_model
from riskmon.store import MetricStore

from .books import book_model, fresh_store, write_loans

EDGES = [0.02, 0.05, 0.1, 0.2]
AS_OF = dt.date(2025, 3, 31)
#: from this date on, half of the ``pd_crowd`` loans are moved into the grade (0.05, 0.1]
CROWD_FROM = dt.date(2025, 1, 1)


def _book(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 24_000
    start = dt.date(2023, 7, 1)
    days = rng.integers(0, 640, n)
    pd_true = np.round(np.clip(rng.beta(1.3, 14.0, n), 1e-4, 0.95), 6)
    dates = [start + dt.timedelta(days=int(d)) for d in days]
    crowd = pd_true.copy()
    late = np.array([d >= CROWD_FROM for d in dates]) & (rng.random(n) < 0.5)
    crowd[late] = 0.07
    points = np.round(600 + 20 * np.log2((1 - pd_true) / pd_true / 19.0), 3)
    return pd.DataFrame(
        {
            "loan_id": np.arange(n),
            "score_date": dates,
            "pd_true": pd_true,
            "pd_crowd": crowd,
            "points": points,
            "default_12m": (rng.random(n) < pd_true).astype(int),
            "channel": rng.choice(["web", "branch"], n),
            "exposure": np.round(rng.gamma(2.0, 5000.0, n), 2),
        }
    )


@pytest.fixture(scope="module")
def book_url(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pd.DataFrame]:
    url = f"sqlite:///{tmp_path_factory.mktemp('rating') / 'book.db'}"
    book = _book(seed=3)
    write_loans(url, book)
    return url, book


def _model(url: str, score: str, **extra: Any) -> ModelConfig:
    columns = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": score,
        "label": "default_12m",
        "weight": "exposure",
        "segments": ["channel"],
    }
    return book_model(url, columns=columns, **extra)


_store = fresh_store


def _per_grade(frame: pd.DataFrame, column: str, weights: bool = False) -> np.ndarray:
    """Loans (or exposure) per master-scale grade, best first, by pandas."""
    grade = pd.cut(frame[column], [-np.inf, *EDGES, np.inf], right=True, labels=False)
    values = frame["exposure"] if weights else pd.Series(1.0, index=frame.index)
    return values.groupby(grade).sum().reindex(range(len(EDGES) + 1), fill_value=0).to_numpy()


def _ecb(counts: np.ndarray) -> tuple[float, float]:
    """CV and HI as the ECB's instructions write them."""
    k = counts.size
    shares = counts / counts.sum()
    cv = math.sqrt(k * float(((shares - 1 / k) ** 2).sum()))
    return cv, 1 + math.log((cv**2 + 1) / k) / math.log(k)


@pytest.mark.parametrize("score", ["pd_true", "pd_crowd"])
def test_stored_figures_match_the_ecb_formulas_and_scipy_on_the_loans(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path, score: str
) -> None:
    url, book = book_url
    model = _model(url, score, calibration={"grades": EDGES})
    store = _store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    assert outcome.run_id is not None
    stored_bins = store.bins(outcome.run_id)
    got = {f.name: f for f in outcome.figures if f.name.startswith("rating_") and not f.segment}
    plan = plan_run(model, AS_OF)
    current = book[book["score_date"].map(plan.current.__contains__)]
    baseline = book[
        book["score_date"].map(lambda d: dt.date(2023, 7, 1) <= d <= dt.date(2023, 12, 31))
    ]
    now, before = _per_grade(current, score), _per_grade(baseline, score)
    cv, hi = _ecb(now)
    cv0, hi0 = _ecb(before)
    k = now.size
    z = math.sqrt(k - 1) * (cv - cv0) / math.sqrt(cv**2 * (0.5 + cv**2))
    assert got["rating_herfindahl"].value == pytest.approx(hi, rel=1e-12)
    assert got["rating_herfindahl"].params["baseline"] == pytest.approx(hi0, rel=1e-12)
    assert got["rating_concentration_p"].params["statistic"] == pytest.approx(z, rel=1e-9)
    assert got["rating_concentration_p"].value == pytest.approx(stats.norm.sf(z), rel=1e-9)
    chi2, p, dof, _ = stats.chi2_contingency(np.vstack([now, before]), correction=False)
    assert got["rating_shift_p"].params["statistic"] == pytest.approx(chi2, rel=1e-9)
    assert got["rating_shift_p"].params["dof"] == dof
    assert got["rating_shift_p"].value == pytest.approx(p, rel=1e-6, abs=1e-300)
    _, hi_w = _ecb(_per_grade(current, score, weights=True))
    assert got["rating_herfindahl_exposure"].value == pytest.approx(hi_w, rel=1e-12)
    # the bins: each grade's loans and shares, best first
    bins = [b for b in stored_bins if b.variable == "rating" and not b.segment]
    assert [b.n_total for b in bins] == now.astype(int).tolist()
    assert [b.expected_share for b in bins] == pytest.approx((before / before.sum()).tolist())
    # a segment's figures are stored, its alerts are not raised
    web = current[current["channel"] == "web"]
    (segment_hi,) = [
        f for f in outcome.figures if f.name == "rating_herfindahl" and f.segment == "channel=web"
    ]
    assert segment_hi.value == pytest.approx(_ecb(_per_grade(web, score))[1], rel=1e-12)
    alerts = [a for a in outcome.alerts if a.rule == "rating_concentration"]
    assert [a.segment for a in alerts] == [""]
    expected = (
        Status.RED
        if stats.norm.sf(z) < 0.001
        else Status.AMBER
        if stats.norm.sf(z) < 0.05
        else Status.GREEN
    )
    assert alerts[0].status == expected
    assert alerts[0].thresholds == {"amber": 0.05, "red": 0.001}
    if score == "pd_crowd":
        # half the loans moved into one grade: the index rises and the χ² test sees it, while
        # the ECB's test, which does not grow with the number of loans, stays weak at K = 5
        assert hi > hi0 + 0.1
        assert got["rating_shift_p"].value < 1e-12


def test_a_scorecard_without_a_master_scale_is_graded_on_its_baseline_bins_not_judged(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    model = _model(url, "points").model_copy(update={"score_direction": "higher_is_safer"})
    store = _store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    assert outcome.run_id is not None
    stored_bins = store.bins(outcome.run_id)
    (hi,) = [f for f in outcome.figures if f.name == "rating_herfindahl" and not f.segment]
    assert hi.params["grades"] == "score's baseline bins"
    bins = [b for b in stored_bins if b.variable == "rating" and not b.segment]
    score_bins = [
        b
        for b in stored_bins
        if b.variable == "score" and b.population == CURRENT and not b.segment
    ]
    # grade 1 is the score's highest (safest) bin
    value_bins = [b for b in score_bins if b.label != "missing"]
    assert [b.label for b in bins] == [b.label for b in reversed(value_bins)]
    assert [b.n_total for b in bins] == [b.n_total for b in reversed(value_bins)]
    # equal-frequency bins are spread evenly by construction: stored, not judged, not shown
    assert not [a for a in outcome.alerts if a.rule == "rating_concentration"]
    assert "rating" not in _report_sections(store, outcome.run_id)


def _report_sections(store: MetricStore, run_id: int) -> list[str]:
    from riskmon.report.context import run_report_context

    run = store.run_by_id(run_id)
    assert run is not None
    return [s.name for s in run_report_context(store, run, model=None).sections]


def test_a_model_with_a_master_scale_has_its_rating_system_section(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    store = _store(tmp_path)
    outcome = run_model(_model(url, "pd_true", calibration={"grades": EDGES}), AS_OF, store=store)
    assert outcome.ok, outcome.error
    assert outcome.run_id is not None
    assert "rating" in _report_sections(store, outcome.run_id)


def test_grades_configured_after_the_freeze_say_how_to_compare_them(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    store = _store(tmp_path)
    assert run_model(_model(url, "pd_true"), dt.date(2025, 2, 28), store=store).ok
    later = _model(url, "pd_true", calibration={"grades": EDGES})
    outcome = run_model(later, AS_OF, store=store)
    assert outcome.ok, outcome.error
    got = {f.name: f for f in outcome.figures if f.name.startswith("rating_") and not f.segment}
    assert got["rating_herfindahl"].value is not None
    assert got["rating_concentration_p"].value is None
    assert "riskmon baseline freeze" in (got["rating_concentration_p"].reason or "")
    (alert,) = [a for a in outcome.alerts if a.rule == "rating_concentration"]
    assert alert.status == Status.NOT_EVALUABLE
