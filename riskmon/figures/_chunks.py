"""A family's records for a run, given at once or segment by segment, and how the figures'
step holds them in columns as they come (:func:`hold_computed`), marking the weighted figures
whose test counts loans (:func:`mark_row_tests`)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence

from riskmon.figure_table import Figures
from riskmon.held import Held
from riskmon.records import BinRecord, FigureRecord

#: a family's figures and bins for a run, or a part of them (one segment's)
Chunk = tuple[list[FigureRecord], list[BinRecord]]
#: what a family's ``compute`` gives: one :data:`Chunk`, or, for a family whose records grow
#: with the segments, an iterator of chunks (a segment's each), held as they come so that the
#: run never holds a family's records for thousands of segments as records at once
Computed = Chunk | Iterator[Chunk]


#: what a weighted figure whose test counts loans says of it (``params["approximate"]``)
ROWS_NOT_WEIGHTS = (
    "weighted figure, test on loan counts: its p-value, critical value and interval count "
    "loans (rows), not Kish's effective sample size (Σw)²/Σw², so they are approximate"
)


def mark_row_tests(figures: Sequence[FigureRecord], names: Collection[str]) -> None:
    """Mark the figures of ``names`` (weighted, with a test on loan counts) approximate."""
    for figure in figures:
        if figure.name in names and figure.value is not None:
            figure.params["approximate"] = ROWS_NOT_WEIGHTS


#: how many records the figures' step makes before it holds them in columns
HOLD_EVERY = 5_000


def chunks(computed: Computed) -> Iterator[Chunk]:
    """The chunks of a family's ``compute`` result, one or many."""
    return iter((computed,)) if isinstance(computed, tuple) else computed


def hold_computed(
    families: Iterable[Computed], row_tests: Collection[str]
) -> tuple[Figures, Held[BinRecord]]:
    """The figures and bins of ``families`` (each family's ``compute`` result, computed when
    its turn comes), held in columns (:mod:`riskmon.held`) every :data:`HOLD_EVERY` records:
    a family that gives them segment by segment is never held as records for all its segments
    at once. The figures of ``row_tests`` are marked approximate (:func:`mark_row_tests`)."""
    figures, bins = Figures(), Held(BinRecord)
    found: list[FigureRecord] = []
    rows: list[BinRecord] = []

    def hold() -> None:
        if row_tests:
            mark_row_tests(found, row_tests)
        figures.extend(found)
        bins.extend(rows)
        found.clear()
        rows.clear()

    for computed in families:
        for more, more_rows in chunks(computed):
            found += more
            rows += more_rows
            if len(found) + len(rows) >= HOLD_EVERY:
                hold()
    hold()
    return figures, bins
