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
from riskmon.records import ALL, CURRENT, AlertRecord, FigureRecord, Figures, Status


def _too_small(judge: Judge, segment: str) -> str | None:
    """Why a segment is reported but not judged: too few loans in its current population."""
    least = judge.thresholds.min_segment_loans
    if segment == ALL or not least:
        return None
    n = judge.figures.value("n_rows", CURRENT, segment=segment)
    if n is None or n >= least:
        return None
    return (
        f"segment {segment} has {int(n)} loans in the current population, fewer than "
        f"thresholds.min_segment_loans ({least}): reported, not judged"
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
        small = _too_small(judge, segment)
        for rule in rules:
            if rule.scope != "segment":
                continue
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
