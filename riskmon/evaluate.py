"""Evaluate: alert rules turn a run's figures into GREEN / AMBER / RED, or NOT_EVALUABLE.

Every alert keeps the value it judged and the thresholds it used, so a stored run says why it
was red even after the configuration changed. The rules are declared by the figure families of
:mod:`riskmon.figures` (each family's docstring lists its own), with their thresholds under
``thresholds`` in the configuration. Rules run by scope, in the catalog's order: the segment
rules for the whole population and then for every segment, the characteristic rules for every
characteristic, then the rules of the run as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import replace

from riskmon.config import ModelConfig
from riskmon.errors import ConfigError
from riskmon.figure_table import Figures
from riskmon.figures import CATALOG, BaselineView, Judge, Rule, within_noise
from riskmon.metrics import benjamini_hochberg
from riskmon.records import (
    ALL,
    CURRENT,
    PERFORMANCE,
    AlertLike,
    AlertRecord,
    FigureRecord,
    Status,
)

_POPULATION_NAMES = {CURRENT: "the current population", PERFORMANCE: "the performance cohort"}


def _too_small(judge: Judge, segment: str, population: str) -> str | None:
    """Why a segment is reported but not judged by a rule of ``population``: too few loans in
    it (a segment absent from it has none)."""
    least = judge.thresholds.min_segment_loans
    if segment == ALL or not least:
        return None
    n = judge.figures.value("n_rows", population, segment=segment) or 0
    if n >= least:
        return None
    return (
        f"segment {segment} has {int(n)} loans in {_POPULATION_NAMES[population]}, fewer "
        f"than thresholds.min_segment_loans ({least}): reported, not judged"
    )


#: a level no rule would declare, to see whether a rule reads its levels from thresholds.rules
_PROBE = -7.25e-301


def check_rule_levels(model: ModelConfig, rules: Sequence[Rule]) -> None:
    """Refuse ``thresholds.rules`` entries that name no rule of the model, or a rule whose
    levels have a key of their own (``thresholds.psi``): they would be silently ignored."""
    where = f"models[{model.name}].thresholds.rules"
    by_name = {r.name: r for r in rules}
    for name, levels in model.thresholds.rules.items():
        rule = by_name.get(name)
        if rule is None:
            raise ConfigError(f"{where}: no rule named {name!r} (known: {', '.join(by_name)})")
        # a probe value in every level set: the rule reads thresholds.rules when it shows
        probe = dict.fromkeys(levels, _PROBE)
        probed = model.thresholds.model_copy(update={"rules": {name: probe}})
        used = rule.levels(probed)
        if any(used.get(level) != _PROBE for level in levels):
            raise ConfigError(
                f"{where}.{name}: rule {name!r} takes its levels from a key of its own under "
                f"thresholds (see the README), not from thresholds.rules"
            )


def evaluate(
    model: ModelConfig,
    figures: Sequence[FigureRecord],
    baseline: BaselineView,
    *,
    previous_n_current: int | None,
    n_current: int,
    expected_n_current: float | None = None,
    previous_red: Sequence[Collection[AlertKey]] = (),
) -> list[AlertRecord]:
    """Every alert rule of the catalog on a run's figures.

    ``previous_n_current`` is the size of the current population of the model's last run with
    loans (None when there was none), ``expected_n_current`` the baseline's loans per current
    window; ``previous_red`` the alerts RED by their levels in each of the model's previous
    runs, newest first (``thresholds.consecutive``).
    """
    judge = Judge(
        model.thresholds,
        Figures(figures),
        baseline,
        previous_n_current,
        n_current,
        expected_n_current=expected_n_current,
    )
    rules = [r for r in CATALOG.for_kind(model.kind).rules if r.applies is None or r.applies(model)]
    for segment in judge.figures.segments():
        for rule in rules:
            if rule.scope != "segment":
                continue
            small = _too_small(judge, segment, rule.population)
            if small is None:
                rule.judge(judge, segment)
            else:
                levels = rule.levels(judge.thresholds)
                judge.add(rule.name, Status.NOT_EVALUABLE, None, levels, small, segment=segment)
    for characteristic in model.characteristics:
        for rule in rules:
            if rule.scope == "variable":
                rule.judge(judge, characteristic.name)
    for rule in rules:
        if rule.scope == "run":
            rule.judge(judge, "")
    if model.thresholds.multiple_testing == "benjamini_hochberg":
        for rule in rules:
            if rule.tested is not None:
                _benjamini_hochberg(judge, rule)
    if model.thresholds.consecutive > 1:
        _hysteresis(judge, previous_red)
    return judge.alerts


#: an alert's rule, variable and segment
AlertKey = tuple[str, str, str]


def key_of(alert: AlertLike) -> AlertKey:
    return (alert.rule, alert.variable, alert.segment)


def red_by_levels(alert: AlertLike) -> bool:
    """Whether an alert was RED by its levels, whatever ``thresholds.consecutive`` made it."""
    return alert.status == Status.RED or alert.thresholds.get("levels_status") == Status.RED


def _noise_test(judge: Judge, alert: AlertRecord) -> tuple[float | None, float]:
    """The noise p-value of the figure an alert judged (named as its rule), and the level the
    test was made at."""
    figure = judge.figures.get(alert.rule, CURRENT, alert.variable, alert.segment)
    params = {} if figure is None else figure.params
    p, alpha = params.get("noise_p"), params.get("alpha")
    return (None if p is None else float(p)), (0.05 if alpha is None else float(alpha))


def _benjamini_hochberg(judge: Judge, rule: Rule) -> None:
    """Judge ``rule``'s alerts on p-values adjusted across all of them (its segments and
    characteristics) by Benjamini and Hochberg's step-up procedure, which keeps the expected
    share of false alarms among the alerts raised at the level (scipy's
    ``false_discovery_control``)."""
    tested: list[tuple[int, float]] = []
    for i, alert in enumerate(judge.alerts):
        if alert.rule != rule.name or alert.status == Status.NOT_EVALUABLE:
            continue
        p = alert.value if rule.tested == "p" else _noise_test(judge, alert)[0]
        if p is not None and math.isfinite(p):
            tested.append((i, float(p)))
    if len(tested) < 2:
        return
    adjusted = benjamini_hochberg([p for _, p in tested])
    for (i, p), q in zip(tested, adjusted, strict=True):
        alert = judge.alerts[i]
        note = {"multiple_testing": "benjamini_hochberg", "tests": len(tested)}
        if rule.tested == "p":
            levels = alert.thresholds
            status = (
                Status.RED
                if q < levels["red"]
                else Status.AMBER
                if q < levels["amber"]
                else Status.GREEN
            )
            message = (
                f"{alert.message}; Benjamini-Hochberg adjusted over {len(tested)} tests: "
                f"p = {q:.3g}"
            )
            judge.alerts[i] = replace(
                alert,
                status=status,
                value=float(q),
                thresholds=levels | note | {"p_unadjusted": p},
                message=message,
            )
            continue
        thresholds = alert.thresholds | note | {"noise_p": p, "noise_p_adjusted": float(q)}
        alpha = _noise_test(judge, alert)[1]
        status, capped = alert.status, ""
        if q >= alpha:
            status, capped = within_noise(alert.status, judge.thresholds)
        message = alert.message
        if capped:
            message += (
                f"; within sampling noise after Benjamini-Hochberg over {len(tested)} tests "
                f"(adjusted p = {q:.3g}){capped}"
            )
        judge.alerts[i] = replace(alert, status=status, thresholds=thresholds, message=message)


def _hysteresis(judge: Judge, previous_red: Sequence[Collection[AlertKey]]) -> None:
    """A RED alert stays AMBER until it has been RED by its levels in
    ``thresholds.consecutive`` runs in a row, this one included."""
    needed = judge.thresholds.consecutive
    for i, alert in enumerate(judge.alerts):
        if alert.status != Status.RED:
            continue
        key = key_of(alert)
        streak = 1
        for red in previous_red[: needed - 1]:
            if key not in red:
                break
            streak += 1
        if streak >= needed:
            continue
        judge.alerts[i] = replace(
            alert,
            status=Status.AMBER,
            thresholds=alert.thresholds | {"levels_status": "RED", "consecutive": needed},
            message=(
                f"{alert.message}; RED by its levels in {streak} run(s) in a row, of the "
                f"{needed} thresholds.consecutive asks before RED"
            ),
        )
