"""The sums a collect pass adds up before they become count tables (:class:`Aggregate`).

A pass adds its aggregate rows — ``(population, variable, segment values, label, key, rows,
weight)`` — cell by cell (:attr:`Aggregate.cells`); a run summing stored days
(:func:`riskmon.collect.days.merge`) holds a variable whose keys are numbers as columns, a
*block* per segment values and label (:attr:`Aggregate.blocks`). :mod:`.tables` makes the
count tables of both.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.collect.daycells import Column, sum_counts
from riskmon.collect.request import CollectRequest
from riskmon.records import LevelCensus

#: (population, variable, segment values, label, key) -> [rows, weight]
Key = tuple[str, str, tuple[Any, ...], Any, Any]
#: (population, variable, segment values, label): a column of keys
BlockKey = tuple[str, str, tuple[Any, ...], Any]


@dataclass
class Aggregate:
    """Aggregate rows, summed over however many chunks or queries produced them."""

    cells: dict[Key, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0.0]))
    #: the PD sums of the cells of ``sums`` variables (see :data:`~riskmon.metrics.PD_SUMS`)
    sums: dict[Key, npt.NDArray[np.float64]] = field(default_factory=dict)
    #: per ``sums`` variable: rows whose PD was NULL or outside [0, 1]
    invalid_pds: dict[str, int] = field(default_factory=dict)
    #: the target's moments of the cells of ``moments`` variables (:data:`TARGET_MOMENTS`)
    moments: dict[Key, npt.NDArray[np.float64]] = field(default_factory=dict)
    #: per ``moments`` variable: rows whose realised target was NaN or infinite
    invalid_targets: dict[str, int] = field(default_factory=dict)
    #: the census of each variable whose levels the rows gave (:class:`~.census.LevelTally`)
    levels: dict[str, LevelCensus] = field(default_factory=dict)

    #: a pass by day's raw variables (:meth:`reading`): a column per day, segment and label
    columnar: frozenset[str] = frozenset()
    columns: dict[BlockKey, Column] = field(default_factory=dict)
    #: a window summed from its days (``riskmon.collect.days.merge``): the variables whose
    #: keys are numbers, a column per segment values and label, its keys distinct, ascending
    blocks: dict[BlockKey, Column] = field(default_factory=dict)
    #: each distinct segment values' tuple, shared by every cell of the segment
    _segments: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)

    @classmethod
    def reading(cls, request: CollectRequest) -> Aggregate:
        """The aggregate of ``request``'s rows: by day, its raw variables held in columns (a
        ``GROUP BY`` returns each of their keys once; about a key a loan or two)."""
        raw = [v.name for v in request.variables if not (v.binning or v.sums or v.moments)]
        return cls(columnar=frozenset(raw if request.by_day else ()))

    def add(
        self, key: Key, rows: int, weight: float | None, sums: Any = None, moments: Any = None
    ) -> None:
        if key[1] in self.columnar:
            population, variable, values, label, value = key
            group = (population, variable, self.segment(values), label)
            if (column := self.columns.get(group)) is None:
                column = self.columns[group] = Column()
            column.append(value, int(rows), float(rows if weight is None else weight))
            return
        cell = self.cells.get(key)
        if cell is None:  # a new cell: kept under its segment's one tuple (and one string)
            population, variable, values, label, bin_key = key
            key = (population, variable, self.segment(values), label, bin_key)
            self.cells[key] = [int(rows), float(rows if weight is None else weight)]
        else:
            cell[0] += int(rows)
            cell[1] += float(rows if weight is None else weight)
        if sums is not None:
            _accumulate(self.sums, key, sums)
        if moments is not None:
            _accumulate(self.moments, key, moments)

    def segment(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The one tuple every cell of the segment ``values`` is kept under."""
        return self._segments.setdefault(values, values)

    def add_cells(
        self,
        keys: list[Key],
        rows: list[int],
        weights: list[float] | None,
        sums: npt.NDArray[Any] | None = None,
        moments: npt.NDArray[Any] | None = None,
    ) -> None:
        """:meth:`add` of many cells at once: ``keys`` (their segment values already held by
        :meth:`segment`), their ``rows`` and ``weights`` (None: a weight a row), and their PD
        sums and target moments as one row each of ``sums`` and ``moments``."""
        sum_counts(self.cells, keys, rows, [float(n) for n in rows] if weights is None else weights)
        for held, values in ((self.sums, sums), (self.moments, moments)):
            if values is None:
                continue
            for key, row in zip(keys, values, strict=True):
                before = held.get(key)
                held[key] = row.copy() if before is None else before + row

    def add_all(self, other: Aggregate) -> None:
        """Add every cell of ``other`` (and its invalid PDs and targets); where this one holds
        none of its cells (the score's raw values of a window: about a key a loan), they are
        copied at once."""
        assert not other.blocks, "a pass's reading holds cells, not blocks"
        cells = self.cells
        if cells.keys().isdisjoint(other.cells.keys()):
            cells.update((key, [n, w]) for key, (n, w) in other.cells.items())
            for mine, theirs in ((self.sums, other.sums), (self.moments, other.moments)):
                mine.update((k, np.array(v, dtype=np.float64)) for k, v in theirs.items())
        else:
            for key, (n, w) in other.cells.items():
                self.add(key, int(n), w, other.sums.get(key), other.moments.get(key))
        for held, more in (
            (self.invalid_pds, other.invalid_pds),
            (self.invalid_targets, other.invalid_targets),
        ):
            for name, n in more.items():
                held[name] = held.get(name, 0) + n

    def count_invalid_pd(self, variable: str, rows: Any) -> None:
        self.invalid_pds[variable] = self.invalid_pds.get(variable, 0) + int(rows or 0)

    def count_invalid_target(self, variable: str, rows: Any) -> None:
        self.invalid_targets[variable] = self.invalid_targets.get(variable, 0) + int(rows or 0)

    @property
    def invalid_pd(self) -> int:
        """Rows whose PD was NULL or outside [0, 1] (every ``sums`` variable sees them all)."""
        return max(self.invalid_pds.values(), default=0)


def _accumulate(held: dict[Key, npt.NDArray[np.float64]], key: Key, values: Any) -> None:
    """Add a cell's sums into ``held`` (a NULL sum, of no rows, as 0)."""
    array = np.asarray([0.0 if v is None else float(v) for v in values])
    before = held.get(key)
    held[key] = array if before is None else before + array
