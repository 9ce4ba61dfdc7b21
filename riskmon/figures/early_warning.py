"""Early warning: what the PDs imply for loans whose outcome has not matured, and whether the
outcome, once it has, behaves as the PDs said (figures in
:mod:`riskmon.figures._expected_figures`, the report section in
:mod:`riskmon.figures._early_warning_section`; the rule and the declaration here).

Figures, per segment, for the current population (every loan scored in the stability window,
none of whose outcomes has matured; a monthly run's current population is the month's cohort,
so the history holds every monthly cohort still inside the performance window) and, recomputed
from its PD sums, for the performance cohort: ``expected_default_rate``, ``expected_defaults``
(params: the Poisson-binomial interval, exact up to ``exact_max_loans`` loans, normal beyond),
``expected_defaults_sd``, ``expected_auc`` (pairs i ≠ j, ties ½), ``expected_ks`` and
``expected_gini``. For the cohort: ``auc_vs_expected`` (realised − expected AUC on the
PD-ranked bins, params its standard error) and ``auc_change_unexplained`` (the AUC's change
since the baseline less the part the population explains: the expected AUC's change).

Rule ``concept_drift`` (p-value traffic lights, ``thresholds.rules.concept_drift``, default
amber 0.05 and red 0.001): the unexplained part is significant (two-sided z test on the
DeLong standard errors of the cohort's and the baseline's AUC).
"""

from __future__ import annotations

from typing import Any

from riskmon.config import PValueLevels, Thresholds
from riskmon.figures._early_warning_section import section
from riskmon.figures._expected_figures import EXPECTED, PD_BINS_AUC, compute, freeze
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Formula,
    Headline,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    Section,
    describe_p,
    p_status,
    where,
)
from riskmon.records import BASELINE, CURRENT, PERFORMANCE, Status

#: the levels of ``concept_drift`` unless ``thresholds.rules.concept_drift`` sets them
CONCEPT_DRIFT_LEVELS = {"amber": 0.05, "red": 0.001}

_LABELS = {
    "expected_default_rate": "expected default rate (from the PDs)",
    "expected_defaults": "expected defaults (Σ PD)",
    "expected_defaults_sd": "standard deviation of the defaults (Poisson-binomial)",
    "expected_auc": "expected AUC (from the PDs)",
    "expected_ks": "expected KS (from the PDs)",
    "expected_gini": "expected Gini (from the PDs)",
}


def _levels(t: Thresholds) -> dict[str, Any]:
    return dict(t.levels_of("concept_drift", CONCEPT_DRIFT_LEVELS))


def _judge(judge: Judge, segment: str) -> None:
    levels = _levels(judge.thresholds)
    figure = judge.figures.get("auc_change_unexplained", PERFORMANCE, segment=segment)
    if figure is None:  # the model has no PD
        return
    p = figure.params.get("p")
    if figure.value is None or p is None:
        reason = figure.reason or "no standard error of the AUCs"
        judge.add("concept_drift", Status.NOT_EVALUABLE, None, levels, reason, segment=segment)
        return
    too_few = judge.too_few_bads(segment)
    if too_few is not None:
        judge.add("concept_drift", Status.NOT_EVALUABLE, None, levels, too_few, segment=segment)
        return
    x = figure.params
    status = p_status(float(p), PValueLevels(**levels))
    judge.add(
        "concept_drift", status, float(p), levels, _message(x, segment, status), segment=segment
    )


def _message(x: dict[str, Any], segment: str, status: Status) -> str:
    """What the change of the AUC since the baseline is, in words."""
    head = (
        f"AUC on the PD-ranked bins{where('', segment)} {x['baseline_realised']:.3f} at the "
        f"baseline, {x['realised']:.3f} now ({x['change']:+.3f}); the population explains "
        f"{x['explained']:+.3f} (its expected AUC moved from {x['baseline_expected']:.3f} to "
        f"{x['expected']:.3f}), {x['change'] - x['explained']:+.3f} is unexplained "
        f"(p = {x['p']:.3g})"
    )
    if status == Status.GREEN:
        return head + ": the change is what the population explains"
    return head + (
        ": the relationship between score and outcome changed, or the PDs no longer rank the "
        "loans as they did"
    )


_FORMULAS = (
    Formula(
        300,
        "Expected defaults and default rate",
        "E[D] = Σp, Var[D] = Σp(1 − p) (Poisson-binomial, PDs assumed calibrated); interval: "
        "exact quantiles up to <em>exact_max_loans</em> loans, E[D] ± z·sd beyond",
    ),
    Formula(
        310,
        "Expected AUC, KS, Gini",
        "E[AUC] = (Σ<sub>k riskier than l</sub> D<sub>k</sub>G<sub>l</sub> + ½Σ(D<sub>k</sub>"
        "G<sub>k</sub> − S<sub>k</sub>)) / (ΣD·ΣG − ΣS) over the bins ranked by mean PD, "
        "D = Σp, G = n − Σp, S = Σp(1 − p) (pairs i ≠ j, ties ½); E[KS] = max |F<sub>D</sub> − "
        "F<sub>G</sub>| of the expected counts; E[Gini] = 2·E[AUC] − 1",
    ),
    Formula(
        320,
        "Concept drift",
        "unexplained = (AUC<sub>now</sub> − AUC<sub>base</sub>) − (E[AUC]<sub>now</sub> − "
        "E[AUC]<sub>base</sub>), both AUCs on the PD-ranked bins; z = unexplained / "
        "√(s<sub>now</sub>² + s<sub>base</sub>²), DeLong standard errors, two-sided",
    ),
)

FAMILY = Family(
    name="early_warning",
    order=35,
    figures=(
        *(FigureSpec(name, CURRENT, "segment", label) for name, label in _LABELS.items()),
        *(
            FigureSpec(name, PERFORMANCE, "segment", label + ", of the cohort")
            for name, label in _LABELS.items()
        ),
        FigureSpec("auc_vs_expected", PERFORMANCE, "segment", "realised − expected AUC"),
        FigureSpec("auc_change_unexplained", PERFORMANCE, "segment", "AUC change not explained"),
        FigureSpec("expected_auc", BASELINE, "segment", "expected AUC of the development"),
        FigureSpec(PD_BINS_AUC, BASELINE, "segment", "development AUC on the PD-ranked bins"),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            "concept_drift",
            "segment",
            "AUC change not explained by the population",
            _levels,
            describe_p,
            _judge,
            PERFORMANCE,
            tested="p",
            baseline=("expected_auc", PD_BINS_AUC),
            finding=(
                "The AUC changed more than the population explains: the relationship between "
                "score and outcome changed, or the PDs no longer rank the loans"
            ),
        ),
    ),
    sections=(
        Section(
            "early_warning", "Early warning", "early-warning", 36, "_early_warning.html", section
        ),
    ),
    headlines=(
        Headline(
            66,
            "expected_default_rate",
            "Expected default rate (current population)",
            "expected_default_rate",
            CURRENT,
            format="percent",
            with_baseline=False,
        ),
    ),
    history=(
        HistoryColumn(66, "expected_default_rate", "", CURRENT),
        HistoryColumn(67, "expected_auc", "", CURRENT),
    ),
    parameters=(
        Parameter(130, "expected_defaults", "exact_max_loans", "exact Poisson-binomial up to"),
    ),
    default_population=dict.fromkeys(EXPECTED, CURRENT),
    formulas=_FORMULAS,
)
