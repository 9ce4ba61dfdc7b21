"""Count tables and sums held compactly: the numbers of many small tables in a few large blocks.

A run over thousands of segments holds a count table per population, variable and segment —
about 90,000 at 5,000 segments — and the PD sums or the target's moments of some variables
beside them. Each held as its own numpy arrays, a table of a few bins cost about a kilobyte of
array headers for a few dozen bytes of numbers (``benchmarks/messy.md``). :class:`CountTables`
and :class:`SumTables` keep each table's numbers end to end in shared blocks (:class:`_Arena`)
and make the table again, its arrays read-only views of a block, each time it is read; the
figures read a segment's tables one at a time, so only a few are made at once.

A sparse count table on a fine binning (the score's ranking grid: up to 2,000 cells, of which
a small segment fills a few dozen) is held as its non-empty bins and read back dense, the same
arrays bit for bit. A table too large for a block is held as it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from riskmon.metrics import Binning, CountTable, ScoreLabels

#: a binning with fewer bins than this is always held dense (its compact form saves nothing)
MIN_COMPACT_BINS = 64
#: the numbers of a full block; a table with more is held as it is
BLOCK = 1 << 16
#: the numbers of an arena's first block (each next one is twice as large, up to BLOCK)
FIRST_BLOCK = 1 << 10

TableKey = tuple[str, str, str]
_INT64, _FLOAT64 = np.dtype(np.int64), np.dtype(np.float64)
_Number = TypeVar("_Number", np.int64, np.float64)


class _SumTable(Protocol):
    @property
    def labels(self) -> Sequence[str]: ...
    @property
    def binning(self) -> Binning | None: ...


_Sums = TypeVar("_Sums", bound=_SumTable)
_Table = TypeVar("_Table")


class _Arena(Generic[_Number]):
    """Numbers of one dtype, many short arrays end to end in a few blocks. A block never
    moves nor grows, so what was read stays valid while more is put."""

    __slots__ = ("_blocks", "_dtype", "_read", "_used")

    def __init__(self, dtype: type[_Number]) -> None:
        self._blocks: list[npt.NDArray[_Number]] = []
        self._read: list[npt.NDArray[_Number]] = []  # each block read-only: its slices are too
        self._dtype: type[_Number] = dtype
        self._used = 0  # numbers used of the last block

    def put(self, arrays: Sequence[npt.NDArray[Any]]) -> int | None:
        """Copy ``arrays`` end to end into a block: where they start (the block's index times
        BLOCK plus the offset in it: one small integer, not a tuple), or None when they are more
        than a block holds."""
        size = sum(a.size for a in arrays)
        if size > BLOCK:
            return None
        if not self._blocks or self._used + size > self._blocks[-1].size:
            last = self._blocks[-1].size if self._blocks else FIRST_BLOCK // 2
            block = np.empty(max(min(2 * last, BLOCK), size), dtype=self._dtype)
            self._blocks.append(block)
            self._read.append(_read_only(block.view()))
            self._used = 0
        block, start = self._blocks[-1], self._used
        for a in arrays:
            block[self._used : self._used + a.size] = a
            self._used += a.size
        return (len(self._blocks) - 1) * BLOCK + start

    def take(self, where: int, sizes: Sequence[int]) -> list[npt.NDArray[_Number]]:
        """Arrays of ``sizes`` numbers, one after another from ``where``: read-only views."""
        index, start = divmod(where, BLOCK)
        block = self._read[index]
        out = []
        for size in sizes:
            out.append(block[start : start + size])
            start += size
        return out


@dataclass(slots=True)  # not frozen: made in a third of the time; nothing changes it
class _HeldTable:
    """Where a count table's numbers are held and what it needs besides them.

    ``rows`` is the table's length; ``held`` how many of its rows are held (fewer when only
    its non-empty bins are, ``compact``). Floats: total, then bads (unless ``counted``: the
    weights are the row counts, as in a source without weights), then the score values;
    integers: the non-empty bins' indices when compact, then n_total, then n_bads."""

    rows: int
    held: int
    compact: bool
    labeled: bool
    counted: bool
    scores: bool
    floats: int
    ints: int
    #: None: the score values' labels (:class:`ScoreLabels`)
    labels: Sequence[str] | None
    binning: Binning | None


class _Tables(Mapping[TableKey, _Table]):
    """Tables by (population, variable, segment), each as it is held (``_held``)."""

    def __init__(self) -> None:
        self._held: dict[TableKey, Any] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._held

    def __iter__(self) -> Iterator[TableKey]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)


class CountTables(_Tables[CountTable]):
    """Count tables by (population, variable, segment), their numbers held in shared blocks;
    each is made again when it is read (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._floats = _Arena(np.float64)
        self._ints = _Arena(np.int64)

    def __setitem__(self, key: TableKey, table: CountTable) -> None:
        self._held[key] = self._hold(table)

    def _hold(self, table: CountTable) -> CountTable | _HeldTable:
        """``table``'s numbers put in the blocks, or ``table`` itself when they do not fit."""
        ints = [a for a in (table.n_total, table.n_bads) if a is not None]
        weights = [a for a in (table.total, table.bads) if a is not None]
        values = [] if table.values is None else [table.values]
        if any(a.dtype != _INT64 for a in ints) or any(
            a.dtype != _FLOAT64 for a in (*weights, *values)
        ):
            return table  # not as a count table is made: held as it is, its types kept
        bins = _non_empty(table)
        if bins is not None:
            ints, weights = [a[bins] for a in ints], [a[bins] for a in weights]
        counted = all(
            _same_bits(w, n.astype(np.float64)) for w, n in zip(weights, ints, strict=True)
        )
        floats = [*([] if counted else weights), *values]
        scores = isinstance(table.labels, ScoreLabels) and table.labels.values is table.values
        if bins is not None:
            ints = [bins, *ints]
        at_floats = self._floats.put(floats)
        at_ints = None if at_floats is None else self._ints.put(ints)
        if at_floats is None or at_ints is None:
            return table  # (a few floats may be left unused in a block: no matter)
        return _HeldTable(
            rows=len(table),
            held=len(table) if bins is None else bins.size,
            compact=bins is not None,
            labeled=table.labeled,
            counted=counted,
            scores=scores,
            floats=at_floats,
            ints=at_ints,
            labels=None if scores else table.labels,
            binning=table.binning,
        )

    def __getitem__(self, key: TableKey) -> CountTable:
        held = self._held[key]
        if isinstance(held, CountTable):
            return held
        k, m, n_arrays = held.rows, held.held, 2 if held.labeled else 1
        n_weights = 0 if held.counted else n_arrays
        floats = self._floats.take(held.floats, [m] * (n_weights + held.scores))
        ints = self._ints.take(held.ints, [m] * (n_arrays + held.compact))
        values = floats.pop() if held.scores else None
        if held.counted:
            floats = [_read_only(n.astype(np.float64)) for n in ints[held.compact :]]
        if held.compact:
            bins = ints.pop(0)
            floats = [_spread(a, bins, k) for a in floats]
            ints = [_spread(a, bins, k) for a in ints]
        return CountTable.of_checked(
            labels=ScoreLabels(values) if held.labels is None else held.labels,  # type: ignore[arg-type]
            total=floats[0],
            n_total=ints[0],
            bads=floats[1] if held.labeled else None,
            n_bads=ints[1] if held.labeled else None,
            values=values,
            binning=held.binning,
        )

    @property
    def n_compact(self) -> int:
        """How many tables are held as their non-empty bins."""
        return sum(isinstance(t, _HeldTable) and t.compact for t in self._held.values())


def _non_empty(table: CountTable) -> npt.NDArray[np.int64] | None:
    """The indices of ``table``'s non-empty bins, when holding only those is smaller."""
    binning = table.binning
    if binning is None or binning.n_bins < MIN_COMPACT_BINS:
        return None
    bins = np.flatnonzero(table.n_total).astype(np.int64)
    # five numbers a non-empty bin against four a bin (labeled tables: values are None)
    return None if 5 * bins.size >= 4 * binning.n_bins else bins


def _same_bits(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _read_only(a: npt.NDArray[_Number]) -> npt.NDArray[_Number]:
    a.flags.writeable = False
    return a


def _spread(
    values: npt.NDArray[_Number], bins: npt.NDArray[np.int64], k: int
) -> npt.NDArray[_Number]:
    """``values`` of ``bins`` placed in ``k`` bins, zero elsewhere."""
    out = np.zeros(k, dtype=values.dtype)
    out[bins] = values
    return out


class SumTables(_Tables[_Sums]):
    """Tables of sums per bin (:class:`~riskmon.metrics.PdTable`,
    :class:`~riskmon.metrics.TargetTable`: ``labels``, ``binning`` and float arrays of one
    length) by (population, variable, segment), their numbers held in shared blocks; each is
    made again when it is read. Labels equal to the binning's are not held twice."""

    def __init__(self, kind: type[_Sums]) -> None:
        super().__init__()
        self._kind = kind
        self._names = tuple(f.name for f in fields(kind) if f.name not in ("labels", "binning"))  # type: ignore[arg-type]
        self._floats = _Arena(np.float64)

    def __setitem__(self, key: TableKey, table: _Sums) -> None:
        arrays = [getattr(table, name) for name in self._names]
        labels: Sequence[str] | None = table.labels
        binning = table.binning
        where = None
        if all(a.dtype == _FLOAT64 and a.shape == (len(table.labels),) for a in arrays):
            where = self._floats.put(arrays)
        if where is None:
            self._held[key] = table
            return
        if binning is not None and isinstance(labels, list) and tuple(labels) == binning.labels:
            labels = None  # read back as a list of the binning's labels
        self._held[key] = (where, len(table.labels), labels, binning)

    def __getitem__(self, key: TableKey) -> _Sums:
        held = self._held[key]
        if not isinstance(held, tuple):
            return held  # type: ignore[no-any-return]
        where, size, labels, binning = held
        arrays = self._floats.take(where, [size] * len(self._names))
        return self._kind(  # type: ignore[call-arg]
            labels=list(binning.labels) if labels is None else labels,
            binning=binning,
            **dict(zip(self._names, arrays, strict=True)),
        )
