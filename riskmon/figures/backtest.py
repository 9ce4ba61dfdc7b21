"""Back-testing of LGD, CCF and EAD models (ECB instructions for reporting the validation
results of internal models, 2019, §2.6–2.9): the estimates of the facilities whose recovery
closed in the observation period against their realised values, per ECB segment of the
estimate and for the portfolio (figures in :mod:`riskmon.figures._backtest_figures`).

Computed from one joint table (estimate segment × realised segment) whose cells carry N, Σd,
Σd², Σ EAD, Σ EAD·E, Σ EAD·R and Σ EAD·|d|, which the collect pass sums where the facilities
live; nothing here reads a facility.

Rules (levels in ``thresholds.rules``; defaults: the OeNB/FMA traffic lights for p-values,
amber < 0.05 and red < 0.001; the industry PSI bands 0.10 / 0.25; a loss shortfall of 5 % /
10 %, riskmon's own): ``backtest_underestimation`` (the portfolio, per segment),
``backtest_underestimation_grade`` (each ECB segment, Holm-adjusted across them as the PD grade
tests are), ``gauc_deterioration``, ``estimate_psi`` and ``loss_shortfall``. Fewer closed
recoveries than ``backtest.min_closed`` are NOT_EVALUABLE, saying so.

Noise: ``gauc_deterioration`` judges the ECB's test when the initial gAUC is configured, and,
when it is the frozen baseline's (a sample's estimate with its own standard error), the test of
the two samples' difference; a loss shortfall whose segment's t-test finds no under-estimation,
and an estimate PSI that two samples of one distribution reach with p ≥ 5 %, are within noise
(at most ``thresholds.within_noise``, as a PSI below its critical value is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from riskmon.config import Thresholds
from riskmon.figures._backtest_figures import compute as compute_figures
from riskmon.figures._backtest_figures import freeze
from riskmon.figures._backtest_section import section
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Headline,
    HistoryColumn,
    Judge,
    Rule,
    Section,
    band_levels,
    banded,
    describe_p,
    where,
    within_noise,
)
from riskmon.figures._formulas import BACKTEST_FORMULAS
from riskmon.figures._views import RunTables
from riskmon.figures.calibration import holm
from riskmon.metrics import CCF_QUANTILES
from riskmon.records import ALL, BASELINE, PERFORMANCE, BinRecord, FigureRecord, Status

#: the default levels of each rule (p-values: OeNB/FMA, *Rating Models and Validation*)
P_LEVELS = {"amber": 0.05, "red": 0.001}
PSI_LEVELS = {"amber": 0.10, "red": 0.25}
SHORTFALL_LEVELS = {"amber": 0.05, "red": 0.10}
#: an estimate PSI this likely between two samples of one distribution is within noise
NOISE_P = 0.05


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    return compute_figures(tables), []


def _levels(rule: str, defaults: dict[str, float]) -> Callable[[Thresholds], dict[str, Any]]:
    def levels(thresholds: Thresholds) -> dict[str, Any]:
        return thresholds.levels_of(rule, dict(defaults))

    return levels


def _p_status(p: float, levels: dict[str, Any]) -> Status:
    return (
        Status.RED if p < levels["red"] else Status.AMBER if p < levels["amber"] else Status.GREEN
    )


def _segments(judge: Judge) -> list[str]:
    return sorted({f.segment for f in judge.figures.named("backtest_n")})


def _too_few(judge: Judge, segment: str, variable: str = "") -> str | None:
    n = judge.figures.get("backtest_n", PERFORMANCE, variable=variable, segment=segment)
    if n is None:
        return f"no facility{where(variable, segment)}"
    least = int(n.params.get("min_closed", 0))
    count = 0 if n.value is None else int(n.value)
    if count < least:
        return f"only {count} closed recoveries{where(variable, segment)} (minimum {least})"
    return None


def _judged(
    judge: Judge, rule: str, name: str, levels: dict[str, Any], segment: str, missing: str
) -> FigureRecord | None:
    """The portfolio figure ``name`` a rule judges in ``segment``; None, with the rule
    NOT_EVALUABLE and why, when it is not available or too few recoveries closed."""
    figure = judge.figures.get(name, PERFORMANCE, segment=segment)
    few = _too_few(judge, segment)
    if figure is None or figure.value is None or few:
        why = few or (figure.reason if figure else None) or missing
        judge.add(rule, Status.NOT_EVALUABLE, None, levels, why, segment=segment)
        return None
    return figure


def _judge_portfolio(judge: Judge, _: str) -> None:
    rule = "backtest_underestimation"
    levels = _levels(rule, P_LEVELS)(judge.thresholds)
    for segment in _segments(judge):
        figure = _judged(judge, rule, "backtest_p", levels, segment, "no t-test")
        if figure is None or figure.value is None:
            continue
        est = judge.figures.value("backtest_mean_estimate", PERFORMANCE, segment=segment)
        real = judge.figures.value("backtest_mean_realised", PERFORMANCE, segment=segment)
        sides = "two-sided" if figure.params.get("alternative") == "two-sided" else "one-sided"
        message = (
            f"mean realised {_pct(real)} against a mean estimate of {_pct(est)}"
            f"{where('', segment)}: t-test p = {figure.value:.3g} ({sides})"
        )
        status = _p_status(figure.value, levels)
        judge.add(rule, status, figure.value, levels, message, segment=segment)


def _judge_grades(judge: Judge, _: str) -> None:
    rule = "backtest_underestimation_grade"
    levels = _levels(rule, P_LEVELS)(judge.thresholds)
    grades = [
        f
        for f in judge.figures.named("backtest_p", population=PERFORMANCE, segment=ALL)
        if f.variable
    ]
    tested = [f for f in grades if f.value is not None and not _too_few(judge, ALL, f.variable)]
    adjusted = holm([float(f.value or 0.0) for f in tested])
    chosen = levels | {"adjustment": "Holm", "grades_tested": len(tested)}
    whole = judge.figures.get("backtest_n", PERFORMANCE)
    kind = "grade" if whole is not None and whole.params.get("classes") == "grades" else "segment"
    for f, p_holm in zip(tested, adjusted, strict=True):
        message = (
            f"{kind} {f.variable}: t-test p {f.value:.3g}, {p_holm:.3g} after Holm over "
            f"{len(tested)} {kind}s"
        )
        status = _p_status(p_holm, levels)
        judge.add(rule, status, p_holm, chosen, message, variable=f.variable)
    for f in grades:
        if f not in tested:
            why = _too_few(judge, ALL, f.variable) or f.reason or "no t-test"
            judge.add(rule, Status.NOT_EVALUABLE, None, chosen, why, variable=f.variable)


def _shortfall_noise(judge: Judge, found: FigureRecord, segment: str) -> str | None:
    """Why a loss shortfall is within noise: the segment's realised values do not exceed the
    estimates significantly (the t-test's p at or above the amber level)."""
    p = judge.figures.value("backtest_p", PERFORMANCE, segment=segment)
    amber = _levels("backtest_underestimation", P_LEVELS)(judge.thresholds)["amber"]
    if p is None or p < amber:
        return None
    return f"the t-test finds no under-estimation, p = {p:.3g}"


def _psi_noise(judge: Judge, found: FigureRecord, segment: str) -> str | None:
    """Why an estimate PSI is within noise: two samples of one distribution would differ as
    much with probability ``noise_p`` (at or above 5 %)."""
    noise_p = found.params.get("noise_p")
    if noise_p is None or noise_p < NOISE_P:
        return None
    return f"as large between two samples of one distribution with p = {noise_p:.3g}"


def _judge_band(
    rule: str,
    figure: str,
    defaults: dict[str, float],
    noise: Callable[[Judge, FigureRecord, str], str | None],
) -> Any:
    def judge_it(judge: Judge, _: str) -> None:
        levels = _levels(rule, defaults)(judge.thresholds)
        for segment in _segments(judge):
            found = _judged(judge, rule, figure, levels, segment, f"no {figure}")
            if found is None or found.value is None:
                continue
            value = float(found.value)
            status = banded(value, levels["amber"], levels["red"])
            message = f"{figure.replace('_', ' ')}{where('', segment)} = {value:.4g}"
            within = noise(judge, found, segment) if status != Status.GREEN else None
            if within is not None:
                status, capped = within_noise(status, judge.thresholds)
                message += f" (within sampling noise: {within}{capped})"
            judge.add(rule, status, value, levels, message, segment=segment)

    return judge_it


def _judge_gauc(judge: Judge, _: str) -> None:
    """``gauc_deterioration`` on the ECB's test, whose statistic takes the initial gAUC as
    known; when the initial gAUC is the frozen baseline's, itself a sample's estimate, on the
    test that adds the baseline's standard error (``p_two_samples``): the ECB's p alone would
    flag an unchanged model whenever its initial sample happened to rank well."""
    rule = "gauc_deterioration"
    levels = _levels(rule, P_LEVELS)(judge.thresholds)
    for segment in _segments(judge):
        found = _judged(judge, rule, "gauc_test_p", levels, segment, "no gauc_test_p")
        if found is None or found.value is None:
            continue
        gauc = judge.figures.value("gauc", PERFORMANCE, segment=segment)
        initial = float(found.params["initial_gauc"])
        both = found.params.get("p_two_samples")
        value = float(found.value if both is None else both)
        message = (
            f"gAUC{where('', segment)} {gauc:.3f} against the initial {initial:.3f}: "
            f"ECB test p = {found.value:.3g}"
        )
        if both is not None:
            message += f", {both:.3g} with the initial sample's own error (judged)"
        judge.add(rule, _p_status(value, levels), value, levels, message, segment=segment)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _rule(name: str, figure: str, judge: Any, defaults: dict[str, float], finding: str) -> Rule:
    p = defaults is P_LEVELS
    return Rule(
        name,
        "run",
        figure,
        _levels(name, defaults),
        describe_p if p else band_levels,
        judge,
        PERFORMANCE,
        finding=finding,
        worse="lower" if p else "higher",
        baseline=("gauc",) if name == "gauc_deterioration" else (),
    )


_QUANTILE_WORDS = {0.0: "minimum", 1.0: "maximum"} | {
    q: f"{q:.0%}" for _, q in CCF_QUANTILES if 0 < q < 1
}
_SPECS = (
    ("backtest_n", "closed recoveries back-tested", True),
    ("backtest_mean_estimate", "mean estimate", False),
    (
        "backtest_mean_estimate_without_downturn",
        "mean estimate without its downturn component (columns.downturn)",
        False,
    ),
    ("backtest_mean_realised", "mean realised value", False),
    ("backtest_t", "t statistic of realised − estimated", False),
    ("backtest_variance", "variance of realised − estimated", False),
    ("backtest_p", "t-test p-value (one-sided; two-sided for an ELBE)", False),
    ("loss_shortfall", "loss shortfall (EAD-weighted)", False),
    ("mad", "mean absolute deviation (EAD-weighted)", False),
    ("gauc", "generalised AUC", False),
    ("gauc_se", "standard error of the gAUC", False),
    ("gauc_test_p", "gAUC test p-value against the initial gAUC", False),
    ("estimate_psi", "PSI of the estimates over the ECB segments", False),
    ("excluded_share", "share of facilities not back-tested", False),
    ("exposure_weighted_mean", "exposure-weighted mean realised value (CCF, EAD)", False),
    ("floored_share", "share of realised CCFs below 0, floored at 0 (CCF)", False),
    (
        "ead_approach_share",
        "share of facilities under the EAD approach, not back-tested (CCF, M_EAD)",
        False,
    ),
    *(
        (
            name,
            f"realised CCF's {'quantile ' if 0 < q < 1 else ''}{_QUANTILE_WORDS[q]} (CCF)",
            False,
        )
        for name, q in CCF_QUANTILES
    ),
)

FAMILY = Family(
    name="backtest",
    order=200,
    figures=(
        *(FigureSpec(n, PERFORMANCE, "segment", label, count=c) for n, label, c in _SPECS),
        FigureSpec("backtest_n", BASELINE, "segment", "initial sample's facilities", count=True),
        FigureSpec("gauc", BASELINE, "segment", "initial sample's generalised AUC"),
    ),
    compute=compute,
    freeze=freeze,
    kinds=frozenset({"lgd", "ccf", "ead"}),
    rules=(
        _rule(
            "backtest_underestimation",
            "estimate against realised (portfolio)",
            _judge_portfolio,
            P_LEVELS,
            "The estimates are too low for the realised values",
        ),
        _rule(
            "backtest_underestimation_grade",
            "estimate against realised (grade, or ECB segment)",
            _judge_grades,
            P_LEVELS,
            "Grades (or ECB segments of the estimate) whose estimates are too low for their "
            "realised values",
        ),
        _rule(
            "gauc_deterioration",
            "generalised AUC against the initial",
            _judge_gauc,
            P_LEVELS,
            "The estimates rank the realised values worse than at the initial validation",
        ),
        _rule(
            "estimate_psi",
            "estimates' distribution against the baseline",
            _judge_band("estimate_psi", "estimate_psi", PSI_LEVELS, _psi_noise),
            PSI_LEVELS,
            "The estimates' distribution has shifted from the initial sample's",
        ),
        _rule(
            "loss_shortfall",
            "loss shortfall (EAD-weighted)",
            _judge_band("loss_shortfall", "loss_shortfall", SHORTFALL_LEVELS, _shortfall_noise),
            SHORTFALL_LEVELS,
            "The estimates fall short of the realised losses",
        ),
    ),
    sections=(Section("backtest", "Back-testing", "backtest", 33, "_backtest.html", section),),
    headlines=(
        Headline(
            110,
            "backtest_n",
            "Closed recoveries back-tested",
            "backtest_n",
            PERFORMANCE,
            format="count",
            with_baseline=False,
        ),
        Headline(
            112,
            "backtest_mean_estimate",
            "Mean estimate",
            "backtest_mean_estimate",
            PERFORMANCE,
            format="percent",
            with_baseline=False,
        ),
        Headline(
            114,
            "backtest_mean_realised",
            "Mean realised value",
            "backtest_mean_realised",
            PERFORMANCE,
            format="percent",
            with_baseline=False,
        ),
        Headline(
            116,
            "backtest_p",
            "Estimate too low: t-test p",
            "backtest_p",
            PERFORMANCE,
            rule="backtest_underestimation",
            with_baseline=False,
        ),
        Headline(118, "gauc", "Generalised AUC", "gauc", PERFORMANCE, rule="gauc_deterioration"),
        Headline(
            120,
            "loss_shortfall",
            "Loss shortfall (EAD-weighted)",
            "loss_shortfall",
            PERFORMANCE,
            format="percent",
            rule="loss_shortfall",
            with_baseline=False,
        ),
        Headline(
            122,
            "estimate_psi",
            "PSI of the estimates",
            "estimate_psi",
            PERFORMANCE,
            rule="estimate_psi",
            with_baseline=False,
        ),
    ),
    history=(
        HistoryColumn(110, "backtest_n", "", PERFORMANCE),
        HistoryColumn(112, "backtest_mean_estimate", "", PERFORMANCE),
        HistoryColumn(114, "backtest_mean_realised", "", PERFORMANCE),
        HistoryColumn(116, "backtest_p", "", PERFORMANCE),
        HistoryColumn(118, "gauc", "", PERFORMANCE),
        HistoryColumn(120, "loss_shortfall", "", PERFORMANCE),
    ),
    default_population=dict.fromkeys(("backtest_p", "gauc", "loss_shortfall"), PERFORMANCE),
    formulas=BACKTEST_FORMULAS,
)
