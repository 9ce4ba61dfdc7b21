"""Calibration: are the PDs right? Observed default rates against mean PDs, per grade and for
the portfolio of the performance cohort (the figures are computed in
:mod:`riskmon.figures._calibration_figures`, the report section in
:mod:`riskmon.figures._calibration_section`; the rules and the declaration here).

Computed from the PD sums of the grades (:class:`~riskmon.metrics.PdTable`), which the collect
pass takes in the same ``GROUP BY`` as the counts; nothing here reads a loan.

Figures (performance cohort, per segment): ``calibration_n`` and ``calibration_defaults``
(loans and defaults tested), ``mean_pd``, ``default_rate``, ``jeffreys_p`` (ECB: the Beta(D+½,
N−D+½) CDF at the mean PD; params: the interval, ``p_over`` for over-estimation),
``binomial_p`` (P(X ≥ D); params: ``p_over``, ``critical_defaults``, and with a default
correlation ρ the Vasicek-adjusted ``p_correlated`` and its critical count),
``hosmer_lemeshow_p`` (χ² over the grades with K degrees of freedom, grades with fewer than
``calibration.min_expected_defaults`` expected defaults merged with a neighbour, grades whose
mean PD is 0 or 1 left out: params ``left_out`` and ``left_out_reason``, only then), ``brier`` and
``spiegelhalter_p``; with a weight, ``mean_pd_exposure``, ``default_rate_exposure``,
``jeffreys_p_exposure`` (on Kish's effective number of loans) and ``brier_exposure``. Per
grade (variable: the grade's label): ``grade_jeffreys_p`` with the grade's N, D, rates and
binomial p-values in its params, and the grades as ``calibration`` bins.

Rules (p-value traffic lights, ``thresholds.calibration`` and ``thresholds.over_estimation``):
``pd_underestimation`` and ``pd_overestimation`` for the portfolio (per segment);
``pd_underestimation_grade`` and ``pd_overestimation_grade`` per grade (whole population),
judged on Holm-adjusted p-values so that K grades together keep the stated levels.
"""

from __future__ import annotations

from typing import Any

from riskmon.config import Thresholds
from riskmon.figures._calibration_figures import compute
from riskmon.figures._calibration_section import section
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Headline,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    Section,
    describe_p,
    p_levels,
    p_status,
    where,
)
from riskmon.figures._formulas import CALIBRATION_FORMULAS
from riskmon.records import ALL, PERFORMANCE, FigureRecord, Status

# --------------------------------------------------------------------------- rules


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjustment of ``pvalues`` (same order): the family-wise levels of K
    tests judged together."""
    k = len(pvalues)
    adjusted = [0.0] * k
    running = 0.0
    for rank, i in enumerate(sorted(range(k), key=lambda j: pvalues[j])):
        running = max(running, min(1.0, (k - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _judge_portfolio(judge: Judge, segment: str, *, over: bool) -> None:
    rule = "pd_overestimation" if over else "pd_underestimation"
    levels = judge.thresholds.over_estimation if over else judge.thresholds.calibration
    thresholds = p_levels(levels)
    figure = judge.figures.get("jeffreys_p", PERFORMANCE, segment=segment)
    if figure is None:  # the model has no PD: no calibration rule applies
        return
    p = figure.params.get("p_over") if over else figure.value
    if p is None:
        reason = figure.reason or "no p-value"
        judge.add(rule, Status.NOT_EVALUABLE, None, thresholds, reason, segment=segment)
        return
    rate = judge.figures.value("default_rate", PERFORMANCE, segment=segment)
    mean_pd = judge.figures.value("mean_pd", PERFORMANCE, segment=segment)
    side = "below" if over else "above"
    message = (
        f"default rate{where('', segment)} {_pct(rate)} against a mean PD of {_pct(mean_pd)}: "
        f"Jeffreys p = {p:.3g} that it is this far {side} the PD by chance"
    )
    judge.add(rule, p_status(float(p), levels), float(p), thresholds, message, segment=segment)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _p(figure: FigureRecord, over: bool) -> float | None:
    """A grade's Jeffreys p-value of under-estimation, or of over-estimation."""
    value = figure.params.get("jeffreys_p_over") if over else figure.value
    return None if value is None else float(value)


def _judge_grades(judge: Judge, _: str, *, over: bool) -> None:
    rule = "pd_overestimation_grade" if over else "pd_underestimation_grade"
    levels = judge.thresholds.over_estimation if over else judge.thresholds.calibration
    grades = list(judge.figures.named("grade_jeffreys_p", population=PERFORMANCE, segment=ALL))
    tested = [(f, float(p)) for f in grades if (p := _p(f, over)) is not None]
    adjusted = holm([p for _, p in tested])
    thresholds = p_levels(levels) | {"adjustment": "Holm", "grades_tested": len(tested)}
    side = "below" if over else "above"
    for (f, p), p_holm in zip(tested, adjusted, strict=True):
        message = (
            f"grade {f.variable}: default rate {_pct(f.params.get('default_rate'))} against a "
            f"mean PD of {_pct(f.params.get('mean_pd'))} on {f.params.get('n', '?')} loans "
            f"(Jeffreys p {p:.3g}, {p_holm:.3g} after Holm over {len(tested)} grades; {side})"
        )
        status = p_status(p_holm, levels)
        judge.add(rule, status, p_holm, thresholds, message, variable=f.variable)
    for f in grades:
        if _p(f, over) is None:
            reason = f"grade {f.variable}: {f.reason or 'not testable'}"
            judge.add(rule, Status.NOT_EVALUABLE, None, thresholds, reason, variable=f.variable)


#: what a finding of each calibration rule says, by (over-estimation, per grade)
_FINDINGS = {
    (False, False): "The PDs under-estimate the observed default rate",
    (True, False): "The PDs over-estimate the observed default rate (too conservative)",
    (False, True): "Grades whose PD under-estimates their default rate",
    (True, True): "Grades whose PD over-estimates their default rate (too conservative)",
}


def _rule(name: str, scope: Any, figure: str, over: bool, grades: bool) -> Rule:
    def levels(t: Thresholds) -> dict[str, Any]:
        return p_levels(t.over_estimation if over else t.calibration)

    judge = _judge_grades if grades else _judge_portfolio

    def run_judge(j: Judge, where_: str) -> None:
        judge(j, where_, over=over)

    # a grade's p-values are Holm-adjusted within the run already
    return Rule(
        name,
        scope,
        figure,
        levels,
        describe_p,
        run_judge,
        PERFORMANCE,
        tested=None if grades else "p",
        finding=_FINDINGS[over, grades],
        worse="lower",
    )


FAMILY = Family(
    name="calibration",
    order=30,
    figures=(
        FigureSpec(
            "calibration_n", PERFORMANCE, "segment", "loans tested for calibration", count=True
        ),
        FigureSpec(
            "calibration_defaults", PERFORMANCE, "segment", "defaults among them", count=True
        ),
        FigureSpec("mean_pd", PERFORMANCE, "segment", "mean PD of the cohort"),
        FigureSpec("default_rate", PERFORMANCE, "segment", "observed default rate"),
        FigureSpec("jeffreys_p", PERFORMANCE, "segment", "Jeffreys test p-value"),
        FigureSpec("binomial_p", PERFORMANCE, "segment", "binomial test p-value"),
        FigureSpec("hosmer_lemeshow_p", PERFORMANCE, "segment", "Hosmer-Lemeshow p-value"),
        FigureSpec("brier", PERFORMANCE, "segment", "Brier score"),
        FigureSpec("spiegelhalter_p", PERFORMANCE, "segment", "Spiegelhalter test p-value"),
        FigureSpec("mean_pd_exposure", PERFORMANCE, "segment", "exposure-weighted mean PD"),
        FigureSpec(
            "default_rate_exposure", PERFORMANCE, "segment", "exposure-weighted default rate"
        ),
        FigureSpec("jeffreys_p_exposure", PERFORMANCE, "segment", "Jeffreys p, by exposure"),
        FigureSpec("brier_exposure", PERFORMANCE, "segment", "exposure-weighted Brier score"),
        FigureSpec("grade_jeffreys_p", PERFORMANCE, "variable", "Jeffreys p-value of a grade"),
    ),
    compute=compute,
    rules=(
        _rule("pd_underestimation", "segment", "PD under-estimation (portfolio)", False, False),
        _rule("pd_overestimation", "segment", "PD over-estimation (portfolio)", True, False),
        _rule("pd_underestimation_grade", "run", "PD under-estimation (grade)", False, True),
        _rule("pd_overestimation_grade", "run", "PD over-estimation (grade)", True, True),
    ),
    sections=(
        Section("calibration", "Calibration", "calibration", 35, "_calibration.html", section),
    ),
    headlines=(
        Headline(
            62,
            "mean_pd",
            "Mean PD of the cohort",
            "mean_pd",
            PERFORMANCE,
            format="percent",
            rule="pd_underestimation",
            also=("pd_overestimation",),
            with_baseline=False,
        ),
    ),
    history=(
        HistoryColumn(62, "mean_pd", "", PERFORMANCE),
        HistoryColumn(64, "jeffreys_p", "", PERFORMANCE),
    ),
    parameters=(
        Parameter(100, "binomial_p", "default_correlation", "default correlation (binomial test)"),
        Parameter(110, "binomial_p", "confidence", "confidence of the critical default counts"),
        Parameter(
            120, "hosmer_lemeshow_p", "min_expected_defaults", "Hosmer-Lemeshow: fewest expected"
        ),
    ),
    default_population=dict.fromkeys(
        ("mean_pd", "default_rate", "jeffreys_p", "binomial_p", "brier"), PERFORMANCE
    ),
    formulas=CALIBRATION_FORMULAS,
)
