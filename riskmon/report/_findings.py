"""The findings a report opens with: a run's RED and AMBER alerts grouped by rule, each with
the places it flags, its worst value, the baseline's and a reading in plain words.

A rule judges one population, once per segment, characteristic or grade: twenty alerts of
``auc_drop`` across twenty segments are one finding ("AUC has fallen from the baseline's, RED
in 20 of 21 places judged"), not twenty. The rules that could not be judged are grouped the
same way, with their first reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from riskmon.figures import CATALOG, BaselineView, Rule
from riskmon.records import AlertLike, Status
from riskmon.report.pages import Finding, Unjudged, Verdict

#: places a finding names, at most (the rest are counted)
PLACES_LISTED = 6

_FLAGGED = (Status.RED, Status.AMBER)
_JUDGED = (Status.RED, Status.AMBER, Status.GREEN)


def place(alert: AlertLike) -> str:
    """Where an alert was judged, in words: "all loans", "income", "income in channel=web"."""
    return " in ".join(p for p in (alert.variable, alert.segment) if p) or "all loans"


def findings(
    alerts: Iterable[AlertLike],
    baseline: BaselineView | None = None,
    anchors: dict[str, str] | None = None,
) -> tuple[Finding, ...]:
    """One finding per rule with a RED or AMBER alert, the most severe first (then the rules
    judged on all loans, then by how many places they flag); ``anchors`` link a rule to the
    report section that shows its figure."""
    by_rule: dict[str, list[AlertLike]] = {}
    for alert in alerts:
        by_rule.setdefault(alert.rule, []).append(alert)
    found = [
        _finding(rule, chosen, baseline, (anchors or {}).get(rule))
        for rule, chosen in by_rule.items()
        if any(Status(a.status) in _FLAGGED for a in chosen)
    ]
    order = _rule_order()
    found.sort(
        key=lambda f: (
            -Status(f.status).severity,
            "all loans" not in f.places,
            -f.n_places,
            order.get(f.rule, len(order)),
            f.rule,
        )
    )
    return tuple(found)


def _rule_order() -> dict[str, int]:
    """Each rule's place in the catalog, which breaks ties between findings."""
    return {r.name: i for i, r in enumerate(CATALOG.rules)}


def _finding(
    name: str, alerts: Sequence[AlertLike], baseline: BaselineView | None, anchor: str | None
) -> Finding:
    worst_status = Status.worst(a.status for a in alerts)
    at_worst = sorted(
        (a for a in alerts if Status(a.status) == worst_status),
        key=lambda a: (bool(a.segment), bool(a.variable), a.variable, a.segment),
    )
    rule = CATALOG.rule(name)
    worst = _worst(at_worst, rule)
    lesser = sum(
        1 for a in alerts if Status(a.status) in _FLAGGED and Status(a.status) != worst_status
    )
    places = [place(a) for a in at_worst]
    return Finding(
        status=str(worst_status),
        rule=name,
        statement=rule.finding if rule else name,
        figure=rule.figure if rule else name,
        places=tuple(places[:PLACES_LISTED]),
        n_places=len(places),
        n_judged=sum(1 for a in alerts if Status(a.status) in _JUDGED),
        lesser=lesser,
        worst_place=place(worst),
        worst_value=worst.value,
        baseline=_baseline_value(rule, worst, baseline),
        baseline_figure=rule.baseline[0] if rule and rule.baseline else None,
        message=worst.message,
        anchor=anchor,
    )


def _worst(alerts: Sequence[AlertLike], rule: Rule | None) -> AlertLike:
    """The alert with the worst value by the rule's ``worst`` (the whole population's first,
    when the rule does not say, or no alert has a value)."""
    direction = rule.worst if rule else None
    valued = [a for a in alerts if a.value is not None]
    if direction is None or not valued:
        return alerts[0]
    pick = max if direction == "higher" else min
    return pick(valued, key=lambda a: float(a.value or 0.0))


def _baseline_value(
    rule: Rule | None, alert: AlertLike, baseline: BaselineView | None
) -> float | None:
    """The baseline's value of the figure the rule compares against, where ``alert`` was
    judged (None when the rule compares with none, or the baseline does not hold it)."""
    if rule is None or not rule.baseline or baseline is None:
        return None
    figure = baseline.figure(rule.baseline[0], alert.variable, alert.segment)
    return figure.value if figure is not None else None


def unjudged(alerts: Iterable[AlertLike]) -> tuple[Unjudged, ...]:
    """The rules with alerts that could not be judged (NOT_EVALUABLE), with how many places
    and the first reason, in the catalog's order."""
    by_rule: dict[str, list[AlertLike]] = {}
    for alert in alerts:
        if Status(alert.status) == Status.NOT_EVALUABLE:
            by_rule.setdefault(alert.rule, []).append(alert)
    order = _rule_order()
    return tuple(
        Unjudged(rule, len(chosen), place(chosen[0]), chosen[0].message)
        for rule, chosen in sorted(by_rule.items(), key=lambda i: order.get(i[0], len(order)))
    )


def verdict(status: str, found: Sequence[Finding], alerts: Sequence[AlertLike]) -> Verdict:
    """The report's first line: its status and what gives it."""
    counts = {s: sum(1 for f in found if f.status == s) for s in (Status.RED, Status.AMBER)}
    n_rules = len({a.rule for a in alerts})
    judged = len({a.rule for a in alerts if Status(a.status) in _JUDGED})
    if found:
        parts = [f"{n} {s}" for s, n in counts.items() if n]
        text = (
            f"{len(found)} finding{'s' if len(found) != 1 else ''} ({', '.join(parts)}) "
            f"from {sum(1 for a in alerts if Status(a.status) in _FLAGGED)} alerts of "
            f"{judged} rules judged"
        )
    elif judged:
        text = (
            "the one rule judged is GREEN"
            if judged == 1
            else f"all {judged} rules judged are GREEN"
        )
    elif n_rules:
        text = "no rule could be judged on this run's loans"
    else:
        text = "no alert rule applied to this run"
    return Verdict(status=status, text=text)
