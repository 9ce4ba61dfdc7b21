"""The judgement shared by the drop rules (AUC, Gini, IV): how far a figure fell from the
baseline's, relative to it, with the score grid's error and the confidence interval in view."""

from __future__ import annotations

from typing import Any

from riskmon.config import Drop
from riskmon.figures._family import Judge, amber_red, fmt, where, within_noise
from riskmon.records import PERFORMANCE, FigureRecord, Status

_NAMES = {"auc": "AUC", "gini": "Gini", "iv": "IV"}


def dropped(change: float, levels: Drop) -> Status:
    return (
        Status.RED
        if change >= levels.red
        else Status.AMBER
        if change >= levels.amber
        else Status.GREEN
    )


def grid_reason(label: str, value: float, how: str) -> str:
    return (
        f"{label} {fmt(value)} was ranked on the baseline's score grid and may be {how} "
        f"(scores outside the baseline's range share its end cells), enough to change the "
        f"verdict: not judged. Re-freeze the baseline, or raise bins.max_distinct_scores"
    )


def grid_spread(judge: Judge, name: str, population: str, segment: str) -> float:
    """How far the score grid can have moved an AUC (or Gini, twice as far); 0 if exact."""
    if name not in ("auc", "gini"):
        return 0.0
    auc = judge.figures.get("auc", population, segment=segment)
    bound = auc.params.get("auc_error_bound") if auc is not None else None
    return 0.0 if bound is None else float(bound) * (2.0 if name == "gini" else 1.0)


def judge_drop(
    judge: Judge,
    rule: str,
    name: str,
    levels: Drop,
    *,
    variable: str = "",
    segment: str = "",
) -> None:
    """Judge the relative drop ``(base − now) / base`` of figure ``name`` (of the cohort)."""
    population = PERFORMANCE
    t = judge.thresholds
    thresholds: dict[str, Any] = amber_red(levels) | {"min_bads": t.min_bads}
    label = f"{_NAMES[name]}{where(variable, segment)}"
    few = judge.too_few_bads(segment) or judge.in_sample()
    now = judge.figures.get(name, population, variable, segment)
    base = judge.baseline.figure(name, variable, segment)
    if few or now is None or now.value is None:
        reason = few or (now.reason if now else None) or f"{label} not available"
        judge.add(rule, Status.NOT_EVALUABLE, None, thresholds, reason, variable, segment)
        return
    if base is None or base.value is None or base.value <= 0:
        judge.add(
            rule,
            Status.NOT_EVALUABLE,
            None,
            thresholds,
            f"baseline {label} not available or not positive",
            variable,
            segment,
        )
        return
    if name == "iv" and base.value < t.min_baseline_iv:
        thresholds["min_baseline_iv"] = t.min_baseline_iv
        judge.add(
            rule,
            Status.NOT_EVALUABLE,
            None,
            thresholds,
            f"baseline {label} {fmt(base.value)} is below {t.min_baseline_iv:g} "
            f"(useless): a drop from it means nothing",
            variable,
            segment,
        )
        return
    change = (base.value - now.value) / base.value
    status = dropped(change, levels)
    spread = grid_spread(judge, name, population, segment)
    if spread:
        extremes = {
            dropped((base.value - v) / base.value, levels)
            for v in (now.value - spread, now.value + spread)
        }
        if len(extremes | {status}) > 1:
            judge.add(
                rule,
                Status.NOT_EVALUABLE,
                change,
                thresholds | {"grid_error_bound": spread},
                grid_reason(label, now.value, f"off by up to {spread:.4f}"),
                variable,
                segment,
            )
            return
    thresholds |= {"baseline": base.value, "current": now.value}
    status, noise = _noise(judge, now, base.value, status, thresholds)
    message = (
        f"{label} {fmt(now.value)} vs baseline {fmt(base.value)}: "
        f"{abs(change):.1%} {'lower' if change >= 0 else 'higher'}{noise}"
    )
    judge.add(rule, status, change, thresholds, message, variable, segment)


def _noise(
    judge: Judge, now: FigureRecord, base: float, status: Status, thresholds: dict[str, Any]
) -> tuple[Status, str]:
    """The status of a drop whose baseline lies within the current confidence interval
    (GREEN with ``significant_drops_only``, else at most ``within_noise``), what its message
    adds, and whether it did in ``thresholds``."""
    low, high = now.params.get("ci_low"), now.params.get("ci_high")
    if low is None or high is None:
        return status, ""
    within = bool(low <= base <= high)
    thresholds["baseline_within_ci"] = within
    if not within or status == Status.GREEN:
        return status, ""
    level = now.params.get("confidence_level", 0.95)
    inside = f"the baseline lies within the current {level:.0%} confidence interval"
    if judge.thresholds.significant_drops_only:
        return Status.GREEN, f" (not significant: {inside})"
    capped_status, capped = within_noise(status, judge.thresholds)
    return capped_status, f" ({inside}{capped})"
