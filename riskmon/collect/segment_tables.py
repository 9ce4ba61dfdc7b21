"""One population's variable's count tables per segment, made from its cells' columns
(:class:`~.celltable.CellLog`) without a Python object per cell.

A cell counts in the whole population and in each segment its segment values roll up to
(:func:`~.tables.segment_key`). The cells of a segment are taken from the columns in the order
they first came, so that each table's sums are added in the order a row-by-row assembly added
them: the same tables to the last bit. At 5,000 segments a freeze's variable has about 230,000
cells, which as ``(key, label, rows, weight)`` tuples, twice (the whole population's rows and
the segment's) and transposed for the table, took about 130 MB at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.collect.celltable import CellLog
from riskmon.errors import InvalidDataError
from riskmon.metrics import Binning, CountTable


@dataclass(frozen=True)
class SegmentCells:
    """The cells of one population's variable, each segment's as indices into the columns."""

    #: each segment's cells, in the order they first came; segments in the order a row-by-row
    #: assembly met them (the whole population first)
    segments: dict[str, npt.NDArray[np.intp]]
    #: each cell's key (a bin index or a value), row count, weight and label
    keys: npt.NDArray[Any]
    rows: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    label_codes: npt.NDArray[np.int64]
    label_values: Sequence[Any]


def segment_cells(
    counts: CellLog,
    segment_values: Sequence[tuple[Any, ...]],
    key_values: Sequence[Any],
    label_values: Sequence[Any],
    rollup: Callable[[tuple[Any, ...]], list[str]],
) -> SegmentCells:
    """``counts``' cells (codes: segment values, label, key) split by the segments ``rollup``
    gives each cell's segment values."""
    codes = counts.codes
    by_segment = np.argsort(codes[:, 0], kind="stable")  # each code's cells stay in order
    sizes = np.bincount(codes[:, 0], minlength=len(segment_values))
    ends = np.cumsum(sizes)
    _, first = np.unique(codes[:, 0], return_index=True)
    # each segment's codes, the segments in the order their first cell came
    members: dict[str, list[int]] = {}
    for code in codes[np.sort(first), 0].tolist():
        for segment in rollup(segment_values[code]):
            members.setdefault(segment, []).append(code)
    everyone = len(codes)
    segments: dict[str, npt.NDArray[np.intp]] = {}
    for segment, held in members.items():
        if sum(int(sizes[c]) for c in held) == everyone:
            segments[segment] = np.arange(everyone, dtype=np.intp)
            continue
        parts = [by_segment[ends[c] - sizes[c] : ends[c]] for c in held]
        segments[segment] = parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts))
    keys = np.fromiter(key_values, dtype=object, count=len(key_values))[codes[:, 2]]
    return SegmentCells(
        segments,
        keys,
        counts.values[:, 0].astype(np.int64),
        counts.values[:, 1],
        codes[:, 1],
        label_values,
    )


def count_tables(
    cells: SegmentCells, populations: Mapping[str, bool], binning: Binning | None
) -> Iterator[tuple[str, str, CountTable, int, int]]:
    """Each of ``populations``' (the population and the copies that count its cells, each
    labeled or not) count table per segment: ``(population, segment, table, rows, unlabeled
    rows)``; a labeled population's table counts its cells with a label, 0 or 1."""
    unlabeled = np.fromiter(
        (v is None for v in cells.label_values), dtype=bool, count=len(cells.label_values)
    )
    cell_unlabeled = unlabeled[cells.label_codes]
    is_bad: npt.NDArray[np.bool_] | None = None
    if any(populations.values()):
        is_bad = _bads(cells, cell_unlabeled)[cells.label_codes]
    for segment, index in cells.segments.items():
        rows = cells.rows[index]
        n_all = int(rows.sum())
        n_unlabeled = int(rows[cell_unlabeled[index]].sum())
        for name, labeled in populations.items():
            usable = index[~cell_unlabeled[index]] if labeled else index
            table = CountTable.from_arrays(
                cells.keys[usable],
                cells.rows[usable],
                cells.weights[usable],
                None if is_bad is None or not labeled else is_bad[usable],
                binning=binning,
            )
            yield name, segment, table, n_all, n_unlabeled


def _bads(cells: SegmentCells, cell_unlabeled: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Whether each label is 1 (a bad); InvalidDataError naming the first cell's label, in
    the cells' order, that is neither 0 nor 1 (as an integer: drivers give booleans, 0.0 and
    1.0 or Decimals)."""
    as_int = [None if v is None else int(v) for v in cells.label_values]
    if any(v not in (0, 1) for v in as_int if v is not None):
        for code in cells.label_codes[~cell_unlabeled].tolist():
            if as_int[code] not in (0, 1):
                raise InvalidDataError(f"Expected label values 0 and 1, got {as_int[code]!r}")
    return np.array([v == 1 for v in as_int], dtype=bool)
