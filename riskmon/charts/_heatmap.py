"""A heat map of a matrix: one square a cell, shaded by a share, with its count written in it
(the migration matrix: rows the grade at the start, columns the grade at the end)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: the side of one cell, and the room for the row and column labels
CELL = 34.0
LABEL_ROOM = 78.0
TITLE_ROOM = 18.0


@dataclass(frozen=True)
class HeatCell:
    """One square: its place, how dark (0..1), the count written in it and its tooltip;
    ``flag`` marks a cell a rule found (drawn with a red border)."""

    x: float
    y: float
    shade: float
    text: str
    share: str  # the cell's share of its row, under the count
    title: str
    flag: bool
    dark: bool  # white text on a dark square


@dataclass(frozen=True)
class HeatLabel:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class HeatMap:
    """Everything the ``heat_map`` macro draws; ``summary`` is its text alternative."""

    title: str
    summary: str
    width: int
    height: int
    cell: float
    cells: tuple[HeatCell, ...]
    rows: tuple[HeatLabel, ...]
    columns: tuple[HeatLabel, ...]
    row_title: str
    column_title: str
    #: where the grades end and the margins (no grade, appeared, left, defaulted) begin
    split_x: float
    split_y: float
    #: what an outlined (flagged) cell means, under the map; empty when nothing is flagged
    legend: str = ""


def _short(value: float) -> str:
    """A count in at most four characters: 812, 4.1k, 37k, 1.2M."""
    if value < 1_000:
        return f"{value:.0f}"
    if value < 10_000:
        return f"{value / 1_000:.1f}k"
    if value < 1_000_000:
        return f"{value / 1_000:.0f}k"
    return f"{value / 1_000_000:.1f}M"


def heat_map(
    title: str,
    counts: Sequence[Sequence[float]],
    *,
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    grades: int,
    flagged: Sequence[tuple[int, int]] = (),
    row_title: str = "from",
    column_title: str = "to",
    legend: str = "",
) -> HeatMap:
    """``counts`` (rows × columns) shaded by each cell's share of its row; the first ``grades``
    rows and columns are the grades, the rest margins, set apart by a line. The ``flagged``
    cells are outlined, and ``legend`` says why."""
    n_rows, n_columns = len(row_labels), len(column_labels)
    left, top = LABEL_ROOM, TITLE_ROOM + 14.0
    cells = []
    flags = set(flagged)
    for i, row in enumerate(counts):
        total = float(sum(row))
        for j, value in enumerate(row):
            share = value / total if total > 0 else 0.0
            title_ = f"{row_labels[i]} → {column_labels[j]}: {value:,.0f} ({share:.1%} of the row)"
            cells.append(
                HeatCell(
                    x=round(left + j * CELL, 1),
                    y=round(top + i * CELL, 1),
                    shade=round(share, 3),
                    text=_short(value) if value > 0 else "",
                    share=f"{share:.0%}" if value > 0 else "",
                    title=title_,
                    flag=(i, j) in flags,
                    dark=share > 0.5,
                )
            )
    rows = tuple(
        HeatLabel(left - 6, round(top + (i + 0.5) * CELL + 4, 1), label)
        for i, label in enumerate(row_labels)
    )
    columns = tuple(
        HeatLabel(round(left + (j + 0.5) * CELL, 1), top - 6, label)
        for j, label in enumerate(column_labels)
    )
    moved = sum(
        float(v)
        for i, row in enumerate(counts[:grades])
        for j, v in enumerate(row[:grades])
        if i != j
    )
    stayed = sum(float(counts[i][i]) for i in range(min(grades, len(counts))))
    summary = (
        f"{title}: {n_rows} rows by {n_columns} columns; {stayed:,.0f} obligors kept their grade, "
        f"{moved:,.0f} moved to another grade"
    )
    return HeatMap(
        title=title,
        summary=summary,
        width=int(left + n_columns * CELL + 8),
        height=int(top + n_rows * CELL + 8),
        cell=CELL,
        cells=tuple(cells),
        rows=rows,
        columns=columns,
        row_title=row_title,
        column_title=column_title,
        split_x=round(left + grades * CELL, 1),
        split_y=round(top + grades * CELL, 1),
        legend=legend,
    )
