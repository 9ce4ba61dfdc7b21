"""Bin definitions: how raw values of one variable map to the bins of a count table.

A :class:`Binning` is frozen on a baseline sample and then applied unchanged to every later
sample, in Python (:meth:`Binning.assign`) or in SQL (the collect step compiles the same
definition into a ``CASE`` expression), so both sides always agree on which bin a value is in.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from riskmon.errors import InvalidDataError

if TYPE_CHECKING:
    import pandas as pd

MISSING_LABEL = "missing"
UNSEEN_LABEL = "unseen"
#: the label of a special value's bin starts with this
SPECIAL_LABEL = "special"
#: the last bin of a categorical binning that kept only its most frequent levels
OTHER_LABEL = "other"

Kind = Literal["numeric", "categorical"]


def _format_edge(value: float) -> str:
    return f"{value:.6g}"


#: the types of value :func:`numeric_values` reads without pandas (bool, a subclass of int, is
#: left to pandas, as are Decimals, texts and integers a double does not hold exactly)
_PLAIN_NUMBERS = frozenset({float, int, type(None), np.float64})
_EXACT_INT = 2**53


def numeric_values(values: Any) -> npt.NDArray[np.float64]:
    """Values as float64 with missing values (None, NaN, NA) as NaN; raise on text."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        as_float: npt.NDArray[np.float64] = np.asarray(values, dtype=np.float64)
        return as_float
    plain = _plain_numbers(values)
    if plain is not None:
        return plain
    import pandas as pd

    series = pd.Series(values)
    x: npt.NDArray[np.float64] = pd.to_numeric(series, errors="coerce").to_numpy(
        np.float64, na_value=np.nan
    )
    not_numeric = np.isnan(x) & ~series.isna().to_numpy()
    if not_numeric.any():
        bad = series[not_numeric].head(5).tolist()
        raise InvalidDataError(f"Expected numeric values to bin, got {bad!r}")
    return x


def _python_items(values: Any) -> list[Any] | tuple[Any, ...] | None:
    """A list's or tuple's values, or a one-dimensional object array's as a list; None for
    anything else (typed arrays, pandas objects: read as they are)."""
    if isinstance(values, (list, tuple)):
        return values
    if isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1:
        items: list[Any] = values.tolist()
        return items
    return None


def _plain_numbers(values: Any) -> npt.NDArray[np.float64] | None:
    """``values`` as float64 when each one is a float, None, or an integer a double holds
    exactly (what ``pandas.to_numeric`` makes of them, without importing pandas, about 70 MB
    of a process's memory); None otherwise."""
    items = _python_items(values)
    if items is None or not _PLAIN_NUMBERS.issuperset(map(type, items)):
        return None
    if any(type(v) is int and not -_EXACT_INT <= v <= _EXACT_INT for v in items):
        return None
    return np.array([np.nan if v is None else v for v in items], dtype=np.float64)


def level_codes(values: Any) -> tuple[npt.NDArray[np.intp], list[str]]:
    """Each value's index into a list of distinct level texts (``str(value)``); -1 if missing.

    Fitting and assigning share this function, so both read a level the same way. Lists are
    read as Python objects (``[1, None]`` gives level ``"1"``); numpy arrays and pandas
    objects keep their dtype (a float column gives ``"1.0"``).
    """
    coded = _coded_texts(values)
    if coded is not None:
        return coded
    import pandas as pd

    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        values = values.array
    if isinstance(values, pd.Categorical):
        codes = np.asarray(values.codes, dtype=np.intp)
        uniques: Any = values.categories
    else:
        if not isinstance(values, (pd.Series, pd.Index, np.ndarray)):
            values = pd.Series(values, dtype=object)
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.intp)
    texts = [str(v) for v in uniques]
    return codes, texts


def _coded_texts(values: Any) -> tuple[npt.NDArray[np.intp], list[str]] | None:
    """:func:`level_codes` of a list or object array of texts and None alone, without pandas:
    codes in the order each text first comes, as ``pandas.factorize`` gives them; None for
    anything else."""
    items = _python_items(values)
    if items is None or not {str, type(None)}.issuperset(map(type, items)):
        return None
    index: dict[str, int] = {}
    codes = np.fromiter(
        (-1 if v is None else index.setdefault(v, len(index)) for v in items),
        dtype=np.intp,
        count=len(items),
    )
    return codes, list(index)


@dataclass(frozen=True)
class Binning:
    """The bins of one variable.

    Numeric: ``edges`` are sorted interior cut points e_0 < ... < e_{k-1}; the bins are
    ``(-inf, e_0], (e_0, e_1], ..., (e_{k-1}, inf)`` (right-closed, as :func:`pandas.cut`),
    then a bin for missing values. Categorical: each entry of ``levels`` is a group of level
    values (as strings) forming one bin, then a bin for missing values, then a bin for
    categories unseen when the binning was fitted — or, with ``other``, the "other" bin of
    every level not in ``levels``: those the fit left out (it kept only the most frequent)
    and those it never saw.

    ``special`` values (a numeric ``-999`` "no bureau record", a level ``"none"``) each form a
    bin of their own after those: a special value is never counted in an ordinary bin.
    """

    kind: Kind
    edges: tuple[float, ...] = ()
    levels: tuple[tuple[str, ...], ...] = ()
    other: bool = False
    special: tuple[float | str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "numeric":
            if self.levels or self.other:
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
            if set(flat) & {str(v) for v in self.special}:
                raise InvalidDataError(
                    f"Expected special values outside the levels, got {list(self.special)!r} "
                    f"and levels {self.levels!r}"
                )
        else:
            raise InvalidDataError(f"Expected kind 'numeric' or 'categorical', got {self.kind!r}")
        self._check_special()

    def _check_special(self) -> None:
        if len(set(self.special)) != len(self.special):
            raise InvalidDataError(f"Expected distinct special values, got {list(self.special)!r}")
        if self.kind == "numeric" and not all(
            isinstance(v, float) and math.isfinite(v) for v in self.special
        ):
            raise InvalidDataError(
                f"Expected finite numbers as a numeric binning's special values, got "
                f"{list(self.special)!r}"
            )
        if self.kind == "categorical" and not all(isinstance(v, str) for v in self.special):
            raise InvalidDataError(
                f"Expected texts as a categorical binning's special values, got "
                f"{list(self.special)!r}"
            )

    @property
    def n_bins(self) -> int:
        """Number of bins, the missing (and unseen) bins and the special values' included."""
        if self.kind == "numeric":
            return len(self.edges) + 2 + len(self.special)
        return len(self.levels) + 2 + len(self.special)

    @property
    def special_indices(self) -> tuple[int, ...]:
        """The bin of each special value, in the order of ``special`` (the last bins)."""
        first = self.n_bins - len(self.special)
        return tuple(range(first, self.n_bins))

    @property
    def missing_index(self) -> int:
        """Index of the bin that holds missing values."""
        return len(self.edges) + 1 if self.kind == "numeric" else len(self.levels)

    @property
    def unseen_index(self) -> int | None:
        """Index of the bin for categories unseen at fit time (None for numeric binnings)."""
        return len(self.levels) + 1 if self.kind == "categorical" else None

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """Human-readable bin labels, in bin order."""
        if self.kind == "numeric":
            bounds = ["-inf", *(_format_edge(e) for e in self.edges), "inf"]
            value_bins = [f"({lo}, {hi}]" for lo, hi in itertools.pairwise(bounds)]
            value_bins[-1] = value_bins[-1][:-1] + ")"
            return (*value_bins, MISSING_LABEL, *self._special_labels)
        last = OTHER_LABEL if self.other else UNSEEN_LABEL
        levels = ("|".join(group) for group in self.levels)
        return (*levels, MISSING_LABEL, last, *self._special_labels)

    @property
    def _special_labels(self) -> tuple[str, ...]:
        shown = (_format_edge(v) if isinstance(v, float) else v for v in self.special)
        return tuple(f"{SPECIAL_LABEL} {v}" for v in shown)

    @property
    def n_value_bins(self) -> int:
        """Number of bins that hold ordinary values (the missing, unseen and special bins
        excluded)."""
        return self.n_bins - (1 if self.kind == "numeric" else 2) - len(self.special)

    def assign(self, values: Any) -> npt.NDArray[np.intp]:
        """The bin index of each value (missing values to the missing bin).

        Numeric values go to the bin whose right-closed interval holds them; categorical values
        are compared as text (``str(value)``), and a level not in ``levels`` goes to the unseen
        bin.

        Examples
        --------
        >>> Binning("numeric", edges=(1.0, 2.0)).assign([0.5, 1.0, 1.5, None, 3]).tolist()
        [0, 0, 1, 3, 2]
        >>> groups = Binning("categorical", levels=(("a", "b"), ("c",)))
        >>> groups.assign(["b", "c", None, "z"]).tolist()
        [0, 1, 2, 3]
        >>> Binning("numeric", edges=(1.0,), special=(-999.0,)).assign([-999, 0, 2]).tolist()
        [3, 0, 1]
        """
        if self.kind == "numeric":
            x = numeric_values(values)
            index = np.searchsorted(np.asarray(self.edges, dtype=np.float64), x, side="left")
            index[np.isnan(x)] = self.missing_index
            for value, special in zip(self.special, self.special_indices, strict=True):
                index[x == value] = special
            return index.astype(np.intp, copy=False)
        codes, texts = level_codes(values)
        # one lookup per distinct value, then a gather: cheap on millions of rows
        per_code = np.array([self.text_bin(t) for t in texts] + [self.missing_index], dtype=np.intp)
        return per_code[codes]

    @cached_property
    def _level_bins(self) -> dict[str, int]:
        ordinary = {v: i for i, group in enumerate(self.levels) for v in group}
        return ordinary | {
            str(v): i for v, i in zip(self.special, self.special_indices, strict=True)
        }

    def text_bin(self, text: str | None) -> int:
        """The bin of one categorical value given as its text, by the rules of :meth:`assign`:
        None to the missing bin, a level not in ``levels`` to the unseen bin."""
        if text is None:
            return self.missing_index
        unseen = self.unseen_index
        assert unseen is not None, "text_bin is for categorical binnings"
        return self._level_bins.get(text, unseen)

    def bounds(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each bin's ``lower`` and ``upper`` bound (numeric bins, the interval ``(lower,
        upper]``; a special value's bin from the value to itself), NaN where a bin has none
        (the missing bin, and every bin of a categorical binning)."""
        k = self.n_bins
        lower = np.full(k, np.nan)
        upper = np.full(k, np.nan)
        if self.kind == "numeric":
            bounds = np.r_[-np.inf, np.asarray(self.edges, dtype=np.float64), np.inf]
            ordinary = len(self.edges) + 1
            lower[:ordinary] = bounds[:-1]
            upper[:ordinary] = bounds[1:]
            for value, i in zip(self.special, self.special_indices, strict=True):
                lower[i] = upper[i] = value
        return lower, upper

    def describe(self) -> pd.DataFrame:
        """One row per bin: ``bin`` (label), ``lower`` and ``upper`` (numeric bins, the
        interval ``(lower, upper]``: :meth:`bounds`), ``levels`` (categorical bins, a tuple of
        level texts)."""
        import pandas as pd

        lower, upper = self.bounds()
        levels: list[tuple[str, ...] | None] = [None] * self.n_bins
        if self.kind != "numeric":
            levels = [*self.levels, (), (), *((str(v),) for v in self.special)]
        return pd.DataFrame(
            {"bin": list(self.labels), "lower": lower, "upper": upper, "levels": levels}
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form, as stored with a frozen baseline."""
        out: dict[str, Any]
        if self.kind == "numeric":
            out = {"kind": "numeric", "edges": list(self.edges)}
        else:
            out = {"kind": "categorical", "levels": [list(group) for group in self.levels]}
            if self.other:
                out["other"] = True
        if self.special:
            out["special"] = list(self.special)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Binning:
        """Inverse of :meth:`to_dict`."""
        special = data.get("special", ())
        if data.get("kind") == "numeric":
            return cls(
                "numeric",
                edges=tuple(float(e) for e in data.get("edges", ())),
                special=tuple(float(v) for v in special),
            )
        levels = tuple(tuple(str(v) for v in group) for group in data.get("levels", ()))
        return cls(
            "categorical",
            levels=levels,
            other=bool(data.get("other", False)),
            special=tuple(str(v) for v in special),
        )
