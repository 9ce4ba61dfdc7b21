"""One population's variable's cells held in columns (:class:`CellTable`), not an object each.

With thousands of segments nearly every row of a window is a cell of its own (5,000 segments of
15 loans: about a cell a loan and variable), and a dict of ``(population, variable, segment
values, label, key) -> [rows, weight]`` cost about 360 bytes a cell (benchmarks/messy.md). Here a
cell is three integer codes — its segment values', its label's and its key's (:class:`Codes`)
— and its sums, in numpy arrays: about 40 bytes.

Cells are appended as they come, one or a batch at a time, and summed
(:meth:`CellLog.consolidate`) once the appended outnumber the summed, and before they are read.
Each cell's sums are added in the order they came, from 0 (numpy's ``bincount``), as a dict's
``+=`` added them, so they are the same to the last bit; cells are read in the order they first
came, as a dict would list them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

#: rows appended one at a time held as Python values before they join the arrays
_ROW_BATCH = 8_192
#: cells appended in arrays held unsummed, at least (more: as many as are summed)
_MIN_PENDING = 65_536


class Codes:
    """Integer codes of hashable values in the order first seen; equal values share one, as
    they share a dict's key (the first one seen is kept)."""

    __slots__ = ("_index", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[Any, int] = {}

    def code(self, value: Any) -> int:
        code = self._index.get(value)
        if code is None:
            code = self._index[value] = len(self.values)
            self.values.append(value)
        return code

    def __len__(self) -> int:
        return len(self.values)


def _floats(values: Any) -> list[float]:
    """A row of sums as floats (a NULL sum, of no rows, as 0)."""
    return [0.0 if v is None else float(v) for v in values]


class CellLog:
    """Cells as codes (segment, label, key) and columns of values, summed per cell."""

    __slots__ = ("_codes", "_pending", "_row_codes", "_row_values", "_values", "codes", "values")

    def __init__(self, width: int) -> None:
        #: the summed cells, in the order they first came: their codes and their sums
        self.codes: npt.NDArray[np.int64] = np.empty((0, 3), np.int64)
        self.values: npt.NDArray[np.float64] = np.empty((0, width), np.float64)
        self._codes: list[npt.NDArray[np.int64]] = []
        self._values: list[npt.NDArray[np.float64]] = []
        self._row_codes: list[tuple[int, int, int]] = []
        self._row_values: list[list[float]] = []
        self._pending = 0

    def append_row(self, codes: tuple[int, int, int], values: list[float]) -> None:
        self._row_codes.append(codes)
        self._row_values.append(values)
        if len(self._row_codes) >= _ROW_BATCH:
            self._flush_rows()

    def append(self, codes: npt.NDArray[np.int64], values: npt.NDArray[np.float64]) -> None:
        self._codes.append(codes)
        self._values.append(values)
        self._pending += len(codes)
        if self._pending >= max(_MIN_PENDING, len(self.codes)):
            self.consolidate()

    def _flush_rows(self) -> None:
        if self._row_codes:
            codes = np.array(self._row_codes, dtype=np.int64).reshape(-1, 3)
            values = np.array(self._row_values, dtype=np.float64).reshape(len(codes), -1)
            self._row_codes, self._row_values = [], []
            self.append(codes, values)

    def consolidate(self) -> None:
        """Sum the appended cells into the summed ones."""
        if self._row_codes:
            self._flush_rows()  # appends, which consolidates when enough are pending
        if not self._codes:
            return
        codes = np.concatenate([self.codes, *self._codes])
        values = np.concatenate([self.values, *self._values])
        self._codes, self._values, self._pending = [], [], 0
        first, inverse = _distinct(codes)
        order = np.argsort(first)  # the cells in the order they first came
        rank = np.empty(len(order), dtype=np.intp)
        rank[order] = np.arange(len(order))
        cell = rank[inverse]
        n = len(order)
        self.codes = codes[first[order]]
        self.values = np.empty((n, values.shape[1]), np.float64)
        for j in range(values.shape[1]):
            self.values[:, j] = np.bincount(cell, weights=values[:, j], minlength=n)


def _distinct(codes: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``np.unique`` of the rows of ``codes``: each distinct row's first index, and each row's
    distinct row (by one integer per row where the codes' ranges allow it)."""
    if not len(codes):
        empty = np.empty(0, np.intp)
        return empty, empty
    sizes = [int(s) for s in codes.max(axis=0) + 1]
    if sizes[0] * sizes[1] * sizes[2] < 2**62:
        combined = (codes[:, 0] * sizes[1] + codes[:, 1]) * sizes[2] + codes[:, 2]
        _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    else:  # pragma: no cover - more distinct segments, labels and keys than 2**62 together
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


class CellTable:
    """One population's variable's cells: each one's rows and weight, and the PD sums and the
    target's moments of those that have them."""

    __slots__ = ("counts", "moments", "sums")

    def __init__(self) -> None:
        self.counts = CellLog(2)
        self.sums: CellLog | None = None
        self.moments: CellLog | None = None

    def add(
        self, codes: tuple[int, int, int], rows: int, weight: float, sums: Any, moments: Any
    ) -> None:
        """One cell's rows, weight and (None: none) PD sums and moments."""
        self.counts.append_row(codes, [float(rows), weight])
        if sums is not None:
            self.log("sums", len(sums)).append_row(codes, _floats(sums))
        if moments is not None:
            self.log("moments", len(moments)).append_row(codes, _floats(moments))

    def add_sums(self, codes: tuple[int, int, int], which: str, values: Sequence[Any]) -> None:
        """A cell's PD sums (``which``: "sums") or moments ("moments") alone."""
        self.log(which, len(values)).append_row(codes, _floats(values))

    def extend(
        self,
        codes: npt.NDArray[np.int64],
        counts: npt.NDArray[np.float64],
        sums: npt.NDArray[np.float64] | None,
        moments: npt.NDArray[np.float64] | None,
    ) -> None:
        """Cells in arrays: their codes (a row each), their rows and weights (two columns),
        and their PD sums and moments (a row each, or None)."""
        self.counts.append(codes, counts)
        for which, values in (("sums", sums), ("moments", moments)):
            if values is not None:
                self.log(which, values.shape[1]).append(codes, values)

    def log(self, which: str, width: int) -> CellLog:
        """The cells' ``"counts"``, ``"sums"`` or ``"moments"`` (``width`` columns; made if none
        yet)."""
        log: CellLog | None = getattr(self, which)
        if log is None:
            log = CellLog(width)
            setattr(self, which, log)
        return log

    def summed(self) -> tuple[CellLog, CellLog | None, CellLog | None]:
        """The counts, PD sums and moments, each summed per cell."""
        for log in (self.counts, self.sums, self.moments):
            if log is not None:
                log.consolidate()
        return self.counts, self.sums, self.moments


def aligned(codes: npt.NDArray[np.int64], log: CellLog | None) -> Iterable[Any]:
    """The summed row of ``log`` of each cell of ``codes`` (None where it has none): at once
    where the log holds the same cells in the same order, as a table's PD sums and moments
    mostly do."""
    if log is None:
        return itertools.repeat(None, len(codes))
    if np.array_equal(log.codes, codes):
        return list(log.values)
    index = {tuple(c): i for i, c in enumerate(log.codes.tolist())}
    rows = list(log.values)
    return [rows[i] if (i := index.get(tuple(c), -1)) >= 0 else None for c in codes.tolist()]
