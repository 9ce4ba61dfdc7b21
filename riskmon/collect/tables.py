"""How a collect pass's aggregated rows become count tables (the request: :mod:`.request`).

Both ways of collecting (SQL pushdown and the streaming reader) produce the same *aggregate
rows* — ``(population, variable, segment values, label, key, rows, weight)`` — and this module
alone turns them into :class:`~riskmon.metrics.CountTable`\\ s, so the two cannot disagree on
anything but the rows themselves.

Segments: every segment column is reported on its own, as ``"column=value"`` (a NULL value as
``column IS NULL``), besides the whole population (segment ``""``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.collect.compact import CountTables
from riskmon.collect.daycells import Column, sum_counts
from riskmon.collect.migration_tables import MigrationTables
from riskmon.collect.request import CollectRequest, Variable
from riskmon.metrics import (
    CountTable,
    PdTable,
    TargetTable,
    VintageTable,
)
from riskmon.plan import DateWindow
from riskmon.records import ALL, Exclusions, LevelCensus

#: (population, variable, segment values, label, key) -> [rows, weight]
Key = tuple[str, str, tuple[Any, ...], Any, Any]


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
    columns: dict[tuple[str, str, tuple[Any, ...], Any], Column] = field(default_factory=dict)
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


def segment_key(column: str, value: Any) -> str:
    """``column=value``; NULL as ``column IS NULL``, which no value can be mistaken for."""
    return f"{column} IS NULL" if value is None else f"{column}={value}"


@dataclass(frozen=True)
class PopulationCounts:
    """Rows of one population: labeled (matured) and unlabeled (not yet matured)."""

    n_rows: int
    n_unlabeled: int


@dataclass(frozen=True)
class CollectedTables:
    """Count tables by population, variable and segment, and the row counts behind them."""

    #: a fine binning's sparse tables are held compactly (:class:`~.compact.CountTables`)
    tables: Mapping[tuple[str, str, str], CountTable]
    counts: dict[tuple[str, str], PopulationCounts]  # (population, segment) -> counts
    #: PD sums per (population, variable, segment) of the variables collected with ``sums``
    pd_tables: dict[tuple[str, str, str], PdTable] = field(default_factory=dict)
    #: the target's moments per (population, variable, segment) of the variables collected
    #: with ``moments``
    target_tables: dict[tuple[str, str, str], TargetTable] = field(default_factory=dict)
    #: loans whose PD was NULL or outside [0, 1] (a source whose PD is not strict)
    invalid_pd: int = 0
    #: the obligors' migrations, read in the same transaction, when they were asked for
    migrations: MigrationTables | None = None
    #: each population's window of score dates
    windows: dict[str, DateWindow] = field(default_factory=dict)
    #: each population's loans read and left out (when the request named its score)
    exclusions: dict[str, Exclusions] = field(default_factory=dict)
    #: the levels in each censused variable's last bin (unseen, or "other")
    levels: dict[str, LevelCensus] = field(default_factory=dict)
    #: the vintage curves per segment, when they were asked for
    vintages: dict[str, VintageTable] = field(default_factory=dict)
    #: the cells of the days a pass read by day (``riskmon.collect.daycells.DayCells``), to keep
    day_cells: dict[tuple[str, Any], Any] = field(default_factory=dict)
    #: per population read by day, how many of its window's days were read from the source
    #: (the others' sums came from the store); empty when the windows were read whole
    days_read: dict[str, int] = field(default_factory=dict)
    #: per population read by day, the days read before whose fingerprint showed their rows
    #: unchanged: their stored sums were used (``riskmon.collect.fingerprint``)
    days_unchanged: dict[str, int] = field(default_factory=dict)

    def table(self, population: str, variable: str, segment: str = ALL) -> CountTable:
        """The count table of ``variable`` in ``population`` (and ``segment``)."""
        return self.tables[(population, variable, segment)]

    def segments(self) -> list[str]:
        """Every segment key present, the whole population first."""
        keys = sorted({segment for _, _, segment in self.tables})
        return sorted(keys, key=lambda s: (s != ALL, s))

    def equals(self, other: CollectedTables, *, rtol: float = 1e-12) -> bool:
        """Same tables with the same counts (weights to ``rtol``) and the same row counts."""
        return (
            self.tables.keys() == other.tables.keys()
            and self.counts == other.counts
            and all(t.equals(other.tables[k], rtol=rtol) for k, t in self.tables.items())
            and self.pd_tables.keys() == other.pd_tables.keys()
            and all(t.equals(other.pd_tables[k], rtol=rtol) for k, t in self.pd_tables.items())
            and self.target_tables.keys() == other.target_tables.keys()
            and all(
                t.equals(other.target_tables[k], rtol=rtol) for k, t in self.target_tables.items()
            )
        )


def _rollups(request: CollectRequest, segment_values: tuple[Any, ...]) -> Iterable[str]:
    yield ALL
    for column, value in zip(request.segments, segment_values, strict=True):
        yield segment_key(column, value)


def assemble(request: CollectRequest, aggregate: Aggregate) -> CollectedTables:
    """Count tables from aggregate rows: rolled up per segment, NULL labels counted apart.

    ``aggregate``'s cells (and their sums) are taken out of it as their tables are made: with
    thousands of segments, every cell held beside every table was the collect's peak."""
    labeled = {p.name: p.labeled for p in request.populations}
    # a joint table is on its integer keys, not on bins
    binnings = {v.name: None if v.crossed else v.binning for v in request.variables}
    sums = _Sums(defaultdict(list), defaultdict(list))
    tables = CountTables()
    counts: dict[tuple[str, str], PopulationCounts] = {}
    first_variable = request.variables[0].name
    # one variable of one population at a time: only its rows per segment are held at once
    # beside the cells (with thousands of segments, all rows at once doubled the cells' memory)
    by_variable: dict[tuple[str, str], list[Key]] = defaultdict(list)
    for cell_key in aggregate.cells:
        by_variable[(cell_key[0], cell_key[1])].append(cell_key)
    rollups: dict[tuple[Any, ...], list[str]] = {}  # a few distinct segment values
    for population, variable in list(by_variable):
        cell_keys = by_variable.pop((population, variable))
        is_labeled = labeled[population]
        rows = _segment_rows(request, aggregate, cell_keys, is_labeled, rollups, sums)
        for segment, group in rows.items():
            usable = [r for r in group if r[1] is not None] if is_labeled else group
            tables[(population, variable, segment)] = CountTable.from_rows(
                ((key, _label(label) if is_labeled else None, n, w) for key, label, n, w in usable),
                binning=binnings[variable],
                labeled=is_labeled,
            )
            if variable == first_variable:
                n_all = sum(r[2] for r in group)
                n_unlabeled = sum(r[2] for r in group if r[1] is None)
                counts[(population, segment)] = PopulationCounts(n_all, n_unlabeled)
        del rows
        _let_go(aggregate, cell_keys, request.variable(variable))
    # a population with no rows still gets its (empty) tables, so a run can say "no loans"
    for empty in request.populations:
        if (empty.name, ALL) in counts:
            continue
        counts[(empty.name, ALL)] = PopulationCounts(0, 0)
        for var in request.variables:
            tables[(empty.name, var.name, ALL)] = CountTable.from_rows(
                [], binning=binnings[var.name], labeled=empty.labeled
            )
    return CollectedTables(
        tables=tables,
        counts=counts,
        pd_tables=_pd_tables(request, sums.pd),
        target_tables=_target_tables(request, sums.moments),
        invalid_pd=aggregate.invalid_pd,
        windows={p.name: p.window for p in request.populations},
    )


def _let_go(aggregate: Aggregate, cell_keys: list[Key], variable: Variable) -> None:
    """Take the cells ``cell_keys`` of ``variable``, made into tables, out of ``aggregate``
    (and their PD sums and moments, where the variable has them)."""
    cells = aggregate.cells
    for cell_key in cell_keys:
        del cells[cell_key]
    for held, kept in ((aggregate.sums, variable.sums), (aggregate.moments, variable.moments)):
        if kept and held:
            for cell_key in cell_keys:
                held.pop(cell_key, None)


@dataclass(frozen=True)
class _Sums:
    """The PD sums and the target's moments of the cells, per (population, variable, segment)."""

    pd: dict[tuple[str, str, str], list[tuple[int, int, float, float, Any]]]
    moments: dict[tuple[str, str, str], list[tuple[int, float, float, Any]]]


def _segment_rows(
    request: CollectRequest,
    aggregate: Aggregate,
    cell_keys: list[Key],
    labeled: bool,
    rollups: dict[tuple[Any, ...], list[str]],
    sums: _Sums,
) -> dict[str, list[tuple[Any, Any, int, float]]]:
    """The rows ``(key, label, rows, weight)`` per segment of one population's variable (its
    ``cell_keys``); its PD sums and moments are added to ``sums``."""
    rows: dict[str, list[tuple[Any, Any, int, float]]] = defaultdict(list)
    for cell_key in cell_keys:
        population, variable, segment_values, label, key = cell_key
        n, w = aggregate.cells[cell_key]
        segments = rollups.get(segment_values)
        if segments is None:
            segments = rollups[segment_values] = list(_rollups(request, segment_values))
        row = (key, label, int(n), w)
        cell_sums = aggregate.sums.get(cell_key)
        cell_moments = aggregate.moments.get(cell_key)
        # the PD sums and the moments of the loans the count tables count (a labeled
        # population's loans without a label are counted apart)
        counted = not (labeled and label is None)
        for segment in segments:
            rows[segment].append(row)
        if not counted:
            continue
        if cell_sums is not None:
            summed = (key, _label(label) if labeled else 0, int(n), w, cell_sums)
            for segment in segments:
                sums.pd[(population, variable, segment)].append(summed)
        if cell_moments is not None:
            moments = (key, int(n), w, cell_moments)
            for segment in segments:
                sums.moments[(population, variable, segment)].append(moments)
    return rows


def _pd_tables(
    request: CollectRequest,
    summed: dict[tuple[str, str, str], list[tuple[int, int, float, float, Any]]],
) -> dict[tuple[str, str, str], PdTable]:
    """The PD sums of every ``sums`` variable per population and segment, on its bins (a
    population or segment without loans gets empty sums)."""
    if request.pd is None:
        return {}
    out: dict[tuple[str, str, str], PdTable] = {}
    for population, variable, segment in _cell_keys(request, summed, lambda v: v.sums):
        binning = request.variable(variable).binning
        assert binning is not None, "PD sums are collected on binned variables"
        out[(population, variable, segment)] = PdTable.from_cells(
            summed.get((population, variable, segment), []),
            n_bins=binning.n_bins,
            weighted=request.weight is not None,
            labels=binning.labels,
            binning=binning,
        )
    return out


def _target_tables(
    request: CollectRequest,
    moments: dict[tuple[str, str, str], list[tuple[int, float, float, Any]]],
) -> dict[tuple[str, str, str], TargetTable]:
    """The target's moments of every ``moments`` variable per population and segment, on its
    keys (a population or segment without loans gets empty moments)."""
    if request.target is None:
        return {}
    out: dict[tuple[str, str, str], TargetTable] = {}
    for population, variable, segment in _cell_keys(request, moments, lambda v: v.moments):
        var = request.variable(variable)
        n_keys, binning = var.n_keys, var.binning
        assert n_keys is not None, "moments are summed on bins"
        assert binning is not None
        crossed = var.crossed is not None  # a joint table: on its integer keys
        out[(population, variable, segment)] = TargetTable.from_cells(
            moments.get((population, variable, segment), []),
            n_bins=n_keys,
            weighted=request.weight is not None,
            labels=[str(k) for k in range(n_keys)] if crossed else binning.labels,
            binning=None if crossed else binning,
        )
    return out


def _cell_keys(
    request: CollectRequest,
    cells: Mapping[tuple[str, str, str], Any],
    asked: Callable[[Variable], bool],
) -> set[tuple[str, str, str]]:
    """Every key with summed cells, and each ``asked`` variable's whole population (empty)."""
    return set(cells) | {
        (p.name, v.name, ALL) for p in request.populations for v in request.variables if asked(v)
    }


def _label(value: Any) -> int:
    # booleans, 0.0/1.0 and Decimals come back from some drivers; labels were checked already
    return int(value)
