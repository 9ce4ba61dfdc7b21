"""Vintage curves: each origination month's cumulative default rate by months on book against
the curve its PDs imply, so that a model whose loans default faster than their PDs say is
flagged months before the 12-month outcome matures (figures in
:mod:`riskmon.figures._vintage_figures`; the report draws them in the early-warning section).

Read when ``columns.default_date`` is set (and ``columns.delinquency`` for the ever-30+/60+/90+
curves). Figures (current population, per vintage and segment): ``vintage_cdr`` (the
cumulative default rate at the latest MOB reached; params: the curves) and
``vintage_defaults`` (the one-sided p-value of the defaults by the latest of
``vintages.mobs`` reached, against σ(m)·ΣPD, variance σΣp − σ²Σp²). Baseline:
``default_timing`` (σ(m), the share of 12-month defaults observed by MOB m on the development
window's vintages, in its params; a new baseline version refreshes it).

Rule ``vintage_defaults`` (p-value traffic lights, ``thresholds.rules.vintage_defaults``,
default amber 0.05 and red 0.001; in the run's multiple-testing control with the other
p-value rules): a vintage's realised curve lies above its expected one.
"""

from __future__ import annotations

from typing import Any

from riskmon.config import PValueLevels, Thresholds
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Formula,
    Judge,
    Parameter,
    Rule,
    describe_p,
    p_status,
    where,
)
from riskmon.figures._vintage_figures import DEFAULT_TIMING, compute, freeze
from riskmon.records import ALL, BASELINE, CURRENT, Status

#: the levels of ``vintage_defaults`` unless ``thresholds.rules.vintage_defaults`` sets them
VINTAGE_LEVELS = {"amber": 0.05, "red": 0.001}


def _levels(t: Thresholds) -> dict[str, Any]:
    return dict(t.levels_of("vintage_defaults", VINTAGE_LEVELS))


def _judge(judge: Judge, _: str) -> None:
    levels = _levels(judge.thresholds)
    for f in judge.figures.named("vintage_defaults", population=CURRENT):
        x = f.params
        small = f.segment != ALL and x.get("n", 0) < judge.thresholds.min_segment_loans
        if f.value is None or small:
            reason = f.reason or f"{x.get('n', 0):.0f} loans (fewer than min_segment_loans)"
            message = f"vintage {f.variable}{where('', f.segment)}: {reason}"
            judge.add(
                "vintage_defaults",
                Status.NOT_EVALUABLE,
                None,
                levels,
                message,
                variable=f.variable,
                segment=f.segment,
            )
            continue
        status = p_status(f.value, PValueLevels(**levels))
        message = (
            f"vintage {f.variable}{where('', f.segment)}: {x['observed']:.2%} defaulted by MOB "
            f"{x['mob']} against {x['expected']:.2%} the PDs imply (z = {x['z']:.2f}, p = "
            f"{f.value:.3g})"
        )
        judge.add(
            "vintage_defaults",
            status,
            f.value,
            levels,
            message,
            variable=f.variable,
            segment=f.segment,
        )


FAMILY = Family(
    name="vintages",
    order=36,
    figures=(
        FigureSpec("vintage_cdr", CURRENT, "variable", "cumulative default rate of a vintage"),
        FigureSpec("vintage_defaults", CURRENT, "variable", "vintage defaults p-value"),
        FigureSpec(DEFAULT_TIMING, BASELINE, "run", "default timing σ(m) of the development"),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            "vintage_defaults",
            "run",
            "vintage defaults above the PDs' curve",
            _levels,
            describe_p,
            _judge,
            tested="p",
            baseline=(DEFAULT_TIMING,),
            finding=(
                "Vintages default faster than their PDs imply: the default rate is rising "
                "before the 12-month outcome matures"
            ),
        ),
    ),
    parameters=(Parameter(140, "vintage_defaults", "mob", "vintage judged at MOB"),),
    formulas=(
        Formula(
            330,
            "Vintage curve",
            "CDR<sub>v</sub>(m) = defaulted by MOB m / loans of vintage v; E[CDR<sub>v</sub>(m)]"
            " = σ(m)·ΣPD / n<sub>v</sub>, σ(m) the share of 12-month defaults observed by MOB m "
            "on the development's vintages; z = (D − σΣp) / √(σΣp − σ²Σp²), one-sided",
        ),
    ),
)
