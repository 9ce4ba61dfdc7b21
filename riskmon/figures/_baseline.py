"""A frozen baseline as count tables: the :class:`~riskmon.figures.BaselineView` of a stored
baseline version (its frozen binnings, bins and headline figures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from riskmon.metrics import Binning, CountTable
from riskmon.records import ALL, SCORE, FigureRecord


class _Bin(Protocol):
    @property
    def bin_index(self) -> int: ...
    @property
    def segment(self) -> str: ...
    @property
    def n_total(self) -> int: ...
    @property
    def total(self) -> float: ...
    @property
    def n_goods(self) -> int | None: ...
    @property
    def goods(self) -> float | None: ...
    @property
    def n_bads(self) -> int | None: ...
    @property
    def bads(self) -> float | None: ...


class _Variable(Protocol):
    @property
    def binning(self) -> dict[str, Any]: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def bins(self) -> Sequence[_Bin]: ...


class _Stored(Protocol):
    @property
    def version(self) -> int: ...
    @property
    def variables(self) -> Mapping[str, _Variable]: ...

    @property
    def figures(self) -> Sequence[FigureRecord]: ...


class FrozenBaseline:
    """The distributions and figures of a stored baseline version, as figures read them."""

    def __init__(self, stored: _Stored):
        self.stored = stored
        # keyed once: a run with thousands of segments looks each of them up
        self._figures = {(f.name, f.variable, f.segment): f for f in stored.figures}
        self._segment_bins: dict[str, dict[str, list[_Bin]]] = {}
        self._binnings: dict[str, Binning] = {}

    @property
    def version(self) -> int:
        return self.stored.version

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        return self._figures.get((name, variable, segment))

    def has_segment(self, segment: str) -> bool:
        return segment in self._by_segment(SCORE)

    def _by_segment(self, variable: str) -> dict[str, list[_Bin]]:
        grouped = self._segment_bins.get(variable)
        if grouped is None:
            grouped = self._segment_bins[variable] = {}
            for b in self.stored.variables[variable].bins:
                grouped.setdefault(b.segment, []).append(b)
        return grouped

    def _binning(self, variable: str) -> Binning:
        binning = self._binnings.get(variable)
        if binning is None:
            binning = Binning.from_dict(self.stored.variables[variable].binning)
            self._binnings[variable] = binning
        return binning

    def _bins(self, variable: str, segment: str) -> tuple[Binning, list[_Bin]]:
        return self._binning(variable), self._by_segment(variable).get(segment, [])

    def table(self, variable: str, segment: str = ALL) -> CountTable:
        """A variable's baseline distribution (all loans) as an unlabeled count table."""
        binning, bins = self._bins(variable, segment)
        rows = [(b.bin_index, None, b.n_total, b.total) for b in bins]
        return CountTable.from_rows(rows, binning=binning, labeled=False)

    def labeled_table(self, variable: str, segment: str = ALL) -> CountTable:
        """A variable's goods and bads among the baseline's labeled loans."""
        binning, bins = self._bins(variable, segment)
        rows: list[tuple[int, int, int, float]] = []
        for b in bins:
            rows.append((b.bin_index, 0, b.n_goods or 0, b.goods or 0.0))
            rows.append((b.bin_index, 1, b.n_bads or 0, b.bads or 0.0))
        return CountTable.from_rows(rows, binning=binning)

    def binning(self, variable: str) -> Binning | None:
        """The bins the baseline froze for ``variable``, None when it has none."""
        return self._binning(variable) if variable in self.stored.variables else None

    def other_levels(self, variable: str) -> frozenset[str]:
        var = self.stored.variables.get(variable)
        return frozenset() if var is None else frozenset(var.params.get("other_levels", ()))

    def missing_rate(self, variable: str) -> float | None:
        """The share of the baseline's loans (whole population) in the missing bin."""
        if variable not in self.stored.variables:
            return None
        binning, bins = self._bins(variable, ALL)
        total = sum(b.total for b in bins)
        missing = sum(b.total for b in bins if b.bin_index == binning.missing_index)
        return missing / total if total > 0 else None
