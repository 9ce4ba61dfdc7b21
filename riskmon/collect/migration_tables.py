"""A migration pass's result: per segment, the obligors (and their weights) in each (from,
to) cell of grades, and the rows it could not link."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Migrations:
    """One segment's migrations: obligors (and weights) per (from, to) cell."""

    cells: dict[tuple[int, int], list[float]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0.0])
    )

    def add(self, cell: tuple[int, int], n: int, w: float) -> None:
        held = self.cells[cell]
        held[0] += n
        held[1] += w

    def count(self, cell: tuple[int, int]) -> int:
        return int(self.cells[cell][0]) if cell in self.cells else 0


@dataclass(frozen=True)
class MigrationTables:
    """Migrations per segment (the whole population ``""`` always present), and the rows that
    could not be linked: per snapshot, obligors with duplicate rows on their latest score date
    and rows without an obligor."""

    segments: dict[str, Migrations]
    duplicates: tuple[int, int]
    no_obligor: tuple[int, int]
    #: the snapshots' windows of score dates (start, end), as "YYYY-MM-DD to YYYY-MM-DD"
    windows: tuple[str, str] = ("", "")

    def equals(self, other: MigrationTables, *, rtol: float = 1e-9) -> bool:
        """Same cells with the same counts (weights to ``rtol``) and the same tallies."""
        if (self.duplicates, self.no_obligor) != (other.duplicates, other.no_obligor):
            return False
        if self.segments.keys() != other.segments.keys():
            return False
        for segment, mine in self.segments.items():
            theirs = other.segments[segment].cells
            if {k for k, v in mine.cells.items() if v[0]} != {k for k, v in theirs.items() if v[0]}:
                return False
            for key, (n, w) in mine.cells.items():
                if n and (theirs[key][0] != n or not np.isclose(theirs[key][1], w, rtol=rtol)):
                    return False
        return True
