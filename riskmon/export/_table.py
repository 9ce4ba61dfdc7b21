"""The declarations the workbook is laid out by: areas (one sheet each), their sections and
columns, and what each column is (:mod:`riskmon.export._sections` holds the one table).

A section reads stored figures by name, as strings: the export imports no figure family, so a
family's rename shows as a section "not available", never as an import error.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the sections a grade column reads a figure's parameter through: ``figure.param``
PARAM_SEPARATOR = "."


@dataclass(frozen=True)
class Column:
    """One figure column of a section: the stored figure (``name``, or ``name.param`` for one
    of its parameters) its portfolio rows and its grade rows read."""

    header: str
    description: str
    portfolio: str | None = None
    grade: str | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """The figure names this column reads."""
        return tuple(
            source.split(PARAM_SEPARATOR, 1)[0]
            for source in (self.portfolio, self.grade)
            if source is not None
        )


@dataclass(frozen=True)
class FigureSection:
    """A section of figures: a row for each segment's portfolio and, ``per_grade``, one for
    each of its grades (the figures stored with the grade's label as their variable)."""

    number: str
    title: str
    columns: tuple[Column, ...]
    #: why a run may store none of its figures, said in the section's "not available" row
    absent: str
    per_grade: bool = False

    @property
    def figure_names(self) -> tuple[str, ...]:
        """Every figure name the section reads, in column order, without repeats."""
        return tuple(dict.fromkeys(n for c in self.columns for n in c.sources))


@dataclass(frozen=True)
class BinColumn:
    """One column of a section of bins: a field of the stored bin (``label``, ``n_total``,
    ``total``, ``actual_share``, ``expected_share``) or of its ``extra`` (``extra.z``)."""

    header: str
    description: str
    field: str


@dataclass(frozen=True)
class BinSection:
    """A section of stored bins of one variable (a grade distribution, a migration matrix):
    a row per segment and bin."""

    number: str
    title: str
    variable: str
    columns: tuple[BinColumn, ...]
    absent: str


Section = FigureSection | BinSection


@dataclass(frozen=True)
class Area:
    """One area of the instructions (a chapter: PD, LGD, ...): one sheet of the workbook."""

    sheet: str
    #: the CSV file of the sheet, in a ``--format csv`` folder
    file: str
    title: str
    #: the model kinds whose runs it is written for
    kinds: frozenset[str]
    sections: tuple[Section, ...]
