"""The metric store's records as read back: runs, alerts, baselines, deliveries, history.

The records every layer shares (figures, bins, alerts to write, counts) live in
:mod:`riskmon.records`; these are the store's answers and carry its ids and timestamps.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from riskmon.records import FigureRecord


@dataclass(frozen=True, slots=True)
class BaselineBinRecord:
    """The baseline's counts in one bin: all loans, and the labeled loans' goods and bads."""

    bin_index: int
    label: str
    n_total: int
    total: float
    segment: str = ""
    n_goods: int | None = None
    goods: float | None = None
    n_bads: int | None = None
    bads: float | None = None
    share: float | None = None


@dataclass(frozen=True)
class BaselineVariableRecord:
    """One variable of a baseline: its frozen binning and its bins."""

    variable: str
    kind: str
    binning: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    bins: tuple[BaselineBinRecord, ...] = ()


@dataclass(frozen=True)
class StoredBaseline:
    """A frozen baseline version, as read back."""

    id: int
    model: str
    version: int
    window_start: dt.date
    window_end: dt.date
    frozen_at: dt.datetime
    config_hash: str
    n_rows: int
    n_bads: int | None
    riskmon_version: str
    variables: dict[str, BaselineVariableRecord]
    figures: tuple[FigureRecord, ...]

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        """The baseline figure ``name`` (of ``variable`` and ``segment``), if stored."""
        for f in self.figures:
            if (f.name, f.variable, f.segment) == (name, variable, segment):
                return f
        return None


@dataclass(frozen=True)
class RunRecord:
    """A stored run, as read back."""

    id: int
    model: str
    as_of: dt.date
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    n_current: int | None
    n_matured: int | None
    n_unmatured: int | None
    error: str | None
    riskmon_version: str
    config_hash: str
    baseline_id: int | None
    #: what the run measured, as it planned it (windows, columns); None for older runs
    plan: dict[str, Any] | None = None
    #: the process that holds or held the run: ``host:pid``
    owner: str | None = None
    #: where its figures came from (code, configuration, statements, windows, baseline);
    #: None for runs stored before riskmon kept it
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True)
class StoredAlert:
    """An alert as stored, with its notification state."""

    id: int
    run_id: int
    rule: str
    status: str
    value: float | None
    thresholds: dict[str, Any]
    message: str
    variable: str
    segment: str
    notify_state: str
    notify_attempts: int
    notify_error: str | None


@dataclass(frozen=True)
class DeliveryRecord:
    """One notification of a run to one channel."""

    run_id: int
    channel: str
    state: str
    attempts: int
    last_error: str | None
    last_attempt_at: dt.datetime
    sent_at: dt.datetime | None


@dataclass(frozen=True)
class HistoryPoint:
    """One figure of one succeeded run."""

    as_of: dt.date
    value: float | None
    reason: str | None
    run_id: int


#: the assessment scale of a review: the four levels of the ECB's instructions for reporting
#: the validation results of internal models, best first
ASSESSMENTS = {
    1: "no deficiencies",
    2: "minor deficiencies",
    3: "major deficiencies",
    4: "severe deficiencies",
}


@dataclass(frozen=True)
class ReviewRecord:
    """A validator's review of a run, as stored (never changed once appended)."""

    id: int
    run_id: int
    model: str
    as_of: dt.date
    decision: str
    assessment: int | None
    reviewer: str
    note: str | None
    reviewed_at: dt.datetime

    @property
    def assessment_text(self) -> str | None:
        """The assessment in words ("2 – minor deficiencies"), None when not given."""
        if self.assessment is None:
            return None
        return f"{self.assessment} – {ASSESSMENTS[self.assessment]}"
