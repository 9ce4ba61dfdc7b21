"""Calibration in nightly runs: the stored figures match scipy on the loans themselves; a
calibrated model stays quiet over a year, one whose PDs are scaled by 0.7 turns RED."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskmon.config import ModelConfig
from riskmon.plan import plan_run
from riskmon.records import PERFORMANCE, Status
from riskmon.run import run_model

from ..collect.loans import load, loan_frame, model_config
from .books import book_model, fresh_store, write_loans

D = dt.date
LOANS_PER_MONTH = 3000
#: the year of monthly runs: as-of dates at each month's end
AS_OF = [(pd.Timestamp(2025, m, 1) + pd.offsets.MonthEnd(0)).date() for m in range(1, 13)]


def _book(seed: int) -> pd.DataFrame:
    """Two years of loans with known PDs: defaults drawn from the true PD; ``pd_true`` is
    calibrated, ``pd_low`` is 0.7 times it, ``points`` is a scorecard on the true odds."""
    rng = np.random.default_rng(seed)
    months = pd.date_range("2023-07-01", "2025-12-01", freq="MS")
    frames = []
    for start in months:
        days = rng.integers(0, start.days_in_month, LOANS_PER_MONTH)
        pd_true = np.clip(rng.beta(1.2, 18.0, LOANS_PER_MONTH), 1e-4, 0.95)
        frames.append(
            pd.DataFrame(
                {
                    "score_date": [(start + pd.Timedelta(days=int(d))).date() for d in days],
                    "pd_true": np.round(pd_true, 6),
                    "default_12m": (rng.random(LOANS_PER_MONTH) < pd_true).astype(int),
                    "channel": rng.choice(["web", "branch"], LOANS_PER_MONTH),
                    "exposure": np.round(rng.gamma(2.0, 5000.0, LOANS_PER_MONTH), 2),
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    book["pd_low"] = np.round(book["pd_true"] * 0.7, 6)
    # a score that was a PD at the baseline and is one no longer
    later = book["score_date"] >= dt.date(2024, 6, 1)
    book["pd_drift"] = np.where(later, book["pd_true"] * 20, book["pd_true"])
    # 600 points at 19:1 good:bad odds, odds doubling every 20 points
    odds = (1 - book["pd_true"]) / book["pd_true"]
    book["points"] = np.round(600 + 20 * np.log2(odds / 19.0), 3)
    return book


@pytest.fixture(scope="module")
def book_url(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("calibration")
    url = f"sqlite:///{folder / 'book.db'}"
    book = _book(seed=11)
    write_loans(url, book)
    return url, book


def _model(url: str, name: str, score: str, **extra: Any) -> ModelConfig:
    columns = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": score,
        "label": "default_12m",
        "segments": ["channel"],
    }
    return book_model(url, name=name, columns=columns, **extra)


_store = fresh_store


def _cohort(book: pd.DataFrame, model: ModelConfig, as_of: dt.date) -> pd.DataFrame:
    window = plan_run(model, as_of).performance
    return book[book["score_date"].map(window.__contains__)]


def test_stored_figures_match_scipy_on_the_loans(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, book = book_url
    edges = [0.02, 0.05, 0.1, 0.2]
    model = _model(
        url,
        "calibrated",
        "pd_true",
        calibration={"grades": edges, "default_correlation": 0.05, "min_expected_defaults": 5},
    )
    store = _store(tmp_path)
    as_of = AS_OF[5]
    outcome = run_model(model, as_of, store=store)
    assert outcome.ok, outcome.error
    figures = {(f.name, f.variable, f.segment): f for f in outcome.figures}
    cohort = _cohort(book, model, as_of)
    n, d, mean_pd = len(cohort), int(cohort["default_12m"].sum()), cohort["pd_true"].mean()
    jeffreys = figures[("jeffreys_p", "", "")]
    assert figures[("calibration_n", "", "")].value == n
    assert figures[("mean_pd", "", "")].value == pytest.approx(mean_pd, rel=1e-12)
    assert jeffreys.value == pytest.approx(stats.beta.cdf(mean_pd, d + 0.5, n - d + 0.5), rel=1e-9)
    binomial = figures[("binomial_p", "", "")]
    assert binomial.value == pytest.approx(stats.binom.sf(d - 1, n, mean_pd), rel=1e-9)
    # Brier and Spiegelhalter from the loans
    y, p = cohort["default_12m"].to_numpy(float), cohort["pd_true"].to_numpy()
    assert figures[("brier", "", "")].value == pytest.approx(np.mean((y - p) ** 2), rel=1e-9)
    z = np.sum((y - p) * (1 - 2 * p)) / np.sqrt(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))
    spiegelhalter = figures[("spiegelhalter_p", "", "")]
    assert spiegelhalter.params["statistic"] == pytest.approx(z, rel=1e-9)
    assert spiegelhalter.value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-9)
    # per grade: PD in (e_{k-1}, e_k]
    grade = np.searchsorted(edges, cohort["pd_true"].to_numpy(), side="left")
    hl = 0.0
    for k in range(len(edges) + 1):
        part = cohort[grade == k]
        nk, dk, pk = len(part), int(part["default_12m"].sum()), part["pd_true"].mean()
        label = next(
            f.variable
            for f in outcome.figures
            if f.name == "grade_jeffreys_p" and f.params.get("grade") == k + 1 and not f.segment
        )
        got = figures[("grade_jeffreys_p", label, "")]
        assert got.params["mean_pd"] == pytest.approx(pk, rel=1e-12)
        assert got.value == pytest.approx(stats.beta.cdf(pk, dk + 0.5, nk - dk + 0.5), rel=1e-9)
        hl += (dk - nk * pk) ** 2 / (nk * pk * (1 - pk))
    hosmer = figures[("hosmer_lemeshow_p", "", "")]
    if not hosmer.params["merged"]:  # every grade expects enough defaults: no pooling
        assert hosmer.params["statistic"] == pytest.approx(hl, rel=1e-9)
        assert hosmer.value == pytest.approx(stats.chi2.sf(hl, len(edges) + 1), rel=1e-9)
    # a segment's portfolio test from its own loans
    web = cohort[cohort["channel"] == "web"]
    nw, dw, pw = len(web), int(web["default_12m"].sum()), web["pd_true"].mean()
    assert figures[("jeffreys_p", "", "channel=web")].value == pytest.approx(
        stats.beta.cdf(pw, dw + 0.5, nw - dw + 0.5), rel=1e-9
    )


def _calibration_statuses(
    url: str, name: str, score: str, tmp_path: Path, **extra: Any
) -> list[Status]:
    """The worst calibration status (whole population) of each run of the year."""
    model = _model(url, name, score, **extra)
    store = _store(tmp_path / name)
    statuses = []
    for as_of in AS_OF:
        outcome = run_model(model, as_of, store=store)
        assert outcome.ok, outcome.error
        statuses.append(
            Status.worst(
                a.status
                for a in outcome.alerts
                if a.rule.startswith("pd_") and not a.segment and a.status != "NOT_EVALUABLE"
            )
        )
    return statuses


def test_a_calibrated_model_stays_quiet_and_one_at_0_7_times_its_pds_turns_red(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    (tmp_path / "calibrated").mkdir()
    (tmp_path / "scaled").mkdir()
    calibrated = _calibration_statuses(url, "calibrated", "pd_true", tmp_path)
    scaled = _calibration_statuses(url, "scaled", "pd_low", tmp_path)
    # false alarms: per run the portfolio tests are AMBER with probability about 0.05 (under)
    # + 0.01 (over), the Holm-adjusted grade tests at most as much again: about 0.12 a run.
    # More than 4 AMBER runs of 12 would happen with probability under 2 %; a RED (p < 0.001
    # after Holm) under 3 % a year
    assert Status.RED not in calibrated, calibrated
    assert sum(s == Status.AMBER for s in calibrated) <= 4, calibrated
    # 3,000 loans a month at a mean PD of 6.25 %: about 188 defaults where 0.7 times the PDs
    # expect 131. RED needs p < 0.001, about 166 defaults or more: 95 % of months (power); a
    # GREEN month (p >= 0.05, fewer than 149 defaults) has a probability of 0.2 %
    assert Status.GREEN not in scaled, scaled
    assert sum(s == Status.RED for s in scaled) >= 10, scaled


def _delong_se(y: np.ndarray, score: np.ndarray) -> tuple[float, float]:
    """AUC and its DeLong standard error by brute force over every (bad, good) pair."""
    bad, good = score[y == 1], score[y == 0]
    psi = (bad[:, None] > good[None, :]) + 0.5 * (bad[:, None] == good[None, :])
    auc = float(psi.mean())
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = v10.var(ddof=1) / bad.size + v01.var(ddof=1) / good.size
    return auc, float(np.sqrt(var))


def test_cutoff_figures_and_the_ecb_auc_test_match_the_loans(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, book = book_url
    model = _model(
        url,
        "decided",
        "pd_true",
        calibration={
            "cutoff": 0.12,
            "costs": {"false_accept": 5, "false_decline": 1},
            "initial_auc": 0.8,
        },
    )
    store = _store(tmp_path)
    as_of = AS_OF[2]
    outcome = run_model(model, as_of, store=store)
    assert outcome.ok, outcome.error
    figures = {(f.name, f.population, f.segment): f for f in outcome.figures}
    cohort = _cohort(book, model, as_of)
    y, p = cohort["default_12m"].to_numpy(), cohort["pd_true"].to_numpy()
    declined = p >= 0.12  # higher is riskier: declined at or above the cut-off
    assert figures[("approval_rate", PERFORMANCE, "")].value == pytest.approx(1 - declined.mean())
    assert figures[("accepted_bad_rate", PERFORMANCE, "")].value == pytest.approx(
        y[~declined].mean()
    )
    assert figures[("declined_bad_rate", PERFORMANCE, "")].value == pytest.approx(
        y[declined].mean()
    )
    tp, fp = int((declined & (y == 1)).sum()), int((declined & (y == 0)).sum())
    fn, tn = int((~declined & (y == 1)).sum()), int((~declined & (y == 0)).sum())
    matrix = figures[("cutoff_informedness", PERFORMANCE, "")]
    assert (matrix.params["tp"], matrix.params["fp"], matrix.params["fn"]) == (tp, fp, fn)
    assert matrix.value == pytest.approx(tp / (tp + fn) + tn / (tn + fp) - 1)
    assert figures[("expected_cost", PERFORMANCE, "")].value == pytest.approx(
        (5 * fn + fp) / len(cohort)
    )
    current = book[book["score_date"].map(plan_run(model, as_of).current.__contains__)]
    assert figures[("approval_rate", "current", "")].value == pytest.approx(
        (current["pd_true"] < 0.12).mean()
    )
    # ECB: S = (AUC_init − AUC) / s_DeLong, p = 1 − Φ(S)
    auc, se = _delong_se(y, p)
    test = figures[("auc_test_p", PERFORMANCE, "")]
    assert test.params["auc"] == pytest.approx(auc, rel=1e-9)
    assert test.params["std_error"] == pytest.approx(se, rel=1e-6)
    assert test.value == pytest.approx(stats.norm.sf((0.8 - auc) / se), rel=1e-6)


def test_a_score_taken_for_a_pd_that_leaves_zero_one_is_reported_not_fatal(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    outcome = run_model(_model(url, "drifted", "pd_drift"), AS_OF[0], store=_store(tmp_path))
    assert outcome.ok, outcome.error  # every other figure is still there
    alert = next(a for a in outcome.alerts if a.rule == "pd_underestimation" and not a.segment)
    assert alert.status == Status.NOT_EVALUABLE
    assert "'pd_drift'" in alert.message
    assert "outside [0, 1]" in alert.message
    assert any(f.name == "ks" and f.value is not None for f in outcome.figures)
    # configured explicitly, the same PD fails the run naming the column
    explicit = _model(url, "explicit", "pd_drift", calibration={"enabled": True})
    (tmp_path / "explicit").mkdir()
    failed = run_model(explicit, AS_OF[0], store=_store(tmp_path / "explicit"))
    assert not failed.ok
    assert "'pd_drift' (columns.score)" in (failed.error or "")


def test_grades_read_from_a_column_are_tested_in_their_configured_order(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    """``grades: {column, order}``: each loan's grade is read from its column (here a rating
    letter given from the PD), tested per grade against scipy, listed best first; a loan
    with no rating or one outside the scale is tested in a grade of its own after them."""
    _, book = book_url
    edges = [0.02, 0.05, 0.1, 0.2]
    letters = np.array(["A", "B", "C", "D", "E"], dtype=object)
    rating = letters[np.searchsorted(edges, book["pd_true"], side="left")]
    rating[::97], rating[3::101] = "X", None
    rated = book.assign(rating=rating)
    rated_url = f"sqlite:///{tmp_path / 'rated.db'}"
    write_loans(rated_url, rated)
    order = ["A", "B", "C", "D", "E"]
    model = _model(
        rated_url, "rated", "pd_true", calibration={"grades": {"column": "rating", "order": order}}
    )
    as_of = AS_OF[3]
    outcome = run_model(model, as_of, store=_store(tmp_path))
    assert outcome.ok, outcome.error
    grades = [f for f in outcome.figures if f.name == "grade_jeffreys_p" and not f.segment]
    shown = [f.variable for f in sorted(grades, key=lambda f: f.params["grade"])]
    assert shown == [*order, "missing", "unseen"]
    cohort = _cohort(rated, model, as_of)
    texts = cohort["rating"].map(
        lambda r: "missing" if pd.isna(r) else r if r in order else "unseen"
    )
    assert (texts == "unseen").sum() > 0
    assert (texts == "missing").sum() > 0
    for figure in grades:
        part = cohort[texts == figure.variable]
        n, d, p = len(part), int(part["default_12m"].sum()), part["pd_true"].mean()
        assert figure.params["mean_pd"] == pytest.approx(p, rel=1e-12)
        assert figure.value == pytest.approx(stats.beta.cdf(p, d + 0.5, n - d + 0.5), rel=1e-9)


def test_exposure_weighted_figures_match_numpy_on_the_loans(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    """With a weight: the exposure-weighted mean PD, default rate and Brier score, and the
    Jeffreys test on Kish's effective number of loans n_eff = (Σw)² / Σw²."""
    url, book = book_url
    model = _model(url, "weighted", "pd_true")
    model = model.model_copy(
        update={"columns": model.columns.model_copy(update={"weight": "exposure"})}
    )
    as_of = AS_OF[4]
    outcome = run_model(model, as_of, store=_store(tmp_path))
    assert outcome.ok, outcome.error
    got = {f.name: f for f in outcome.figures if not f.segment and not f.variable}
    cohort = _cohort(book, model, as_of)
    w = cohort["exposure"].to_numpy()
    y = cohort["default_12m"].to_numpy(float)
    p = cohort["pd_true"].to_numpy()
    mean_pd, rate = np.average(p, weights=w), np.average(y, weights=w)
    n_eff = w.sum() ** 2 / (w**2).sum()
    d_eff = rate * n_eff
    assert got["mean_pd_exposure"].value == pytest.approx(mean_pd, rel=1e-9)
    assert got["default_rate_exposure"].value == pytest.approx(rate, rel=1e-9)
    jeffreys = got["jeffreys_p_exposure"]
    assert jeffreys.params["n_effective"] == pytest.approx(n_eff, rel=1e-9)
    assert jeffreys.value == pytest.approx(
        stats.beta.cdf(mean_pd, d_eff + 0.5, n_eff - d_eff + 0.5), rel=1e-7
    )
    assert got["brier_exposure"].value == pytest.approx(
        np.average((y - p) ** 2, weights=w), rel=1e-9
    )
    # the number-weighted figures stay number-weighted
    assert got["brier"].value == pytest.approx(np.mean((y - p) ** 2), rel=1e-9)


def test_a_cutoff_with_segments_runs_when_the_cohort_has_no_loans(tmp_path: Path) -> None:
    """Regression: a new model's first months, whose performance cohort is still empty, failed
    with KeyError ('performance', 'score_cutoff', 'channel=branch'): the cut-off's bins were
    read from the segment's cohort table."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=3, n=2000, weighted=False))
    model = model_config(url, weighted=False, calibration={"cutoff": 0.2})  # cohort: 12 months
    as_of = dt.date(2025, 3, 31)  # loans from 2024-12-15: none scored a year earlier
    outcome = run_model(model, as_of, store=_store(tmp_path))
    assert outcome.ok, outcome.error
    figures = {(f.name, f.population, f.segment): f for f in outcome.figures}
    segments = {s for (name, _, s) in figures if name == "approval_rate" and s}
    assert segments >= {"channel=branch", "channel=web"}
    for segment in ("", *segments):
        now = figures[("approval_rate", "current", segment)]
        assert now.value is not None  # the current population's approval rate is measured
        cohort = figures.get(("accepted_bad_rate", PERFORMANCE, segment))
        assert cohort is None or cohort.value is None  # no cohort: not available, never 0
