"""Cut-off: how the decision at the configured cut-off performs (``calibration.cutoff``).

Loans are declined at the cut-off: with ``higher_is_riskier`` a score at or above it, with
``higher_is_safer`` a score below it. Computed from the score split at the cut-off (the
``score_cutoff`` variable, exact: its one edge is the cut-off itself) and, for the cost-optimal
cut-off, the score's ranking table.

Figures (per segment): ``approval_rate`` of the current population and of the performance
cohort; for the cohort ``accepted_bad_rate``, ``declined_bad_rate`` and ``cutoff_informedness``
(Youden's J, bads positive: declined = predicted bad), with the whole confusion matrix and its
figures (accuracy, precision, recall, F1, MCC, κ, markedness) in its params; with ``costs``,
``expected_cost`` at the cut-off and ``cost_optimal_cutoff`` on the cohort (none, with the
reason and the cost, when accepting every loan costs least). Baseline values
(when the baseline was frozen with the same cut-off) are in the params.

Rules (whole population): ``approval_rate_change`` (rate points against the baseline,
``thresholds.approval_rate_change``) and ``accepted_bad_rate_rise`` (relative rise against the
baseline's development sample, ``thresholds.accepted_bad_rate_rise``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from riskmon.config import Band, Costs
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Judge,
    Rule,
    Section,
    amber_red,
    band_levels,
    banded,
    finite,
    measured,
    ratio,
)
from riskmon.figures._formulas import CUTOFF_FORMULAS
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import CountTable, confusion_figures, cost_optimal_cutoff_from_counts
from riskmon.records import ALL, CURRENT, CUTOFF, PERFORMANCE, FigureRecord, Status


def _declined_bin(riskier: bool) -> int:
    return 1 if riskier else 0


def _approval(table: CountTable, riskier: bool) -> float | None:
    accepted = float(table.total[1 - _declined_bin(riskier)])
    return ratio(accepted, float(table.total[:2].sum()))


def _bad_rates(table: CountTable, riskier: bool) -> tuple[float | None, float | None]:
    assert table.bads is not None
    declined = _declined_bin(riskier)
    accepted = 1 - declined
    return (
        ratio(float(table.bads[accepted]), float(table.total[accepted])),
        ratio(float(table.bads[declined]), float(table.total[declined])),
    )


def _baseline(tables: RunTables, segment: str) -> tuple[float | None, float | None, str | None]:
    """The baseline's approval rate and accepted bad rate at the configured cut-off, or why
    there are none."""
    base = tables.baseline
    frozen = base.binning(CUTOFF)
    # the cut-off as configured: the same bins in every population and segment, so any table
    # read with it says (a segment may have no loan in the cohort, a new model no cohort)
    current = next(
        (
            tables.table(population, CUTOFF, where).binning
            for population in (PERFORMANCE, CURRENT)
            for where in (segment, ALL)
            if tables.has(population, CUTOFF, where)
        ),
        frozen,
    )
    if frozen is None or frozen != current:
        return (
            None,
            None,
            (
                f"baseline version {base.version} was frozen without this cut-off; "
                f"`riskmon baseline freeze` freezes one with it"
            ),
        )
    if not base.has_segment(segment):
        return None, None, "the baseline has no loans in this segment"
    riskier = tables.model.higher_is_riskier
    approval = _approval(base.table(CUTOFF, segment), riskier)
    accepted_bad, _ = _bad_rates(base.labeled_table(CUTOFF, segment), riskier)
    return approval, accepted_bad, None


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[Any]]:
    """The cut-off's figures per segment; nothing when no cut-off is configured."""
    calibration = tables.model.calibration
    if calibration.cutoff is None:
        return [], []
    riskier = tables.model.higher_is_riskier
    figures: list[FigureRecord] = []
    for segment in tables.segments():
        base_approval, base_bad, base_reason = _baseline(tables, segment)
        declined_when = "score ≥ cut-off" if riskier else "score < cut-off"
        base = {
            "cutoff": calibration.cutoff,
            "declined_when": declined_when,
            "baseline_reason": base_reason,
        }
        if tables.has(CURRENT, CUTOFF, segment):
            current = tables.table(CURRENT, CUTOFF, segment)
            value = _approval(current, riskier)
            figures.append(
                FigureRecord(
                    "approval_rate",
                    value,
                    CURRENT,
                    segment=segment,
                    reason=None if value is not None else "no loans",
                    params=base | {"baseline": base_approval},
                )
            )
        if not tables.has(PERFORMANCE, CUTOFF, segment):
            continue
        cohort = tables.table(PERFORMANCE, CUTOFF, segment)
        figures += _cohort(tables, cohort, segment, base | {"baseline": base_bad})
    return figures, []


def _cohort(
    tables: RunTables, cohort: CountTable, segment: str, base: dict[str, Any]
) -> list[FigureRecord]:
    calibration = tables.model.calibration
    riskier = tables.model.higher_is_riskier
    assert cohort.bads is not None
    declined = _declined_bin(riskier)
    accepted = 1 - declined
    bads, total = cohort.bads[:2], cohort.total[:2]
    # bads positive; declined = predicted bad
    tp, fp = float(bads[declined]), float(total[declined] - bads[declined])
    fn, tn = float(bads[accepted]), float(total[accepted] - bads[accepted])
    n = tp + fp + fn + tn
    reason = None if n > 0 else "no matured loans in the cohort"
    accepted_bad, declined_bad = _bad_rates(cohort, riskier)

    def figure(name: str, value: float | None, **params: Any) -> FigureRecord:
        value = finite(value)
        why = reason or (None if value is not None else "not defined on this cohort")
        return FigureRecord(name, value, PERFORMANCE, segment=segment, reason=why, params=params)

    matrix = {k: float(v) for k, v in confusion_figures(tp, fp, tn, fn).items()}
    out = [
        figure("approval_rate", ratio(fn + tn, n)),
        figure("accepted_bad_rate", accepted_bad, **base),
        figure("declined_bad_rate", declined_bad),
        figure(
            "cutoff_informedness",
            matrix["informedness"],
            tp=tp,
            fp=fp,
            tn=tn,
            fn=fn,
            **{k: finite(v) for k, v in matrix.items()},
        ),
    ]
    costs = calibration.costs
    if costs is not None:
        cost = ratio(costs.false_accept * fn + costs.false_decline * fp, n)
        out.append(figure("expected_cost", cost, **costs.model_dump()))
        out.append(_cost_optimal(tables, segment, costs))
    return out


def _cost_optimal(tables: RunTables, segment: str, costs: Costs) -> FigureRecord:
    """The cohort's cost-optimal cut-off; when accepting every loan is cheapest there is none
    (the metric's cut-off is then infinite), and the reason says so."""
    scores, _ = tables.ranking(PERFORMANCE, segment)
    best, reason = measured(
        lambda: cost_optimal_cutoff_from_counts(
            scores,
            cost_fn=costs.false_accept,
            cost_fp=costs.false_decline,
            higher_is_riskier=tables.model.higher_is_riskier,
        )
    )
    value = None if best is None else finite(float(best.cutoff))
    params: dict[str, Any] = {}
    if best is not None:
        params = {"expected_cost": finite(float(best.expected_cost))} | costs.model_dump()
        if value is None:
            reason = (
                f"no cut-off: accepting every loan costs least "
                f"({float(best.expected_cost):.4g} per loan)"
            )
    return FigureRecord(
        "cost_optimal_cutoff",
        value,
        PERFORMANCE,
        segment=segment,
        reason=reason if value is None else None,
        params=params,
    )


# --------------------------------------------------------------------------- rules


def _judge_against_baseline(
    judge: Judge,
    rule: str,
    figure: FigureRecord | None,
    band: Band,
    measure: Callable[[float, float], tuple[float, str]],
) -> None:
    """Judge ``figure`` against the baseline value in its params: ``measure(now, base)``
    gives the judged change and the message."""
    levels = amber_red(band)
    if figure is None:  # no cut-off configured
        return
    base = figure.params.get("baseline")
    if figure.value is None or not base:
        reason = figure.reason or figure.params.get("baseline_reason") or "no baseline value"
        judge.add(rule, Status.NOT_EVALUABLE, None, levels, reason)
        return
    change, message = measure(figure.value, base)
    judge.add(rule, banded(change, band.amber, band.red), change, levels, message)


def _approval_change(now: float, base: float) -> tuple[float, str]:
    change = abs(now - base)
    return change, (
        f"approval rate at the cut-off {now:.1%} against {base:.1%} at the baseline "
        f"({change * 100:.1f} rate points)"
    )


def _bad_rate_rise(now: float, base: float) -> tuple[float, str]:
    rise = now / base - 1.0
    return rise, (
        f"bad rate among accepted loans {now:.2%} against {base:.2%} at the baseline ({rise:+.0%})"
    )


def _judge_approval(judge: Judge, _: str) -> None:
    figure = judge.figures.get("approval_rate", CURRENT)
    band = judge.thresholds.approval_rate_change
    _judge_against_baseline(judge, "approval_rate_change", figure, band, _approval_change)


def _judge_bad_rate(judge: Judge, _: str) -> None:
    figure = judge.figures.get("accepted_bad_rate", PERFORMANCE)
    band = judge.thresholds.accepted_bad_rate_rise
    _judge_against_baseline(judge, "accepted_bad_rate_rise", figure, band, _bad_rate_rise)


def _describe_rise(levels: Mapping[str, Any]) -> str:
    amber, red = levels.get("amber", 0), levels.get("red", 0)
    return f"higher than baseline by: amber ≥ {amber:.0%}, red ≥ {red:.0%}"


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class CutoffSection:
    """How the decision at the cut-off performs on today's applications and the cohort."""

    cutoff: float
    declined_when: str
    approval_now: FigureRecord | None
    approval_cohort: FigureRecord | None
    accepted_bad_rate: FigureRecord | None
    declined_bad_rate: FigureRecord | None
    confusion: FigureRecord | None
    expected_cost: FigureRecord | None
    cost_optimal: FigureRecord | None
    approval_status: str | None
    bad_rate_status: str | None


def section(run: RunView) -> CutoffSection | None:
    f, alerts = run.figures, run.alerts
    now = f.get("approval_rate", CURRENT)
    cohort = f.get("accepted_bad_rate", PERFORMANCE)
    if now is None and cohort is None:
        return None
    shown = now if now is not None else cohort
    params = shown.params if shown is not None else {}
    approval_alert = alerts.get("approval_rate_change")
    bad_alert = alerts.get("accepted_bad_rate_rise")
    return CutoffSection(
        cutoff=float(params.get("cutoff", 0.0)),
        declined_when=str(params.get("declined_when", "")),
        approval_now=now,
        approval_cohort=f.get("approval_rate", PERFORMANCE),
        accepted_bad_rate=cohort,
        declined_bad_rate=f.get("declined_bad_rate", PERFORMANCE),
        confusion=f.get("cutoff_informedness", PERFORMANCE),
        expected_cost=f.get("expected_cost", PERFORMANCE),
        cost_optimal=f.get("cost_optimal_cutoff", PERFORMANCE),
        approval_status=approval_alert.status if approval_alert else None,
        bad_rate_status=bad_alert.status if bad_alert else None,
    )


FAMILY = Family(
    name="cutoff",
    order=40,
    figures=(
        FigureSpec("approval_rate", CURRENT, "segment", "approval rate at the cut-off"),
        FigureSpec("approval_rate", PERFORMANCE, "segment", "approval rate of the cohort"),
        FigureSpec("accepted_bad_rate", PERFORMANCE, "segment", "bad rate among accepted"),
        FigureSpec("declined_bad_rate", PERFORMANCE, "segment", "bad rate among declined"),
        FigureSpec("cutoff_informedness", PERFORMANCE, "segment", "Youden's J at the cut-off"),
        FigureSpec("expected_cost", PERFORMANCE, "segment", "expected cost per loan"),
        FigureSpec("cost_optimal_cutoff", PERFORMANCE, "segment", "cost-optimal cut-off"),
    ),
    compute=compute,
    rules=(
        Rule(
            "approval_rate_change",
            "run",
            "approval rate at the cut-off",
            lambda t: amber_red(t.approval_rate_change),
            band_levels,
            _judge_approval,
            finding="The approval rate at the cut-off has moved from the baseline's",
            worse="higher",
        ),
        Rule(
            "accepted_bad_rate_rise",
            "run",
            "bad rate among accepted loans",
            lambda t: amber_red(t.accepted_bad_rate_rise),
            _describe_rise,
            _judge_bad_rate,
            finding="The bad rate among accepted loans has risen from the baseline's",
            worse="higher",
        ),
    ),
    sections=(Section("cutoff", "Cut-off", "cutoff", 37, "_cutoff.html", section),),
    default_population={
        "approval_rate": CURRENT,
        "accepted_bad_rate": PERFORMANCE,
        "expected_cost": PERFORMANCE,
    },
    formulas=CUTOFF_FORMULAS,
)
