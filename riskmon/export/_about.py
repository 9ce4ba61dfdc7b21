"""The workbook's first sheet: which run it holds, and what every column of every sheet is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from riskmon import __version__
from riskmon.export._layout import (
    GRADE,
    NOTES,
    OTHER_HEADER,
    OTHER_SHEET,
    PORTFOLIO,
    SECTION,
    SEGMENT,
    WHOLE_POPULATION,
    Row,
    Sheet,
)
from riskmon.export._table import Area
from riskmon.store import RunRecord

ABOUT_SHEET, ABOUT_FILE = "About", "about.csv"
TITLE = "riskmon: validation results laid out as the ECB's reporting instructions"
SOURCE = (
    "ECB, Instructions for reporting the validation results of internal models, "
    "IRB Pillar I models for credit risk, February 2019"
)
#: the heading of the table of columns
COLUMNS_HEADER: Row = ("sheet", "section", "column", "description")

_COMMON = (
    (SECTION, "the section's number in the instructions"),
    (SEGMENT, f"the segment; {WHOLE_POPULATION} is the whole population"),
    (GRADE, f"the grade's label, best grade first; {PORTFOLIO} is the segment's portfolio"),
    (NOTES, "why a figure of the row is not available (its cell is empty)"),
)
_OTHER = {
    "figure": "the stored figure's name",
    "population": "the population it was measured on (current, performance, ...)",
    "segment": f"the segment; {WHOLE_POPULATION} is the whole population",
    "variable": "the variable, grade or characteristic it belongs to (empty: the score)",
    "value": "its value (empty: not available)",
    "reason": "why it is not available",
    "parameters": "the parameters stored with it, as JSON",
}


def _window(plan: dict[str, Any], key: str) -> str | None:
    window = plan.get(key)
    return f"{window[0]} to {window[1]}" if isinstance(window, list) and len(window) == 2 else None


def identity(run: RunRecord, kind: str) -> list[Row]:
    """The run's identity: model, kind, as-of date, run id, windows, code version."""
    plan = run.plan or {}
    pairs: list[tuple[str, Any]] = [
        ("model", run.model),
        ("model kind", kind),
        ("as-of date", run.as_of.isoformat()),
        ("run id", run.id),
        ("run status", run.status),
        ("started at", run.started_at.isoformat()),
        ("finished at", run.finished_at.isoformat() if run.finished_at else None),
        ("current population's score dates", _window(plan, "current")),
        ("performance cohort's score dates", _window(plan, "performance")),
        ("stability window", plan.get("stability_window")),
        ("performance window", plan.get("performance_window")),
        ("score column", plan.get("score")),
        ("label column", plan.get("label")),
        ("weight column", plan.get("weight")),
        ("source snapshot", plan.get("snapshot")),
        ("baseline id", run.baseline_id),
        ("riskmon version of the run", run.riskmon_version),
        ("riskmon version of the export", __version__),
        ("configuration hash", run.config_hash),
    ]
    return [(key, value) for key, value in pairs]


def column_rows(areas: Sequence[Area]) -> list[Row]:
    """What every column of every sheet is."""
    rows: list[Row] = [("(every area)", "", name, text) for name, text in _COMMON]
    for area in areas:
        for section in area.sections:
            for column in section.columns:
                rows.append((area.sheet, section.number, column.header, column.description))
    rows += [(OTHER_SHEET, "", name, _OTHER[str(name)]) for name in OTHER_HEADER]
    return rows


def about_sheet(run: RunRecord, kind: str, areas: Sequence[Area]) -> Sheet:
    """The first sheet: title, the run's identity, and the table of columns."""
    rows: list[Row] = [(TITLE,), (f"Sections numbered as in: {SOURCE}",), ()]
    rows += identity(run, kind)
    rows += [()]
    headings = {0, len(rows)}
    rows += [COLUMNS_HEADER, *column_rows(areas)]
    return Sheet(ABOUT_SHEET, ABOUT_FILE, tuple(rows), frozenset(headings))
