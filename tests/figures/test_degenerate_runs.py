"""Runs on legal but degenerate books that used to fail: grades whose PD is exactly 0 or 1, a
baseline whose every loan has the same score. Each figure that cannot be computed is not
available with its reason; the others match scipy on the loans themselves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from scipy import stats

from riskmon.records import CURRENT, PERFORMANCE, FigureRecord
from riskmon.report import render_run_report
from riskmon.run import run_model

from ..report.htmltree import parse
from ..run.legal_data import AS_OF, Features, book, model
from .books import fresh_store, report_config, write_loans

#: scipy's names of the exact binomial test's one-sided alternatives
SIDES = ("greater", "less")


def _whole(figures: Sequence[FigureRecord], name: str) -> FigureRecord:
    """The figure ``name`` of the whole population (no segment, no variable)."""
    return next(f for f in figures if f.name == name and not f.segment and not f.variable)


def test_grades_whose_pd_is_0_or_1_are_tested_and_left_out_of_hosmer_lemeshow(
    tmp_path: Path,
) -> None:
    """One PD in 13 is exactly 1 (the grade column's default grade) and one in 13 exactly 0
    (its guaranteed grade), at the baseline and in the cohort. The Jeffreys and binomial tests
    are defined on those grades; Hosmer–Lemeshow is not."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    write_loans(url, book({"baseline": "certain_pds", "performance": "certain_pds"}))
    legal = model(url, Features(calibration="column"))
    store = fresh_store(tmp_path)
    outcome = run_model(legal, AS_OF, store=store)
    assert outcome.ok, outcome.error
    grades = {f.variable: f for f in outcome.figures if f.name == "grade_jeffreys_p"}
    certain = {label: g for label, g in grades.items() if g.params["mean_pd"] in (0.0, 1.0)}
    assert {g.params["mean_pd"] for g in certain.values()} == {0.0, 1.0}
    for grade in certain.values():
        d, n, pd = grade.params["defaults"], grade.params["n"], grade.params["mean_pd"]
        assert grade.value == stats.beta(d + 0.5, n - d + 0.5).cdf(pd)
        exact = {side: stats.binomtest(d, n, pd, alternative=side).pvalue for side in SIDES}
        assert grade.params["binomial_p"] == exact["greater"]
        assert grade.params["binomial_p_over"] == exact["less"]
    hl = _whole(outcome.figures, "hosmer_lemeshow_p")
    assert hl.value is not None
    assert sorted(hl.params["left_out"]) == sorted(certain)
    assert "N·p·(1 − p) is 0" in hl.params["left_out_reason"]
    # the grades tested are the others, each pooled or alone: dof at most their number
    assert 1 <= hl.params["dof"] <= len(grades) - len(certain)
    # the report names the grades left out, and why
    page = render_run_report(report_config(store, legal, tmp_path), store, legal.name, AS_OF)
    row = parse(page.read_text(encoding="utf-8")).get("tr", data_figure="hosmer_lemeshow_p")
    assert "left out, mean PD 0 or 1" in row.text()
    assert all(label in row.text() for label in certain)


def test_a_cohort_of_pds_all_0_or_1_has_no_hosmer_lemeshow_and_says_why(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    write_loans(url, book({"performance": "all_certain"}))
    legal = model(url, Features(calibration="edges"))
    outcome = run_model(legal, AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    hl = _whole(outcome.figures, "hosmer_lemeshow_p")
    assert hl.value is None
    assert "PD of 0 or 1" in str(hl.reason)
    # the portfolio's mean PD is neither: its binomial test is scipy's
    n, d, mean_pd = (
        _whole(outcome.figures, name).value
        for name in ("calibration_n", "calibration_defaults", "mean_pd")
    )
    binomial = _whole(outcome.figures, "binomial_p")
    assert binomial.population == PERFORMANCE
    assert binomial.value == pytest.approx(stats.binom.sf(d - 1, n, mean_pd), rel=1e-9)


def test_a_baseline_of_one_score_has_one_grade_and_no_concentration(tmp_path: Path) -> None:
    """Every baseline loan has the same PD: the score's baseline bins are one grade, over which
    no concentration is measured (HI divides by ln K = 0)."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    write_loans(url, book({"baseline": "equal_pds"}))
    outcome = run_model(model(url, Features(weights=True)), AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    rating = {f.name: f for f in outcome.figures if f.name.startswith("rating_")}
    assert set(rating) == {
        "rating_herfindahl",
        "rating_concentration_p",
        "rating_shift_p",
        "rating_herfindahl_exposure",
    }
    for figure in rating.values():
        assert figure.population == CURRENT
        assert figure.value is None
        assert figure.reason == "one grade only: a concentration is measured over 2 grades or more"


def test_no_cost_optimal_cutoff_when_accepting_every_loan_costs_least(tmp_path: Path) -> None:
    """Every cohort loan has the same PD: the only cut-offs decline all of them or none, and at
    5:1 costs declining none is cheaper, 5·D/N per loan. There is no cut-off to report, and the
    figure says why instead of storing nothing."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    loans = book({"performance": "equal_pds"})
    write_loans(url, loans)
    outcome = run_model(model(url, Features(cutoff=True)), AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    cohort = loans[loans["score_date"].map(lambda d: d.month == 6 and d.year == 2024)]
    n, d = len(cohort), int(cohort["bad"].sum())
    best = _whole(outcome.figures, "cost_optimal_cutoff")
    assert best.value is None
    assert best.params["expected_cost"] == pytest.approx(5 * d / n, rel=1e-12)
    cost = best.params["expected_cost"]
    assert best.reason == f"no cut-off: accepting every loan costs least ({cost:.4g} per loan)"


def test_a_baseline_of_one_score_has_no_migration_bandwidth(tmp_path: Path) -> None:
    """The score's baseline bins are one grade: every obligor stays in it, and the bandwidths
    (which divide by the farthest grade an obligor could reach, 0) and the stability test are
    not available, saying so; the obligors re-rated are counted all the same."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    loans = book({"baseline": "equal_pds"})
    write_loans(url, loans)
    legal = model(url, Features(weights=True, migration=True))
    outcome = run_model(legal, AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    june = set(loans.loc[loans["score_date"].map(lambda d: d.year == 2024 and d.month == 6)].index)
    assert june  # the same obligors (ids 0..n-1) are scored in June and December
    rerated = _whole(outcome.figures, "migration_rerated")
    assert rerated.value == len(june) - int(loans.loc[sorted(june), "bad"].sum())
    for name in (
        "migration_mwb_upper",
        "migration_mwb_lower",
        "migration_mwb_upper_exposure",
        "migration_mwb_lower_exposure",
        "migration_stability_p",
    ):
        figure = _whole(outcome.figures, name)
        assert figure.value is None, name
        assert figure.reason == "one grade only: a migration is measured over 2 grades or more"
