"""The rows of a ``packed`` statement (:mod:`.pushdown`) added into an aggregate a batch at a
time, as arrays: each row counts once for every variable of its pack, so a batch of rows
holds each (population, segment, label, bin) of a variable many times over; it is summed
with numpy first (``bincount``, which adds in row order, as adding row by row does) and each
cell is then added once (:meth:`Aggregate.add_grouped`). The cells, their sums and the counts of
invalid weights, PDs and targets are those :func:`.grouped.run` adds row by row, but for the
rounding of a cell whose rows span two batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.collect.aggregate import Aggregate, Groups
from riskmon.collect.census import LevelTally
from riskmon.collect.request import Variable
from riskmon.collect.selection import QueryColumns


def _codes(values: Sequence[Any]) -> tuple[npt.NDArray[np.intp], list[Any]]:
    """Each value's code, by first appearance, and the distinct values: as a dict keys them
    (``1 == 1.0``; None a value of its own)."""
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), np.intp, len(values))
    return codes, list(index)


def _factorized(keys: npt.NDArray[np.intp]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Each key's code, by first appearance, and the distinct keys in that order: what
    ``pandas.factorize`` gives for integers, with numpy's sort (so that a run over a database
    does not import pandas, about 70 MB of a process's memory with pyarrow)."""
    distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first)  # the distinct keys' first positions are distinct: no ties
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], distinct[order]


def _floats(values: Sequence[Any]) -> npt.NDArray[np.float64]:
    """A column of sums as doubles, a NULL (the sum of no rows) as 0."""
    return np.fromiter((0.0 if v is None else float(v) for v in values), np.float64, len(values))


def _stack(columns: Sequence[Sequence[Any]]) -> npt.NDArray[np.float64]:
    """Columns of sums as the columns of one array (a row's sums, a row of it)."""
    return np.column_stack([_floats(c) for c in columns])


def _total(counts: Sequence[Any]) -> int:
    return sum(int(n or 0) for n in counts)


@dataclass
class PackedRows:
    """How the rows of one ``packed`` statement read, and where they are added."""

    aggregate: Aggregate
    cols: QueryColumns
    variables: tuple[Variable, ...]
    binners: list[Callable[[Any], Any]]
    n_segments: int
    weighted: bool
    n_measures: int  # rows, and weight and invalid weights where weighted
    n_sums: int  # the bad PD count and the PD sums, or 0
    n_moments: int  # the bad target count and the moments, or 0
    summed: set[str]
    with_moments: set[str]
    first_variable: str
    tally: LevelTally
    watched: list[tuple[int, str, int]]

    def add(self, batch: Sequence[Any]) -> int:
        """Add ``batch``'s rows; how many of them had an invalid weight."""
        if not batch:
            return 0
        columns = list(zip(*batch, strict=True))
        s, width = self.n_segments, len(columns)
        n_tail = self.n_measures + self.n_sums + self.n_moments
        counts = columns[width - n_tail]  # each row's loans
        rows = np.fromiter((int(n) for n in counts), np.int64, len(batch))
        weights = _floats(columns[width - n_tail + 1]) if self.weighted else None
        end = width - self.n_moments  # where the moments' columns start (their bad count)
        sums = _stack(columns[end - self.n_sums + 1 : end]) if self.n_sums else None
        moments = _stack(columns[end + 1 :]) if self.n_moments else None
        groups, heads = _codes(list(zip(*columns[: 2 + s], strict=True)))
        coded = self.aggregate.groups(
            [(self.cols.population_name(h[0]), h[1 : 1 + s], h[1 + s]) for h in heads]
        )
        names = [v.name for v in self.variables]
        for i, (name, to_bin) in enumerate(zip(names, self.binners, strict=True)):
            keys, distinct = _codes(columns[2 + s + i])
            bins, binned = _codes([to_bin(key) for key in distinct])
            cells, first = _factorized(groups * len(binned) + bins[keys])
            self._add_cells(
                name,
                coded,
                binned,
                cells,
                np.divmod(first, len(binned)),
                rows,
                weights,
                sums if name in self.summed else None,
                moments if name in self.with_moments else None,
            )
            if sums is not None and name in self.summed:
                self.aggregate.count_invalid_pd(name, _total(columns[end - self.n_sums]))
            if moments is not None and name in self.with_moments:
                self.aggregate.count_invalid_target(name, _total(columns[end]))
        self._census(columns, counts, weights)
        if not (self.weighted and self.first_variable in names):
            return 0
        return _total(columns[width - n_tail + 2])

    def _add_cells(
        self,
        name: str,
        groups: Groups,
        bins: list[Any],
        cells: npt.NDArray[np.intp],
        heads: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]],
        rows: npt.NDArray[np.int64],
        weights: npt.NDArray[np.float64] | None,
        sums: npt.NDArray[np.float64] | None,
        moments: npt.NDArray[np.float64] | None,
    ) -> None:
        """The rows of variable ``name`` summed per cell (``cells``: each row's); ``heads``:
        each cell's group (of ``groups``) and bin (of ``bins``)."""
        n = len(heads[0])
        self.aggregate.add_grouped(
            name,
            groups,
            bins,
            heads,
            np.bincount(cells, weights=rows, minlength=n).astype(np.int64),
            None if weights is None else np.bincount(cells, weights, n),
            None if sums is None else _by_cell(cells, sums, n),
            None if moments is None else _by_cell(cells, moments, n),
        )

    def _census(self, columns: list[tuple[Any, ...]], rows: tuple[Any, ...], weights: Any) -> None:
        """The levels in each watched variable's unseen bin, row by row (few rows are)."""
        if not self.watched:
            return
        tally, s = self.tally, self.n_segments
        names = {code: self.cols.population_name(code) for code in set(columns[0])}
        counted = [names[code] == tally.population for code in columns[0]]
        for i, name, unseen in self.watched:
            to_bin = self.binners[i]
            for row, key in enumerate(columns[2 + s + i]):
                if counted[row] and to_bin(key) == unseen:
                    n = rows[row]
                    tally.add(name, str(key), n, n if weights is None else float(weights[row]))


def _by_cell(
    cells: npt.NDArray[np.intp], values: npt.NDArray[np.float64], n: int
) -> npt.NDArray[np.float64]:
    """Each column of ``values`` summed per cell, in row order."""
    return np.column_stack([np.bincount(cells, values[:, j], n) for j in range(values.shape[1])])
