"""Count tables: the goods and bads (or totals) of one variable, bin by bin.

Every figure riskmon reports is a function of such a table (see DESIGN.md). A *score table*
has one row per distinct score value, sorted ascending by score (``values`` holds the
scores); a *binned table* has one row per bin of a :class:`~riskmon.metrics.Binning`.
A *labeled* table counts goods and bads; an *unlabeled* table only totals (a current population
whose outcome is not known yet).

Counts are kept twice: summed weights (``goods``, ``bads``, ``total``; equal to the counts when
unweighted), which every figure uses, and row counts (``n_goods``, ``n_bads``, ``n_total``), which
sample-size-dependent figures (p-values, critical values) use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._binning import Binning
from riskmon.metrics._score_labels import ScoreLabels
from riskmon.metrics._validation import (
    FloatArray,
    IntArray,
    check_labels,
    check_same_length,
    check_scores,
    check_weights,
)

if TYPE_CHECKING:
    import pandas as pd


def _run_lengths(sorted_values: FloatArray) -> tuple[FloatArray, IntArray]:
    """Distinct values of a sorted array and how often each occurs."""
    if sorted_values.size == 0:
        return sorted_values, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    counts = np.diff(np.r_[starts, sorted_values.size]).astype(np.int64)
    return sorted_values[starts], counts


def _same_floats(a: FloatArray | None, b: FloatArray | None, rtol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=0))


def _as_float(a: Any) -> FloatArray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _as_int(a: Any) -> IntArray:
    return np.ascontiguousarray(a, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class CountTable:
    """Goods and bads (or totals) per bin of one variable.

    Parameters
    ----------
    labels : sequence of str
        One label per row: the bin labels, or for score tables each score as text
        (:class:`ScoreLabels`, formatted when read).
    total, n_total : arrays
        Summed weight and number of rows per bin.
    bads, n_bads : arrays or None
        Summed weight and number of rows of bads (label 1) per bin; None for unlabeled tables.
    values : array or None
        The score value of each row, strictly increasing, for score tables.
    binning : Binning or None
        The bin definition, for binned tables.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> t.values.tolist(), t.goods.tolist(), t.bads.tolist()
    ([0.1, 0.4, 0.8], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0])
    """

    labels: Sequence[str]
    total: FloatArray
    n_total: IntArray
    bads: FloatArray | None = None
    n_bads: IntArray | None = None
    values: FloatArray | None = None
    binning: Binning | None = None

    def __post_init__(self) -> None:
        k = len(self.labels)
        for name in ("total", "n_total", "bads", "n_bads", "values"):
            arr = getattr(self, name)
            if arr is not None and np.shape(arr) != (k,):
                raise InvalidDataError(f"Expected {name} of length {k}, got shape {np.shape(arr)}")
        if (self.bads is None) != (self.n_bads is None):
            raise InvalidDataError("Expected both bads and n_bads, or neither")
        if (self.total < 0).any() or (self.bads is not None and (self.bads < 0).any()):
            raise InvalidDataError("Expected non-negative counts in a count table")
        if self.bads is not None and (self.bads > self.total * (1 + 1e-12) + 1e-12).any():
            raise InvalidDataError("Expected bads <= total in every bin of a count table")
        if self.values is not None and self.values.size > 1 and (np.diff(self.values) <= 0).any():
            raise InvalidDataError("Expected strictly increasing score values in a score table")
        if self.binning is not None and self.binning.n_bins != k:
            raise InvalidDataError(f"Expected {self.binning.n_bins} rows for the binning, got {k}")

    # ----------------------------------------------------------------- properties
    @property
    def labeled(self) -> bool:
        """Whether goods and bads are known (not just totals)."""
        return self.bads is not None

    @property
    def goods(self) -> FloatArray:
        """Summed weight of goods (label 0) per bin."""
        return self.total - self._require_bads()

    @property
    def n_goods(self) -> IntArray:
        """Number of good rows per bin."""
        assert self.n_bads is not None, "unlabeled table"
        return self.n_total - self.n_bads

    def _require_bads(self) -> FloatArray:
        if self.bads is None:
            raise InvalidDataError(
                "Expected a labeled count table (goods and bads), got totals only"
            )
        return self.bads

    def __len__(self) -> int:
        return len(self.labels)

    # ----------------------------------------------------------------- constructors
    @classmethod
    def of_checked(
        cls,
        labels: Sequence[str],
        total: FloatArray,
        n_total: IntArray,
        bads: FloatArray | None = None,
        n_bads: IntArray | None = None,
        values: FloatArray | None = None,
        binning: Binning | None = None,
    ) -> CountTable:
        """The table of the arrays of one that was checked when it was made, made again
        without checking them (:class:`riskmon.collect.compact.CountTables` holds tables'
        numbers apart and makes each again when it is read)."""
        table = object.__new__(cls)
        table.__dict__.update(
            labels=labels,
            total=total,
            n_total=n_total,
            bads=bads,
            n_bads=n_bads,
            values=values,
            binning=binning,
        )
        return table

    @classmethod
    def from_scores(cls, y_true: Any, y_score: Any, *, sample_weight: Any = None) -> CountTable:
        """A labeled score table: one row per distinct score, ascending.

        Costs one sort; unweighted data sorts only the score values (not an argsort).
        """
        y = check_labels(y_true)
        s = check_scores(y_score)
        check_same_length(y.shape[0], s.shape[0], "y_score")
        w = check_weights(sample_weight, y.shape[0])
        if w is None:
            sorted_bads = np.sort(s[y])
            # the two sorted runs merged: a stable sort finds the runs and merges them in O(n)
            both = np.sort(np.concatenate([sorted_bads, np.sort(s[~y])]), kind="stable")
            values, n_total = _run_lengths(both)
            bad_values, n_bads_at = _run_lengths(sorted_bads)
            n_bads = np.zeros(values.size, dtype=np.int64)
            n_bads[np.searchsorted(values, bad_values)] = n_bads_at
            return cls._make(
                values, n_total, n_bads, n_total.astype(np.float64), n_bads.astype(np.float64)
            )
        values, inverse = np.unique(s, return_inverse=True)
        k = values.size
        n_total = np.bincount(inverse, minlength=k)
        n_bads = np.bincount(inverse[y], minlength=k)
        total = np.bincount(inverse, weights=w, minlength=k)
        bads = np.bincount(inverse[y], weights=w[y], minlength=k)
        return cls._make(values, n_total, n_bads, total, bads)

    @classmethod
    def _make(cls, values: Any, n_total: Any, n_bads: Any, total: Any, bads: Any) -> CountTable:
        values = _as_float(values)
        return cls(
            labels=ScoreLabels(values),
            total=_as_float(total),
            n_total=_as_int(n_total),
            bads=None if bads is None else _as_float(bads),
            n_bads=None if n_bads is None else _as_int(n_bads),
            values=values,
        )

    @classmethod
    def from_values(cls, y_score: Any, *, sample_weight: Any = None) -> CountTable:
        """An unlabeled score table: totals per distinct score, ascending."""
        s = check_scores(y_score)
        w = check_weights(sample_weight, s.shape[0])
        values, inverse = np.unique(s, return_inverse=True)
        n_total = np.bincount(inverse, minlength=values.size)
        total = n_total if w is None else np.bincount(inverse, weights=w, minlength=values.size)
        return cls._make(values, n_total, None, total, None)

    @classmethod
    def from_bins(
        cls,
        bin_index: Any,
        binning: Binning,
        y_true: Any = None,
        *,
        sample_weight: Any = None,
    ) -> CountTable:
        """A binned table from each row's bin index (see :meth:`Binning.assign`)."""
        idx = np.asarray(bin_index, dtype=np.intp)
        k = binning.n_bins
        if idx.size and (idx.min() < 0 or idx.max() >= k):
            raise InvalidDataError(
                f"Expected bin indices in [0, {k}), got {idx.min()}..{idx.max()}"
            )
        w = check_weights(sample_weight, idx.shape[0])
        n_total = np.bincount(idx, minlength=k)
        total = n_total.astype(np.float64) if w is None else np.bincount(idx, w, minlength=k)
        bads = n_bads = None
        if y_true is not None:
            y = check_labels(y_true)
            check_same_length(idx.shape[0], y.shape[0], "y_true")
            n_bads = np.bincount(idx[y], minlength=k)
            bads = (
                n_bads.astype(np.float64) if w is None else np.bincount(idx[y], w[y], minlength=k)
            )
        return cls(
            labels=binning.labels,
            total=_as_float(total),
            n_total=_as_int(n_total),
            bads=None if bads is None else _as_float(bads),
            n_bads=None if n_bads is None else _as_int(n_bads),
            binning=binning,
        )

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Sequence[Any]],
        *,
        binning: Binning | None = None,
        labeled: bool = True,
    ) -> CountTable:
        """A table from the rows of a ``GROUP BY key, label`` query.

        Each row is ``(key, label, row_count, weight_sum)``: ``key`` is a bin index when
        ``binning`` is given, else a score value; ``label`` is 0 or 1 (ignored, and may be
        None, when ``labeled`` is false); ``weight_sum`` may be None for unweighted data.
        Several rows may share a key; they are added up.
        """
        # the rows' columns at once (a table of a score's distinct values has thousands)
        keys, row_labels, counts, weights = _columns_of(rows)
        if None in weights:  # unweighted rows weigh their count
            weights = tuple(n if w is None else w for n, w in zip(counts, weights, strict=True))
        bad_mask = None
        if labeled:
            if any(label not in (0, 1) for label in set(row_labels)):
                # NaN and infinities compare unequal to both; the first such row is named
                label = next(label for label in row_labels if label not in (0, 1))
                raise InvalidDataError(f"Expected label values 0 and 1, got {label!r}")
            bad_mask = np.asarray(row_labels, dtype=np.float64) == 1.0
        return cls.from_arrays(keys, counts, weights, bad_mask, binning=binning)

    @classmethod
    def from_arrays(
        cls, keys: Any, counts: Any, weights: Any, bads: Any, *, binning: Binning | None = None
    ) -> CountTable:
        """A table from cells in columns: each cell's ``keys`` (a bin index when ``binning``
        is given, else a score value), row ``counts`` and ``weights``, and ``bads``, a boolean
        mask of the cells of label 1 (None: an unlabeled table). Cells may share a key."""
        n_arr = np.asarray(counts, dtype=np.int64)
        w_arr = check_weights(np.asarray(weights, dtype=np.float64), n_arr.size, name="weight_sum")
        assert w_arr is not None
        bad_mask = None if bads is None else np.asarray(bads, dtype=bool)
        if binning is not None:
            idx = np.asarray(keys, dtype=np.intp)
            k = binning.n_bins
            if idx.size and (idx.min() < 0 or idx.max() >= k):
                found = keys.tolist() if isinstance(keys, np.ndarray) else keys
                raise InvalidDataError(
                    f"Expected bin indices in [0, {k}), got {sorted(set(found))!r}"
                )
            labels: Sequence[str] = binning.labels
            inverse, values = idx, None
        else:
            as_array = keys if isinstance(keys, np.ndarray) else np.asarray(keys, dtype=object)
            scores = check_scores(as_array, name="score")
            uniq, inverse = np.unique(scores, return_inverse=True)
            k, values, labels = uniq.size, uniq, ScoreLabels(uniq)
        n_total = np.bincount(inverse, weights=n_arr, minlength=k)
        total = np.bincount(inverse, weights=w_arr, minlength=k)
        bads_w = n_bads = None
        if bad_mask is not None:
            n_bads = np.bincount(inverse[bad_mask], weights=n_arr[bad_mask], minlength=k)
            bads_w = np.bincount(inverse[bad_mask], weights=w_arr[bad_mask], minlength=k)
        return cls(
            labels=labels,
            total=_as_float(total),
            n_total=_as_int(np.rint(n_total)),
            bads=None if bads_w is None else _as_float(bads_w),
            n_bads=None if n_bads is None else _as_int(np.rint(n_bads)),
            values=values,
            binning=binning,
        )

    # ----------------------------------------------------------------- operations
    def oriented(self, *, higher_is_riskier: bool) -> CountTable:
        """The rows in increasing order of risk.

        When higher scores are safer the rows are reversed and ``values`` negated, so that
        ``values`` still increase with risk; ``-values`` gives back the original scores.
        """
        if higher_is_riskier:
            return self
        rev = slice(None, None, -1)
        return CountTable(
            labels=self.labels[rev],
            total=self.total[rev],
            n_total=self.n_total[rev],
            bads=None if self.bads is None else self.bads[rev],
            n_bads=None if self.n_bads is None else self.n_bads[rev],
            values=None if self.values is None else -self.values[rev],
            binning=None,
        )

    def unlabeled(self) -> CountTable:
        """The same table with totals only."""
        return CountTable(
            self.labels, self.total, self.n_total, values=self.values, binning=self.binning
        )

    def equals(self, other: CountTable, *, rtol: float = 0.0) -> bool:
        """Same rows, same counts (weights compared to ``rtol``)."""
        if self.labels != other.labels or self.labeled != other.labeled:
            return False
        same_rows = np.array_equal(self.n_total, other.n_total) and (
            self.n_bads is None or np.array_equal(self.n_bads, np.asarray(other.n_bads))
        )
        floats = [(self.total, other.total), (self.bads, other.bads), (self.values, other.values)]
        return same_rows and all(_same_floats(a, b, rtol) for a, b in floats)

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame, one row per bin."""
        import pandas as pd

        data: dict[str, Any] = {"bin": list(self.labels)}
        if self.values is not None:
            data["score"] = self.values
        data["n_total"] = self.n_total
        data["total"] = self.total
        if self.labeled:
            data["n_bads"] = self.n_bads
            data["bads"] = self.bads
            data["goods"] = self.goods
        return pd.DataFrame(data)


def _columns_of(
    rows: Iterable[Sequence[Any]],
) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
    """The keys, labels, row counts and weights of ``(key, label, rows, weight)`` rows."""
    columns = tuple(zip(*rows, strict=True))
    if not columns:
        return (), (), (), ()
    keys, labels, counts, weights = columns
    return keys, labels, counts, weights
