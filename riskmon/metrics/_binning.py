"""Bin definitions: how raw values of one variable map to the bins of a count table.

A :class:`Binning` is frozen on a baseline sample and then applied unchanged to every later
sample, in Python (:meth:`Binning.assign`) or in SQL (the collect step compiles the same
definition into a ``CASE`` expression), so both sides always agree on which bin a value is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from riskmon.errors import InvalidDataError

MISSING_LABEL = "missing"
UNSEEN_LABEL = "unseen"

Kind = Literal["numeric", "categorical"]


def _format_edge(value: float) -> str:
    return f"{value:.6g}"


@dataclass(frozen=True)
class Binning:
    """The bins of one variable.

    Numeric: ``edges`` are sorted interior cut points e_0 < ... < e_{k-1}; the bins are
    ``(-inf, e_0], (e_0, e_1], ..., (e_{k-1}, inf)`` (right-closed, as :func:`pandas.cut`),
    then a bin for missing values. Categorical: each entry of ``levels`` is a group of level
    values (as strings) forming one bin, then a bin for missing values, then a bin for
    categories unseen when the binning was fitted.
    """

    kind: Kind
    edges: tuple[float, ...] = ()
    levels: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "numeric":
            if self.levels:
                raise InvalidDataError("Expected no levels for a numeric binning")
            e = np.asarray(self.edges, dtype=np.float64)
            if not np.isfinite(e).all() or (e.size > 1 and (np.diff(e) <= 0).any()):
                raise InvalidDataError(
                    f"Expected strictly increasing finite bin edges, got {list(self.edges)!r}"
                )
        elif self.kind == "categorical":
            if self.edges:
                raise InvalidDataError("Expected no edges for a categorical binning")
            flat = [v for group in self.levels for v in group]
            if len(flat) != len(set(flat)):
                raise InvalidDataError(f"Expected each level in one bin only, got {self.levels!r}")
        else:
            raise InvalidDataError(f"Expected kind 'numeric' or 'categorical', got {self.kind!r}")

    @property
    def n_bins(self) -> int:
        """Number of bins, the missing (and unseen) bins included."""
        if self.kind == "numeric":
            return len(self.edges) + 2
        return len(self.levels) + 2

    @property
    def missing_index(self) -> int:
        """Index of the bin that holds missing values."""
        return len(self.edges) + 1 if self.kind == "numeric" else len(self.levels)

    @property
    def unseen_index(self) -> int | None:
        """Index of the bin for categories unseen at fit time (None for numeric binnings)."""
        return len(self.levels) + 1 if self.kind == "categorical" else None

    @property
    def labels(self) -> tuple[str, ...]:
        """Human-readable bin labels, in bin order."""
        if self.kind == "numeric":
            bounds = ["-inf", *(_format_edge(e) for e in self.edges), "inf"]
            value_bins = [f"({lo}, {hi}]" for lo, hi in zip(bounds[:-1], bounds[1:])]
            value_bins[-1] = value_bins[-1][:-1] + ")"
            return (*value_bins, MISSING_LABEL)
        return (*("|".join(group) for group in self.levels), MISSING_LABEL, UNSEEN_LABEL)

    def assign(self, values: Any) -> npt.NDArray[np.intp]:
        """The bin index of each value (missing values to the missing bin)."""
        if self.kind == "numeric":
            x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(np.float64)
            raw_missing = pd.isna(pd.Series(values)).to_numpy()
            if (np.isnan(x) & ~raw_missing).any():
                bad = pd.Series(values)[np.isnan(x) & ~raw_missing].head(5).tolist()
                raise InvalidDataError(f"Expected numeric values to bin, got {bad!r}")
            index = np.searchsorted(np.asarray(self.edges, dtype=np.float64), x, side="left")
            index[np.isnan(x)] = self.missing_index
            return index.astype(np.intp)
        series = pd.Series(values, dtype=object)
        missing = series.isna().to_numpy()
        lookup = {v: i for i, group in enumerate(self.levels) for v in group}
        as_text = series.where(~missing, None).map(lambda v: None if v is None else str(v))
        index = as_text.map(lookup).to_numpy(dtype=np.float64, na_value=np.nan)
        unseen = self.unseen_index
        assert unseen is not None
        out = np.where(np.isnan(index), unseen, index).astype(np.intp)
        out[missing] = self.missing_index
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form, as stored with a frozen baseline."""
        if self.kind == "numeric":
            return {"kind": "numeric", "edges": list(self.edges)}
        return {"kind": "categorical", "levels": [list(group) for group in self.levels]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Binning:
        """Inverse of :meth:`to_dict`."""
        if data.get("kind") == "numeric":
            return cls("numeric", edges=tuple(float(e) for e in data.get("edges", ())))
        levels = tuple(tuple(str(v) for v in group) for group in data.get("levels", ()))
        return cls("categorical", levels=levels)
