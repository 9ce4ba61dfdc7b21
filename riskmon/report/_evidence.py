"""What a validator signs beside the figures: the run's reviews, its provenance, what changed
in the configuration since the model's previous run, and the threshold register."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from riskmon.config import ConfigChange, ModelConfig, Thresholds, config_changes
from riskmon.figures import CATALOG
from riskmon.records import Status
from riskmon.report._register import RegisterEntry, register_entry
from riskmon.store import MetricStore, ReviewRecord, RunRecord, StoredAlert


@dataclass(frozen=True)
class Statement:
    """One statement the run's source read ran."""

    sql_sha256: str
    rows: int


@dataclass(frozen=True)
class WindowCounts:
    """One window as the run read it."""

    population: str
    start: str
    end: str
    read: int | None
    used: int | None
    bads: int | None
    tables_sha256: str
    #: the window's days, and those read from the source (None: all, the window read whole)
    days: int | None = None
    days_read: int | None = None
    #: of the days not read, those whose fingerprint showed them unchanged
    days_unchanged: int | None = None


@dataclass(frozen=True)
class Provenance:
    """Where the run's figures came from (None for a run stored before riskmon kept it)."""

    riskmon_version: str
    config_fingerprint: str
    source: str
    snapshot: str
    statements: tuple[Statement, ...]
    windows: tuple[WindowCounts, ...]
    baseline: str
    #: the configuration the run used, secrets masked, as stored
    config: dict[str, Any]


@dataclass(frozen=True)
class Evidence:
    """The run's reviews (newest first: the first is the one shown), its provenance, the
    configuration's changes since the model's previous run and the rules' register."""

    reviews: tuple[ReviewRecord, ...]
    provenance: Provenance | None
    #: the previous run the configuration is compared with (None: the model's first run, or
    #: one of the two stored no configuration)
    previous: RunRecord | None
    changes: tuple[ConfigChange, ...]
    register: tuple[RegisterEntry, ...]

    @property
    def review(self) -> ReviewRecord | None:
        return self.reviews[0] if self.reviews else None


def provenance_of(run: RunRecord) -> Provenance | None:
    data = run.provenance
    if not data:
        return None
    base = data.get("baseline") or {}
    window = base.get("window") or ["?", "?"]
    frozen = base.get("frozen_at")
    if frozen:
        frozen = f"{dt.datetime.fromisoformat(frozen):%Y-%m-%d %H:%M} UTC"
    return Provenance(
        riskmon_version=str(data.get("riskmon_version", run.riskmon_version)),
        config_fingerprint=str(data.get("config_fingerprint", run.config_hash)),
        source=str(data.get("source", "")),
        snapshot=str(data.get("snapshot", "")),
        statements=tuple(
            Statement(s["sql_sha256"], int(s["rows"])) for s in data.get("statements", [])
        ),
        windows=tuple(
            WindowCounts(
                p,
                w["start"],
                w["end"],
                w.get("read"),
                w.get("used"),
                w.get("bads"),
                w.get("tables_sha256", ""),
                w.get("days"),
                w.get("days_read"),
                w.get("days_unchanged"),
            )
            for p, w in sorted((data.get("windows") or {}).items())
        ),
        baseline=(
            f"version {base.get('version')} (id {base.get('id')}), development window "
            f"{window[0]} to {window[1]}, frozen {frozen}"
        ),
        config=dict(data.get("config") or {}),
    )


def _stored_thresholds(provenance: Provenance | None, model: ModelConfig | None) -> Thresholds:
    """The thresholds the run used (as stored with it), else the model's as configured now."""
    if provenance is not None and "thresholds" in provenance.config:
        try:
            return Thresholds.model_validate(provenance.config["thresholds"])
        except ValidationError:
            pass  # stored by another riskmon: the configuration as it is now
    return model.thresholds if model is not None else Thresholds()


def applied_register(
    alerts: list[StoredAlert], thresholds: Thresholds
) -> tuple[RegisterEntry, ...]:
    """The register of the rules that applied to the run (those with an alert), with the
    levels they stored."""
    used: dict[str, dict[str, Any]] = {}
    for alert in alerts:
        used.setdefault(alert.rule, alert.thresholds)
    return tuple(
        register_entry(rule, thresholds, rule.describe(used[rule.name]))
        for rule in CATALOG.rules
        if rule.name in used
    )


def evidence(
    store: MetricStore, run: RunRecord, model: ModelConfig | None, alerts: list[StoredAlert]
) -> Evidence:
    """The evidence shown in ``run``'s report."""
    found = provenance_of(run)
    earlier = [r for r in store.runs(run.model, details=False) if r.as_of < run.as_of]
    previous = next(
        (
            full
            for r in reversed(earlier)
            if (full := store.run_by_id(r.id)) is not None and full.provenance
        ),
        None,
    )
    changes: tuple[ConfigChange, ...] = ()
    if previous is not None and found is not None:
        before = (previous.provenance or {}).get("config") or {}
        changes = tuple(config_changes(before, found.config))
    return Evidence(
        reviews=tuple(reversed(store.reviews(run_id=run.id))),
        provenance=found,
        previous=previous if found is not None else None,
        changes=changes,
        register=applied_register(alerts, _stored_thresholds(found, model)),
    )


def open_red_runs(store: MetricStore, model: str) -> list[RunRecord]:
    """The model's succeeded RED runs that no review has answered, oldest first."""
    reviewed = {r.run_id for r in store.reviews(model=model)}
    statuses = store.run_alert_statuses(model)
    return [
        run
        for run in store.runs(model, details=False)
        if run.status == "succeeded"
        and run.id not in reviewed
        and Status.worst(Status(s) for s in statuses.get(run.id, [])) == Status.RED
    ]
