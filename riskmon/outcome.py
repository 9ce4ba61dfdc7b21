"""What a run did: the outcome :func:`riskmon.run.run_model` returns, and notifications read.

It sits low in the package (it imports only :mod:`riskmon.records`), so that notify and the
command line speak of a run's outcome without importing the run itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from riskmon.records import (
    CURRENT,
    PERFORMANCE,
    SCORE,
    AlertRecord,
    FigureRecord,
    RunCounts,
    Status,
)


@dataclass(frozen=True)
class RunOutcome:
    """What one run did: its status, the worst alert, and everything it stored."""

    model: str
    as_of: dt.date
    #: succeeded | failed | skipped (another process holds the run) | done (the date had
    #: succeeded already: not computed again)
    status: str
    run_id: int | None = None
    error: str | None = None
    alert_status: str = Status.NOT_EVALUABLE
    counts: RunCounts | None = None
    #: held in columns after a run (:class:`riskmon.figure_table.Figures`)
    figures: Sequence[FigureRecord] = ()
    alerts: tuple[AlertRecord, ...] = ()
    baseline_version: int | None = None
    report_path: str | None = None
    #: why the run's report could not be written (its figures are stored all the same)
    report_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    def summary(self) -> dict[str, Any]:
        """A JSON-serialisable summary: status, every whole-population figure, every alert."""
        headline: dict[str, dict[str, float | None]] = {CURRENT: {}, PERFORMANCE: {}}
        for f in self.figures:
            if f.segment == "" and f.population in headline:
                key = f"{f.name}[{f.variable}]" if f.variable and f.variable != SCORE else f.name
                headline[f.population][key] = f.value
        return {
            "model": self.model,
            "as_of": self.as_of.isoformat(),
            "status": self.status,
            "run_id": self.run_id,
            "error": self.error,
            "alert_status": self.alert_status if self.ok or self.status == "done" else None,
            "baseline_version": self.baseline_version,
            "counts": None
            if self.counts is None
            else {
                "current": self.counts.n_current,
                "matured": self.counts.n_matured,
                "unmatured": self.counts.n_unmatured,
            },
            "figures": headline if self.ok else None,
            "alerts": [
                {
                    "rule": a.rule,
                    "variable": a.variable,
                    "segment": a.segment,
                    "status": a.status,
                    "value": a.value,
                    "thresholds": a.thresholds,
                    "message": a.message,
                }
                for a in self.alerts
            ],
            "report": self.report_path,
            "report_error": self.report_error,
        }


__all__ = ["RunOutcome"]
