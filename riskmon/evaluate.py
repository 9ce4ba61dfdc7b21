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
from riskmon.records import AlertRecord, FigureRecord, Figures


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
            if rule.scope == "segment":
                rule.judge(judge, segment)
    for characteristic in model.characteristics:
        for rule in rules:
            if rule.scope == "variable":
                rule.judge(judge, characteristic.name)
    for rule in rules:
        if rule.scope == "run":
            rule.judge(judge, "")
    return judge.alerts
