"""Count tables held compactly: a fine binning's table by its non-empty bins only.

A run over thousands of segments holds a table per segment for every variable; on a fine grid
(the score's ranking grid: up to 2,000 cells) a small segment fills a few dozen cells, and the
dense table is almost all zeros. :class:`CountTables` keeps such a table as its non-empty bins
and gives it back dense, the same arrays bit for bit, each time it is read: the figures read a
segment's tables one at a time, so only a segment's worth is ever dense at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from riskmon.metrics import Binning, CountTable

#: a binning with fewer bins than this is always held dense (its compact form saves nothing)
MIN_COMPACT_BINS = 64

TableKey = tuple[str, str, str]
_Number = TypeVar("_Number", np.int64, np.float64)


@dataclass(frozen=True, eq=False)
class _NonEmptyBins:
    """The non-empty bins of a binned count table (``bins``: their indices, ascending)."""

    binning: Binning
    bins: npt.NDArray[np.int64]
    total: npt.NDArray[np.float64]
    n_total: npt.NDArray[np.int64]
    bads: npt.NDArray[np.float64] | None
    n_bads: npt.NDArray[np.int64] | None

    @classmethod
    def of(cls, table: CountTable) -> _NonEmptyBins | None:
        """The compact form of ``table``, or None when it would not be smaller."""
        binning = table.binning
        if binning is None or binning.n_bins < MIN_COMPACT_BINS:
            return None
        bins = np.flatnonzero(table.n_total).astype(np.int64)
        # five arrays a non-empty bin against four a bin (labeled tables: values are None)
        if 5 * bins.size >= 4 * binning.n_bins:
            return None
        return cls(
            binning=binning,
            bins=bins,
            total=table.total[bins],
            n_total=table.n_total[bins],
            bads=None if table.bads is None else table.bads[bins],
            n_bads=None if table.n_bads is None else table.n_bads[bins],
        )

    def dense(self) -> CountTable:
        """The table with every bin, as it was before it was made compact."""
        k, bins = self.binning.n_bins, self.bins
        return CountTable(
            labels=self.binning.labels,
            total=_spread(self.total, bins, k),
            n_total=_spread(self.n_total, bins, k),
            bads=None if self.bads is None else _spread(self.bads, bins, k),
            n_bads=None if self.n_bads is None else _spread(self.n_bads, bins, k),
            binning=self.binning,
        )


def _spread(
    values: npt.NDArray[_Number], bins: npt.NDArray[np.int64], k: int
) -> npt.NDArray[_Number]:
    """``values`` of ``bins`` placed in ``k`` bins, zero elsewhere."""
    out = np.zeros(k, dtype=values.dtype)
    out[bins] = values
    return out


class CountTables(Mapping[TableKey, CountTable]):
    """Count tables by (population, variable, segment); a sparse table on a fine binning is held
    as its non-empty bins and read back dense (see the module docstring)."""

    def __init__(self) -> None:
        self._held: dict[TableKey, CountTable | _NonEmptyBins] = {}

    def __setitem__(self, key: TableKey, table: CountTable) -> None:
        compact = _NonEmptyBins.of(table)
        self._held[key] = table if compact is None else compact

    def __getitem__(self, key: TableKey) -> CountTable:
        held = self._held[key]
        return held.dense() if isinstance(held, _NonEmptyBins) else held

    def __contains__(self, key: object) -> bool:
        return key in self._held

    def __iter__(self) -> Iterator[TableKey]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)

    @property
    def n_compact(self) -> int:
        """How many tables are held as their non-empty bins."""
        return sum(isinstance(t, _NonEmptyBins) for t in self._held.values())
