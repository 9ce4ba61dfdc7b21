"""The report's header: the run's windows, counts, baseline and the thresholds each rule used,
and the history of a figure up to the reported run."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from riskmon.config import ModelConfig, Thresholds, model_fingerprint
from riskmon.figures import CATALOG
from riskmon.plan import plan_run
from riskmon.report.pages import Header, Threshold, Window
from riskmon.store import (
    HistoryPoint,
    MetricStore,
    RunRecord,
    StoredAlert,
    StoredBaseline,
)


def thresholds(
    alerts: Sequence[StoredAlert], configured: Thresholds | None
) -> tuple[Threshold, ...]:
    """The levels each rule used, as stored with its alerts (the configuration's otherwise)."""
    used: dict[str, dict[str, Any]] = {}
    for alert in alerts:
        used.setdefault(alert.rule, alert.thresholds)
    if configured is not None:
        for rule in CATALOG.rules:
            used.setdefault(rule.name, rule.levels(configured))
    return tuple(
        Threshold(rule.name, rule.figure, rule.describe(used[rule.name]))
        for rule in CATALOG.rules
        if rule.name in used
    )


def header(
    run: RunRecord,
    model: ModelConfig | None,
    baseline: StoredBaseline | None,
    alerts: Sequence[StoredAlert],
) -> Header:
    windows: list[Window] = []
    config_note = None
    if model is not None:
        plan = plan_run(model, run.as_of)
        windows = [
            Window(
                "current population", plan.current.start, plan.current.end, "stability: PSI, CSI"
            ),
            Window(
                "performance cohort",
                plan.performance.start,
                plan.performance.end,
                f"outcomes after {model.performance_window}: KS, AUC, Gini, lift, IV",
            ),
        ]
        if model_fingerprint(model) != run.config_hash:
            config_note = (
                "The model's configuration changed after this run; the windows and the bad "
                "definition shown are those of the current configuration."
            )
    else:
        config_note = "The model is not in the configuration: date windows are not known."
    if baseline is not None:
        windows.append(
            Window(
                f"baseline (version {baseline.version})",
                baseline.window_start,
                baseline.window_end,
                f"development sample: {baseline.n_rows} loans, {baseline.n_bads} bads",
            )
        )
    columns = model.columns if model is not None else None
    return Header(
        windows=tuple(windows),
        stability_window=str(model.stability_window) if model else None,
        performance_window=str(model.performance_window) if model else None,
        bad_definition=(
            f"column {columns.label!r}: 1 = bad (default), 0 = good, empty = outcome not yet "
            "known (unmatured)"
            if columns
            else None
        ),
        weight=f"weighted by column {columns.weight!r}" if columns and columns.weight else None,
        score_direction=(
            model.score_direction.replace("_", " ") + f" (score column {columns.score!r})"
            if model and columns
            else None
        ),
        n_current=run.n_current,
        n_matured=run.n_matured,
        n_unmatured=run.n_unmatured,
        baseline_version=baseline.version if baseline else None,
        baseline_frozen_at=baseline.frozen_at if baseline else None,
        started_at=run.started_at,
        finished_at=run.finished_at,
        config_note=config_note,
        thresholds=thresholds(alerts, model.thresholds if model else None),
    )


class History:
    """Figures over the succeeded runs up to the reported date (never later ones)."""

    def __init__(self, store: MetricStore, model: str, as_of: dt.date):
        self.store, self.model, self.as_of = store, model, as_of

    def points(
        self, name: str, population: str, variable: str = "", segment: str = ""
    ) -> list[HistoryPoint]:
        found = self.store.history(
            self.model, name, variable=variable, segment=segment, population=population
        )
        return [p for p in found if p.as_of <= self.as_of]

    def series(
        self, name: str, population: str, variable: str = ""
    ) -> tuple[list[tuple[dt.date, float | None]], float | None]:
        """The (date, value) pairs, and the value of the run before the reported one."""
        points = self.points(name, population, variable)
        earlier = [p for p in points if p.as_of < self.as_of]
        previous = earlier[-1].value if earlier else None
        return [(p.as_of, p.value) for p in points], previous
