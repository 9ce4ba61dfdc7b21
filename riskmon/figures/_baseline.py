"""A frozen baseline as count tables: the :class:`~riskmon.figures.BaselineView` of a stored
baseline version (its frozen binnings, bins and headline figures)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any, Protocol

from riskmon.figure_table import Figures
from riskmon.metrics import Binning, CountTable
from riskmon.records import ALL, SCORE, FigureRecord


class _Bins(Protocol):
    """A variable's bins in columns (``riskmon.store.BaselineBins``)."""

    def segments(self) -> Mapping[str, Sequence[int]]: ...
    def column(self, name: str, positions: Iterable[int]) -> list[Any]: ...


class _Variable(Protocol):
    @property
    def binning(self) -> dict[str, Any]: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def bins(self) -> _Bins: ...


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
        # held in columns and keyed once: a run with thousands of segments looks each of them
        # up (a baseline of 5,000 segments has about 125,000 figures)
        self._figures = Figures(stored.figures).records
        self._binnings: dict[str, Binning] = {}

    @property
    def version(self) -> int:
        return self.stored.version

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        position = self._figures.find(_KEY, (name, variable, segment))
        return None if position is None else self._figures[position]

    def has_segment(self, segment: str) -> bool:
        return segment in self.stored.variables[SCORE].bins.segments()

    def _binning(self, variable: str) -> Binning:
        binning = self._binnings.get(variable)
        if binning is None:
            binning = Binning.from_dict(self.stored.variables[variable].binning)
            self._binnings[variable] = binning
        return binning

    def _bins(self, variable: str, segment: str) -> tuple[Binning, _Bins, Sequence[int]]:
        """The variable's binning, its bins and the positions of ``segment``'s among them."""
        bins = self.stored.variables[variable].bins
        return self._binning(variable), bins, bins.segments().get(segment, ())

    def table(self, variable: str, segment: str = ALL) -> CountTable:
        """A variable's baseline distribution (all loans) as an unlabeled count table."""
        binning, bins, at = self._bins(variable, segment)
        rows = zip(
            bins.column("bin_index", at),
            repeat(None),
            bins.column("n_total", at),
            bins.column("total", at),
        )
        return CountTable.from_rows(rows, binning=binning, labeled=False)

    def labeled_table(self, variable: str, segment: str = ALL) -> CountTable:
        """A variable's goods and bads among the baseline's labeled loans."""
        binning, bins, at = self._bins(variable, segment)
        columns = ("bin_index", "n_goods", "goods", "n_bads", "bads")
        rows: list[tuple[int, int, int, float]] = []
        for index, n_goods, goods, n_bads, bads in zip(
            *(bins.column(c, at) for c in columns), strict=True
        ):
            rows.append((index, 0, n_goods or 0, goods or 0.0))
            rows.append((index, 1, n_bads or 0, bads or 0.0))
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
        binning, bins, at = self._bins(variable, ALL)
        totals = bins.column("total", at)
        indices = bins.column("bin_index", at)
        total = sum(totals)
        missing = sum(t for t, i in zip(totals, indices, strict=True) if i == binning.missing_index)
        return missing / total if total > 0 else None


#: the fields a baseline's figure is looked up by
_KEY = ("name", "variable", "segment")
