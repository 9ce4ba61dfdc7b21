"""A stored run's figures and bins laid out as the areas' sections: the rows of each sheet.

Every row of a section starts with the section's number, so that a sheet filtered on that
column keeps whole sections. A figure stored without a value leaves its cell empty and says why
in the row's ``notes``; a section whose figures the run did not store has one row saying
"not available" and why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from riskmon.export._table import (
    PARAM_SEPARATOR,
    Area,
    BinSection,
    FigureSection,
    Section,
)
from riskmon.records import ALL, BinRecord, FigureRecord

#: a cell: text, a number, or empty
Cell = str | float | int | None
Row = tuple[Cell, ...]

#: the columns every section's table starts with and ends with
SECTION, SEGMENT, GRADE, NOTES = "section", "segment", "grade", "notes"
#: the segment column of the whole population, and the grade column of a portfolio row
WHOLE_POPULATION, PORTFOLIO = "(all)", "portfolio"
NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class Sheet:
    """One sheet: its name, the CSV file it becomes, and its rows (a row of no cells is a
    blank line between sections)."""

    name: str
    file: str
    rows: tuple[Row, ...]
    #: the rows that are headings (an area's or section's title, a table's column names)
    headings: frozenset[int] = frozenset()


class Stored:
    """A run's figures by (name, variable, segment), its bins by (variable, segment), and each
    segment's figures of a grade (variable not ALL), in the order stored: built once per
    export, read by every area's sheet."""

    def __init__(self, figures: Iterable[FigureRecord], bins: Iterable[BinRecord]):
        self.figures: dict[tuple[str, str, str], FigureRecord] = {}
        for f in figures:
            self.figures.setdefault((f.name, f.variable, f.segment), f)
        self.graded: dict[str, list[FigureRecord]] = {}
        for f in self.figures.values():
            if f.variable != ALL:
                self.graded.setdefault(f.segment, []).append(f)
        self.bins: dict[tuple[str, str], list[BinRecord]] = {}
        for b in bins:
            self.bins.setdefault((b.variable, b.segment), []).append(b)
        found = {f.segment for f in self.figures.values()} | {s for _, s in self.bins}
        self.segments = sorted(found, key=_segment_order)


def _segment_order(segment: str) -> tuple[bool, str]:
    return (segment != ALL, segment)


def segment_cell(segment: str) -> str:
    """What the segment column shows for ``segment``."""
    return WHOLE_POPULATION if segment == ALL else segment


def _read(stored: Stored, source: str | None, variable: str, segment: str) -> tuple[Cell, str]:
    """The value ``source`` (``figure`` or ``figure.param``) gives a row, and the reason when
    the figure is stored without one."""
    if source is None:
        return None, ""
    name, _, param = source.partition(PARAM_SEPARATOR)
    figure = stored.figures.get((name, variable, segment))
    if figure is None:
        return None, ""
    if param:
        value = figure.params.get(param)
        return (value if isinstance(value, (int, float)) else None), ""
    reason = "" if figure.value is not None else f"{name}: {figure.reason or NOT_AVAILABLE}"
    return figure.value, reason


def _figure_row(
    stored: Stored, section: FigureSection, segment: str, grade: str | None
) -> Row | None:
    cells: list[Cell] = []
    notes: list[str] = []
    found = False
    for column in section.columns:
        source = column.portfolio if grade is None else column.grade
        value, reason = _read(stored, source, grade or ALL, segment)
        found = found or bool(source and _is_stored(stored, source, grade or ALL, segment))
        cells.append(value)
        if reason and reason not in notes:
            notes.append(reason)
    if not found:
        return None
    grade_cell = PORTFOLIO if grade is None else grade
    return (section.number, segment_cell(segment), grade_cell, *cells, "; ".join(notes) or None)


def _is_stored(stored: Stored, source: str, variable: str, segment: str) -> bool:
    return (source.partition(PARAM_SEPARATOR)[0], variable, segment) in stored.figures


def _grades(stored: Stored, section: FigureSection, segment: str) -> list[str]:
    """The grades of ``segment`` the section has figures for, best first (by the grade's
    position, stored as its ``grade`` parameter, else as stored)."""
    names = {c.grade.partition(PARAM_SEPARATOR)[0] for c in section.columns if c.grade}
    found = [f for f in stored.graded.get(segment, ()) if f.name in names]
    position: dict[str, Any] = {}
    for f in found:
        position.setdefault(f.variable, f.params.get("grade"))
    stored_order = {label: i for i, label in enumerate(position)}

    def key(label: str) -> tuple[bool, float, int]:
        at = position[label]
        known = isinstance(at, (int, float))
        return (not known, float(at) if known else 0.0, stored_order[label])

    return sorted(position, key=key)


def figure_rows(stored: Stored, section: FigureSection) -> list[Row]:
    """The section's rows: each segment's grades (if per grade), then its portfolio."""
    rows: list[Row] = []
    for segment in stored.segments:
        grades = _grades(stored, section, segment) if section.per_grade else []
        for grade in [*grades, None]:
            row = _figure_row(stored, section, segment, grade)
            if row is not None:
                rows.append(row)
    return rows


def _bin_value(record: BinRecord, field: str) -> Cell:
    if field.startswith("extra."):
        value = record.extra.get(field.removeprefix("extra."))
    else:
        value = getattr(record, field)
    return value if isinstance(value, (str, int, float)) else None


def bin_rows(stored: Stored, section: BinSection) -> list[Row]:
    """A row per stored bin of the section's variable, segment by segment."""
    return [
        (section.number, segment_cell(segment), *(_bin_value(b, c.field) for c in section.columns))
        for segment in stored.segments
        for b in sorted(stored.bins.get((section.variable, segment), []), key=lambda b: b.bin_index)
    ]


def header(section: Section) -> Row:
    """The section's column headings."""
    if isinstance(section, BinSection):
        return (SECTION, SEGMENT, *(c.header for c in section.columns))
    return (SECTION, SEGMENT, GRADE, *(c.header for c in section.columns), NOTES)


def _section_rows(stored: Stored, section: Section) -> list[Row]:
    if isinstance(section, BinSection):
        rows = bin_rows(stored, section)
    else:
        rows = figure_rows(stored, section)
    return rows or [(section.number, f"{NOT_AVAILABLE}: {section.absent}")]


def area_sheet(area: Area, stored: Stored) -> Sheet:
    """The sheet of ``area`` for a run that stored ``stored``: the area's title, then each
    section's title, column names and rows, a blank row after each."""
    rows: list[Row] = [(area.title,), ()]
    headings = {0}
    for section in area.sections:
        headings |= {len(rows), len(rows) + 1}
        rows += [(section.number, section.title), header(section)]
        rows += [*_section_rows(stored, section), ()]
    return Sheet(area.sheet, area.file, tuple(rows), frozenset(headings))


def mapped_names(areas: Iterable[Area]) -> set[str]:
    """Every figure name a section of ``areas`` shows."""
    return {
        name
        for area in areas
        for section in area.sections
        if isinstance(section, FigureSection)
        for name in section.figure_names
    }


OTHER_SHEET, OTHER_FILE = "Other figures", "other_figures.csv"
OTHER_HEADER: Row = ("figure", "population", SEGMENT, "variable", "value", "reason", "parameters")


def other_sheet(figures: Sequence[FigureRecord], areas: Iterable[Area]) -> Sheet:
    """Every stored figure no section of ``areas`` shows, so that the workbook holds all of
    the run's figures."""
    shown = mapped_names(areas)
    rows: list[Row] = [
        (
            f.name,
            f.population,
            segment_cell(f.segment),
            f.variable,
            f.value,
            f.reason,
            json.dumps(f.params, sort_keys=True, default=str, ensure_ascii=False)
            if f.params
            else None,
        )
        for f in figures
        if f.name not in shown
    ]
    return Sheet(OTHER_SHEET, OTHER_FILE, (OTHER_HEADER, *rows), frozenset({0}))
