"""The report's header: the run's windows, counts, baseline and the thresholds each rule used,
and the history of a figure up to the reported run."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, cast, get_args

from riskmon.config import ModelConfig, ModelKind, model_fingerprint
from riskmon.figures import CATALOG
from riskmon.records import RunPlanRecord
from riskmon.report.pages import Header, Threshold, Window
from riskmon.store import (
    HistoryPoint,
    MetricStore,
    RunRecord,
    StoredAlert,
    StoredBaseline,
)


def thresholds(alerts: Sequence[StoredAlert]) -> tuple[Threshold, ...]:
    """The levels of each rule that applied to the run, as stored with its alerts (a rule that
    raised no alert, GREEN included, did not apply: the model has no grades, no cut-off)."""
    used: dict[str, Mapping[str, Any]] = {}
    for alert in alerts:
        used.setdefault(alert.rule, alert.thresholds)
    return tuple(
        Threshold(rule.name, rule.figure, rule.describe(used[rule.name]))
        for rule in CATALOG.rules
        if rule.name in used
    )


def _stored_plan(run: RunRecord) -> RunPlanRecord | None:
    """The plan ``run`` stored, or None when it stored none (or one this riskmon cannot read)."""
    if not run.plan:
        return None
    try:
        return RunPlanRecord.from_json(run.plan)
    except (KeyError, TypeError, ValueError):
        return None


def model_kind(run: RunRecord, model: ModelConfig | None) -> ModelKind:
    """What the run's model predicts: its configuration's kind, or, for a model no longer
    configured, the kind the run's stored configuration names."""
    if model is not None:
        return model.kind
    stored = ((run.provenance or {}).get("config") or {}).get("kind", "pd")
    return cast(ModelKind, stored if stored in get_args(ModelKind) else "pd")


def _windows(plan: RunPlanRecord, kind: ModelKind) -> list[Window]:
    if kind != "pd":
        return [
            Window(
                "observation period",
                *plan.performance,
                "facilities dated in it, estimates against realised values: back-testing",
            )
        ]
    return [
        Window("current population", *plan.current, "stability: PSI, CSI"),
        Window(
            "performance cohort",
            *plan.performance,
            f"outcomes after {plan.performance_window}: KS, AUC, Gini, lift, IV",
        ),
    ]


def _outcome(plan: RunPlanRecord | None, kind: ModelKind) -> str | None:
    """What the run took for the outcome: the bad flag, or the realised value."""
    if plan is None or not plan.label:
        return None
    if kind != "pd":
        return f"column {plan.label!r}: the realised {kind.upper()}, empty while not yet realised"
    return (
        f"column {plan.label!r}: 1 = bad (default), 0 = good, empty = outcome not yet known "
        "(unmatured)"
    )


def _weight(plan: RunPlanRecord | None, kind: ModelKind) -> str | None:
    if plan is None or not plan.weight:
        return None
    if kind != "pd":
        return f"exposure at default: column {plan.weight!r} (weights the loss shortfall and MAD)"
    return f"weighted by column {plan.weight!r}"


def header(
    run: RunRecord,
    model: ModelConfig | None,
    baseline: StoredBaseline | None,
    alerts: Sequence[StoredAlert],
) -> Header:
    """The header of ``run``'s report, from what the run stored: its windows and columns are
    those it measured, whatever the configuration says today."""
    plan = _stored_plan(run)
    kind = model_kind(run, model)
    windows: list[Window] = []
    config_note = None
    if plan is not None:
        windows = _windows(plan, kind)
        # a source read without its environment variables cannot be compared with the run's
        comparable = model if model is not None and not model.source.unset_variables else None
        if comparable is not None and model_fingerprint(comparable) != run.config_hash:
            config_note = (
                "The model's configuration changed after this run; the windows and the bad "
                "definition shown are those the run used."
            )
    else:
        config_note = (
            "This run did not record its date windows (an earlier riskmon made it, or its "
            "dates could not be planned)."
        )
    if baseline is not None:
        windows.append(
            Window(
                f"baseline (version {baseline.version})",
                baseline.window_start,
                baseline.window_end,
                f"development sample: {baseline.n_rows} loans, {baseline.n_bads} bads"
                if kind == "pd"
                else f"initial validation sample: {baseline.n_rows} facilities",
            )
        )
    return Header(
        windows=tuple(windows),
        stability_window=plan.stability_window if plan else None,
        performance_window=plan.performance_window if plan else None,
        bad_definition=_outcome(plan, kind),
        weight=_weight(plan, kind),
        snapshot=plan.snapshot if plan else None,
        score_direction=(
            plan.score_direction.replace("_", " ") + f" (score column {plan.score!r})"
            if plan
            else None
        ),
        kind=kind,
        n_current=run.n_current,
        n_matured=run.n_matured,
        n_unmatured=run.n_unmatured,
        baseline_version=baseline.version if baseline else None,
        baseline_frozen_at=baseline.frozen_at if baseline else None,
        started_at=run.started_at,
        finished_at=run.finished_at,
        config_note=config_note,
        thresholds=thresholds(alerts),
    )


class History:
    """Figures over the succeeded runs up to the reported date (never later ones): each
    figure's points of every variable read at its first use (one query for the CSI of all the
    characteristics, say)."""

    def __init__(self, store: MetricStore, model: str, as_of: dt.date):
        self.store, self.model, self.as_of = store, model, as_of
        self._read: dict[tuple[str, str], dict[str, list[HistoryPoint]]] = {}

    def points(self, name: str, population: str, variable: str = "") -> list[HistoryPoint]:
        by_variable = self._read.get((name, population))
        if by_variable is None:
            by_variable = self.store.history_by_variable(
                self.model, name, population=population, until=self.as_of
            )
            self._read[(name, population)] = by_variable
        return by_variable.get(variable, [])

    def series(
        self, name: str, population: str, variable: str = ""
    ) -> tuple[list[tuple[dt.date, float | None]], float | None]:
        """The (date, value) pairs, and the value of the run before the reported one."""
        points = self.points(name, population, variable)
        earlier = [p for p in points if p.as_of < self.as_of]
        previous = earlier[-1].value if earlier else None
        return [(p.as_of, p.value) for p in points], previous
