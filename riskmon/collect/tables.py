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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.collect.aggregate import Aggregate, BlockKey, Cell
from riskmon.collect.compact import CountTables, SumTables
from riskmon.collect.daycells import Column
from riskmon.collect.migration_tables import MigrationTables
from riskmon.collect.request import CollectRequest, Variable
from riskmon.collect.segment_tables import count_tables, segment_cells
from riskmon.errors import InvalidDataError
from riskmon.metrics import (
    CountTable,
    PdTable,
    TargetTable,
    VintageTable,
)
from riskmon.plan import DateWindow
from riskmon.records import ALL, Exclusions, LevelCensus


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
    pd_tables: Mapping[tuple[str, str, str], PdTable] = field(default_factory=dict)
    #: the target's moments per (population, variable, segment) of the variables collected
    #: with ``moments``
    target_tables: Mapping[tuple[str, str, str], TargetTable] = field(default_factory=dict)
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
    # one variable of one population at a time, its tables made from its cells' columns
    # (:mod:`.segment_tables`): with thousands of segments, all rows at once doubled the cells'
    # memory, and one variable's as Python tuples were a freeze's peak
    rollups: dict[tuple[Any, ...], list[str]] = {}  # a few distinct segment values
    copies = request.copies()  # their tables are made from the rows of the one they copy
    for population, variable in list(aggregate.tables):
        names = {name: labeled[name] for name in (population, *copies.get(population, ()))}
        cell_counts, pd_sums, moments = aggregate.tables[(population, variable)].summed()
        if pd_sums is not None or moments is not None:
            cells = aggregate.read(population, variable)
            _segment_sums(request, cells, names, rollups, sums)
        by_segment = segment_cells(
            cell_counts,
            aggregate.segments.values,
            aggregate.keys[variable].values,
            aggregate.labels.values,
            lambda values: _segments_of(request, rollups, values),
        )
        made = count_tables(by_segment, names, binnings[variable])
        for name, segment, count_table, n_all, n_unlabeled in made:
            tables[(name, variable, segment)] = count_table
            if variable == first_variable:
                counts[(name, segment)] = PopulationCounts(n_all, n_unlabeled)
        del by_segment
        del aggregate.tables[(population, variable)]  # its cells are made into tables
    blocks = _block_tables(request, aggregate, labeled, binnings, rollups)
    for key, table, n_all, n_unlabeled in blocks:
        tables[key] = table
        if key[1] == first_variable:
            counts[(key[0], key[2])] = PopulationCounts(n_all, n_unlabeled)
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


@dataclass(frozen=True)
class _Sums:
    """The PD sums and the target's moments of the cells, per (population, variable, segment)."""

    pd: dict[tuple[str, str, str], list[tuple[int, int, float, float, Any]]]
    moments: dict[tuple[str, str, str], list[tuple[int, float, float, Any]]]


def _segment_sums(
    request: CollectRequest,
    cells: Iterator[Cell],
    populations: Mapping[str, bool],
    rollups: dict[tuple[Any, ...], list[str]],
    sums: _Sums,
) -> None:
    """The PD sums and moments of one population's variable (its ``cells``) added to ``sums``
    per segment, for each of ``populations`` (the population and the copies that count its
    cells, each labeled or not)."""
    for (_, variable, segment_values, label, key), n, w, cell_sums, cell_moments in cells:
        segments = _segments_of(request, rollups, segment_values)
        for population, labeled in populations.items():
            # the PD sums and the moments of the loans the count tables count (a labeled
            # population's loans without a label are counted apart)
            if labeled and label is None:
                continue
            if cell_sums is not None:
                summed = (key, _label(label) if labeled else 0, n, w, cell_sums)
                for segment in segments:
                    sums.pd[(population, variable, segment)].append(summed)
            if cell_moments is not None:
                moments = (key, n, w, cell_moments)
                for segment in segments:
                    sums.moments[(population, variable, segment)].append(moments)


def _segments_of(
    request: CollectRequest, rollups: dict[tuple[Any, ...], list[str]], values: tuple[Any, ...]
) -> list[str]:
    """The segments a cell of the segment columns' ``values`` counts in (held in ``rollups``)."""
    segments = rollups.get(values)
    if segments is None:
        segments = rollups[values] = list(_rollups(request, values))
    return segments


def _block_tables(
    request: CollectRequest,
    aggregate: Aggregate,
    labeled: Mapping[str, bool],
    binnings: Mapping[str, Any],
    rollups: dict[tuple[Any, ...], list[str]],
) -> Iterator[tuple[tuple[str, str, str], CountTable, int, int]]:
    """The count table of each population's variable and segment held in blocks, with the
    loans it counted and those of them without a label; each block is taken out of
    ``aggregate`` once its variable's tables are made."""
    by_variable: dict[tuple[str, str], list[BlockKey]] = defaultdict(list)
    for block_key in aggregate.blocks:
        by_variable[(block_key[0], block_key[1])].append(block_key)
    for (population, variable), block_keys in by_variable.items():
        parts: dict[str, list[tuple[Any, Column]]] = defaultdict(list)
        for block_key in block_keys:
            block = aggregate.blocks.pop(block_key)
            for segment in _segments_of(request, rollups, block_key[2]):
                parts[segment].append((block_key[3], block))
        is_labeled = labeled[population]
        for segment, blocks in parts.items():
            counted = [(lb, b) for lb, b in blocks if lb is not None] if is_labeled else blocks
            if is_labeled and any(lb not in (0, 1) for lb, _ in counted):
                label = next(lb for lb, _ in counted if lb not in (0, 1))
                raise InvalidDataError(f"Expected label values 0 and 1, got {label!r}")
            columns = [b for _, b in counted]
            bads = None
            if is_labeled:
                is_bad = np.array([_label(lb) == 1 for lb, _ in counted], dtype=bool)
                bads = np.repeat(is_bad, [len(b.keys) for b in columns])
            table = CountTable.from_arrays(
                _joined([b.keys for b in columns], np.int64),
                _joined([b.rows for b in columns], np.int64),
                _joined([b.weights for b in columns], np.float64),
                bads,
                binning=binnings[variable],
            )
            n_all = sum(int(np.sum(b.rows)) for _, b in blocks)
            n_unlabeled = sum(int(np.sum(b.rows)) for lb, b in blocks if lb is None)
            yield (population, variable, segment), table, n_all, n_unlabeled


def _joined(arrays: list[Any], dtype: type[np.generic]) -> npt.NDArray[Any]:
    """``arrays`` end to end (none: an empty array of ``dtype``)."""
    return np.concatenate(arrays) if arrays else np.empty(0, dtype)


def _pd_tables(
    request: CollectRequest,
    summed: dict[tuple[str, str, str], list[tuple[int, int, float, float, Any]]],
) -> Mapping[tuple[str, str, str], PdTable]:
    """The PD sums of every ``sums`` variable per population and segment, on its bins (a
    population or segment without loans gets empty sums)."""
    if request.pd is None:
        return {}
    out = SumTables(PdTable)
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
) -> Mapping[tuple[str, str, str], TargetTable]:
    """The target's moments of every ``moments`` variable per population and segment, on its
    keys (a population or segment without loans gets empty moments)."""
    if request.target is None:
        return {}
    out = SumTables(TargetTable)
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
