"""The sums a collect pass adds up before they become count tables (:class:`Aggregate`).

A pass adds its aggregate rows — ``(population, variable, segment values, label, key, rows,
weight)`` — cell by cell or a batch at a time, into a table of cells per population and variable
held in columns (:class:`~.celltable.CellTable`: a few dozen bytes a cell, where a dict held
about 360); a run summing stored days (:func:`riskmon.collect.days.merge`) holds a variable whose
keys are numbers as columns, a *block* per segment values and label (:attr:`Aggregate.blocks`).
:mod:`.tables` makes the count tables of both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.collect.celltable import CellTable, Codes, aligned
from riskmon.collect.daycells import Column
from riskmon.collect.request import CollectRequest
from riskmon.records import LevelCensus

#: a cell: (population, variable, segment values, label, key)
Key = tuple[str, str, tuple[Any, ...], Any, Any]
#: a cell read: its key, rows, weight, and PD sums and target moments (None: none)
Cell = tuple[Key, int, float, Any, Any]
#: (population, variable, segment values, label): a column of keys
BlockKey = tuple[str, str, tuple[Any, ...], Any]


@dataclass(frozen=True)
class Groups:
    """Groups of cells, ``(population, segment values, label)`` each, as an aggregate codes
    them (:meth:`Aggregate.groups`)."""

    #: the groups' populations
    populations: list[str]
    #: each group's population (an index into :attr:`populations`)
    population: npt.NDArray[np.intp]
    #: each group's segment values' and label's codes (a row each)
    codes: npt.NDArray[np.int64]


@dataclass
class Aggregate:
    """Aggregate rows, summed over however many chunks or queries produced them."""

    #: the cells per (population, variable), in the order their first cell came
    tables: dict[tuple[str, str], CellTable] = field(default_factory=dict)
    #: the codes of the cells' segment values (one tuple each, shared by every cell of the
    #: segment), labels, and each variable's keys
    segments: Codes = field(default_factory=Codes)
    labels: Codes = field(default_factory=Codes)
    keys: dict[str, Codes] = field(default_factory=dict)
    #: per ``sums`` variable: rows whose PD was NULL or outside [0, 1]
    invalid_pds: dict[str, int] = field(default_factory=dict)
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

    @classmethod
    def reading(cls, request: CollectRequest) -> Aggregate:
        """The aggregate of ``request``'s rows, its columnar variables held in columns
        (:attr:`CollectRequest.columnar`)."""
        return cls(columnar=request.columnar)

    def add(
        self, key: Key, rows: int, weight: float | None, sums: Any = None, moments: Any = None
    ) -> None:
        """One cell's ``rows``, ``weight`` (None: a weight a row), and its PD sums and target
        moments (None: none)."""
        population, variable, values, label, value = key
        if variable in self.columnar:
            group = (population, variable, self.segment(values), label)
            if (column := self.columns.get(group)) is None:
                column = self.columns[group] = Column()
            column.append(value, int(rows), float(rows if weight is None else weight))
            return
        w = float(rows if weight is None else weight)
        self.table(population, variable).add(self._codes(key), int(rows), w, sums, moments)

    def add_sums(self, key: Key, which: str, values: Any) -> None:
        """A cell's PD sums (``which``: "sums") or target moments ("moments") alone."""
        self.table(key[0], key[1]).add_sums(self._codes(key), which, values)

    def segment(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The one tuple every cell of the segment ``values`` is kept under."""
        kept: tuple[Any, ...] = self.segments.values[self.segments.code(values)]
        return kept

    def table(self, population: str, variable: str) -> CellTable:
        """The cells of ``population``'s ``variable`` (a new table if it has none yet)."""
        table = self.tables.get((population, variable))
        if table is None:
            table = self.tables[(population, variable)] = CellTable()
        return table

    def key_codes(self, variable: str) -> Codes:
        """The codes of ``variable``'s keys (new ones if it has none yet)."""
        keys = self.keys.get(variable)
        if keys is None:
            keys = self.keys[variable] = Codes()
        return keys

    def _codes(self, key: Key) -> tuple[int, int, int]:
        _, variable, values, label, value = key
        keys = self.key_codes(variable)
        return self.segments.code(values), self.labels.code(label), keys.code(value)

    def groups(self, groups: Sequence[tuple[str, tuple[Any, ...], Any]]) -> Groups:
        """Groups of cells — ``(population, segment values, label)`` each — coded for
        :meth:`add_grouped`."""
        names: dict[str, int] = {}
        population = [names.setdefault(name, len(names)) for name, _, _ in groups]
        codes = [
            (self.segments.code(values), self.labels.code(label)) for _, values, label in groups
        ]
        return Groups(
            list(names),
            np.asarray(population, dtype=np.intp),
            np.asarray(codes, dtype=np.int64).reshape(-1, 2),
        )

    def add_grouped(
        self,
        variable: str,
        groups: Groups,
        keys: Sequence[Any],
        cells: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]],
        rows: npt.NDArray[Any],
        weights: npt.NDArray[Any] | None,
        sums: npt.NDArray[Any] | None = None,
        moments: npt.NDArray[Any] | None = None,
    ) -> None:
        """:meth:`add` of many cells of ``variable`` at once, each cell a group of ``groups``
        and one of ``keys`` (``cells``: the group's and the key's index, an entry a cell), with
        its ``rows`` and ``weights`` (None: a weight a row), and its PD sums and target moments
        (a row each of ``sums`` and ``moments``)."""
        group, key = cells
        if not len(group):
            return
        key_codes = self.key_codes(variable)
        coded_keys = np.asarray([key_codes.code(k) for k in keys], dtype=np.int64)
        codes = np.empty((len(group), 3), np.int64)
        codes[:, :2] = groups.codes[group]
        codes[:, 2] = coded_keys[key]
        counts = np.empty((len(group), 2), np.float64)
        counts[:, 0] = rows
        counts[:, 1] = rows if weights is None else weights
        population = groups.population[group]
        for i, name in enumerate(groups.populations):
            index = population == i if len(groups.populations) > 1 else slice(None)
            self.table(name, variable).extend(
                codes[index],
                counts[index],
                None if sums is None else sums[index],
                None if moments is None else moments[index],
            )

    def add_all(self, other: Aggregate) -> None:
        """Add every cell of ``other`` (and its invalid PDs and targets)."""
        assert not other.blocks, "a pass's reading holds cells, not blocks"
        segments = _recoded(self.segments, other.segments)
        labels = _recoded(self.labels, other.labels)
        for (population, variable), theirs in other.tables.items():
            keys = _recoded(self.key_codes(variable), other.keys[variable])
            counts, sums, moments = theirs.summed()
            table = self.table(population, variable)
            for which, log in (("counts", counts), ("sums", sums), ("moments", moments)):
                if log is not None:
                    recoded = np.column_stack(
                        [segments[log.codes[:, 0]], labels[log.codes[:, 1]], keys[log.codes[:, 2]]]
                    )
                    table.log(which, log.values.shape[1]).append(recoded, log.values)
        for held, more in (
            (self.invalid_pds, other.invalid_pds),
            (self.invalid_targets, other.invalid_targets),
        ):
            for name, n in more.items():
                held[name] = held.get(name, 0) + n

    def read(self, population: str, variable: str) -> Iterator[Cell]:
        """The cells of ``population``'s ``variable`` in the order they first came: each one's
        key, rows, weight, and PD sums and target moments (None where it has none)."""
        counts, sums, moments = self.tables[(population, variable)].summed()
        codes = counts.codes.T.tolist()
        keys = self.keys[variable].values
        for values, label, key, n, w, cell_sums, cell_moments in zip(
            map(self.segments.values.__getitem__, codes[0]),
            map(self.labels.values.__getitem__, codes[1]),
            map(keys.__getitem__, codes[2]),
            counts.values[:, 0].astype(np.int64).tolist(),
            counts.values[:, 1].tolist(),
            aligned(counts.codes, sums),
            aligned(counts.codes, moments),
            strict=True,
        ):
            yield (population, variable, values, label, key), n, w, cell_sums, cell_moments

    def cell_items(self) -> Iterator[tuple[Key, int, float]]:
        """Every cell's key, rows and weight, table by table."""
        for population, variable in self.tables:
            for key, n, w, _, _ in self.read(population, variable):
                yield key, n, w

    def sum_items(self, which: str) -> Iterator[tuple[Key, npt.NDArray[np.float64]]]:
        """Every cell's PD sums (``which``: "sums") or target moments ("moments"), where it
        has them."""
        segments, labels = self.segments.values, self.labels.values
        for (population, variable), table in self.tables.items():
            log = table.summed()[1 if which == "sums" else 2]
            if log is None:
                continue
            keys = self.keys[variable].values
            for (s, lb, k), values in zip(log.codes.tolist(), log.values, strict=True):
                yield (population, variable, segments[s], labels[lb], keys[k]), values

    def cell_dict(self) -> dict[Key, tuple[int, float]]:
        """Every cell's rows and weight by key: a copy, for tests (a run reads the tables)."""
        return {key: (n, w) for key, n, w in self.cell_items()}

    def sum_dict(self, which: str) -> dict[Key, npt.NDArray[np.float64]]:
        """:meth:`sum_items` by key: a copy, for tests."""
        return dict(self.sum_items(which))

    def count_invalid_pd(self, variable: str, rows: Any) -> None:
        self.invalid_pds[variable] = self.invalid_pds.get(variable, 0) + int(rows or 0)

    def count_invalid_target(self, variable: str, rows: Any) -> None:
        self.invalid_targets[variable] = self.invalid_targets.get(variable, 0) + int(rows or 0)

    @property
    def invalid_pd(self) -> int:
        """Rows whose PD was NULL or outside [0, 1] (every ``sums`` variable sees them all)."""
        return max(self.invalid_pds.values(), default=0)


def _recoded(mine: Codes, theirs: Codes) -> npt.NDArray[np.int64]:
    """Each of ``theirs``' codes as a code of ``mine`` (new values coded as they come)."""
    return np.array([mine.code(value) for value in theirs.values], dtype=np.int64)
