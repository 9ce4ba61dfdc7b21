"""Evaluate: alert rules turn a run's figures into GREEN / AMBER / RED, or NOT_EVALUABLE.

Every alert keeps the value it judged and the thresholds it used, so a stored run says why it
was red even after the configuration changed. The rules are declared by the figure families of
:mod:`riskmon.figures` (each family's docstring lists its own), with their thresholds under
``thresholds`` in the configuration. Rules run by scope, in the catalog's order: the segment
rules for the whole population and then for every segment, the characteristic rules for every
characteristic, then the rules of the run as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from riskmon.config import ModelConfig
from riskmon.figures import CATALOG, BaselineView, Judge
from riskmon.records import ALL, CURRENT, PERFORMANCE, AlertRecord, FigureRecord, Figures, Status

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


def evaluate(
    model: ModelConfig,
    figures: Sequence[FigureRecord],
    baseline: BaselineView,
    *,
    previous_n_current: int | None,
    n_current: int,
) -> list[AlertRecord]:
    """Every alert rule of the catalog on a run's figures.

    ``previous_n_current`` is the size of the current population of the model's previous run
    (None when there was none).
    """
    judge = Judge(model.thresholds, Figures(figures), baseline, previous_n_current, n_current)
    rules = CATALOG.rules
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
    return judge.alerts
