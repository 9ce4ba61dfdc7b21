"""Fitting a :class:`Binning` on a baseline sample.

Numeric variables get equal-frequency (``"quantile"``, the default) or equal-width
(``"uniform"``) bins, or explicit edges; categorical variables get one bin per level, with rare
levels optionally grouped. The fitted binning is then frozen and applied unchanged to every
later sample, so the figures of different months are comparable.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from riskmon.errors import InvalidDataError
from riskmon.metrics._binning import Binning, Kind, level_codes, numeric_values
from riskmon.metrics._validation import FloatArray, check_weights

Method = Literal["quantile", "uniform"]

#: number of value bins asked for when none is given (deciles, the industry habit)
DEFAULT_N_BINS = 10

_METHODS = ("quantile", "uniform")
_KINDS = ("numeric", "categorical")


def infer_kind(x: Any) -> Kind:
    """``"numeric"`` for integer and float dtypes, ``"categorical"`` for anything else.

    Only the dtype is read (lists through :class:`pandas.Series`, so ``[1.5, None]`` is
    numeric); booleans are categorical. Pass ``kind=`` to the fitter to override.

    Examples
    --------
    >>> infer_kind([1.5, None, 3.0]), infer_kind(["a", None]), infer_kind([True, False])
    ('numeric', 'categorical', 'categorical')
    """
    import pandas as pd

    dtype = x.dtype if isinstance(x, (pd.Series, pd.Index, np.ndarray)) else pd.Series(x).dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        return "categorical"
    return "numeric" if pd.api.types.is_numeric_dtype(dtype) else "categorical"


def fit_binning(
    x: Any,
    *,
    kind: Kind | None = None,
    method: Method = "quantile",
    n_bins: int = DEFAULT_N_BINS,
    edges: Any = None,
    min_level_share: float | None = None,
    max_levels: int | None = None,
    sample_weight: Any = None,
) -> Binning:
    """Fit the bins of one variable on a baseline sample.

    Parameters
    ----------
    x : array-like
        Baseline values, numeric or categorical; missing values (None, NaN) are allowed and
        always get their own bin.
    kind : {"numeric", "categorical"}, optional
        Inferred from the dtype when not given (:func:`infer_kind`).
    method : {"quantile", "uniform"}
        Numeric only. ``"quantile"``: equal-frequency bins whose edges are observed values,
        the (weighted) lower empirical quantiles at j/n_bins, j = 1..n_bins-1 (numpy's
        ``method="inverted_cdf"``); bins are right-closed, so a run of tied values is never
        split, duplicate edges are dropped, and an edge at the largest value (which would leave
        an empty top bin) is dropped too. Heavy ties therefore give *fewer* bins than asked:
        compare ``binning.n_value_bins`` with ``n_bins``; the figures computed on raw values
        report both. ``"uniform"``: n_bins equal-width bins between the smallest and largest
        finite value (bins may be empty). Infinite values never set an edge; they fall in the
        outer bins.
    n_bins : int
        Number of value bins asked for (numeric, not with ``edges``).
    edges : sequence of float, optional
        Explicit, strictly increasing, finite interior edges; bins ``(-inf, e0], (e0, e1], ...,
        (e_last, inf)``. Overrides ``method`` and ``n_bins``.
    min_level_share : float in (0, 1), optional
        Categorical only: levels whose (weighted) share of the non-missing baseline is below
        this are grouped into one bin, listed last. Default: every level its own bin. Levels
        never seen at fit time go to the unseen bin, not to this group.
    max_levels : int, optional
        Categorical only: keep the ``max_levels`` most frequent levels (by weight, ties by
        their text), each its own bin; every other level, seen at fit time or not, then goes
        to one "other" bin (``Binning.other``), listed last. Default: every level.
    sample_weight : array-like, optional
        Row weights for the quantiles and level shares.

    Returns
    -------
    Binning

    Examples
    --------
    >>> b = fit_binning([1, 2, 2, 2, 2, 3, 4, None], n_bins=4)
    >>> b.edges, b.labels
    ((2.0, 3.0), ('(-inf, 2]', '(2, 3]', '(3, inf)', 'missing'))
    >>> fit_binning(["a", "b", "a", None]).labels
    ('a', 'b', 'missing', 'unseen')
    """
    if kind is None:
        kind = infer_kind(x)
    elif kind not in _KINDS:
        raise InvalidDataError(f"Expected kind 'numeric' or 'categorical', got {kind!r}")
    if kind == "categorical":
        if edges is not None:
            raise InvalidDataError("Expected no edges for a categorical variable, got edges")
        if min_level_share is not None and max_levels is not None:
            raise InvalidDataError("Expected either min_level_share or max_levels, got both")
        return _fit_levels(
            x, min_level_share=min_level_share, max_levels=max_levels, sample_weight=sample_weight
        )
    if min_level_share is not None or max_levels is not None:
        raise InvalidDataError(
            "Expected min_level_share and max_levels only for a categorical variable"
        )
    if edges is not None:
        return Binning("numeric", edges=tuple(float(e) for e in np.asarray(edges).ravel()))
    if method not in _METHODS:
        raise InvalidDataError(f"Expected method 'quantile' or 'uniform', got {method!r}")
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InvalidDataError(f"Expected n_bins an integer >= 1, got {n_bins!r}")
    values = numeric_values(x)
    w = check_weights(sample_weight, values.shape[0])
    finite = np.isfinite(values)
    values = values[finite]
    w = None if w is None else w[finite]
    if method == "quantile":
        cuts = quantile_edges(values, int(n_bins), sample_weight=w)
    else:
        cuts = _uniform_edges(values, int(n_bins))
    return Binning("numeric", edges=tuple(cuts.tolist()))


def quantile_edges(values: Any, n_bins: int, *, sample_weight: Any = None) -> FloatArray:
    """Equal-frequency interior edges of finite values, at observed values, ties kept whole.

    Edge j is the smallest value v with (weighted) F(v) >= j/n_bins, j = 1..n_bins-1 (the
    ``inverted_cdf`` quantile); duplicates and an edge at the maximum are dropped.

    Examples
    --------
    >>> quantile_edges([1.0, 2, 3, 4, 5, 6, 7, 8], 4).tolist()
    [2.0, 4.0, 6.0]
    >>> quantile_edges([0.0, 0, 0, 0, 0, 0, 1, 2], 4).tolist()
    [0.0]
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return x
    j = np.arange(1, n_bins, dtype=np.int64)
    if sample_weight is None:
        x = np.sort(x)
        # integer arithmetic: the smallest k (1-based) with k * n_bins >= j * n
        position = -(-j * x.size // n_bins) - 1
    else:
        order = np.argsort(x, kind="stable")
        x = x[order]
        w = np.asarray(sample_weight, dtype=np.float64)[order]
        cumulative = np.cumsum(w)
        if cumulative[-1] <= 0:
            return np.zeros(0)
        position = np.searchsorted(cumulative / cumulative[-1], j / n_bins, side="left")
        position = np.minimum(position, x.size - 1)
    cuts: FloatArray = np.unique(x[position])
    below_max: FloatArray = cuts[cuts < x[-1]]
    return below_max


def _uniform_edges(x: FloatArray, n_bins: int) -> FloatArray:
    if x.size == 0:
        return np.zeros(0)
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        return np.zeros(0)
    cuts = np.unique(lo + (hi - lo) * np.arange(1, n_bins) / n_bins)
    return cuts[(cuts > lo) & (cuts < hi)]


def _fit_levels(
    x: Any, *, min_level_share: float | None, max_levels: int | None, sample_weight: Any
) -> Binning:
    codes, texts = level_codes(x)
    w = check_weights(sample_weight, codes.shape[0])
    seen = codes >= 0
    rows_per_code = np.bincount(codes[seen], minlength=len(texts))
    per_code = np.bincount(
        codes[seen], weights=None if w is None else w[seen], minlength=len(texts)
    )
    # a category declared (pandas Categorical) but absent from the baseline is not a level:
    # it is unseen, like any other new value
    observed = rows_per_code > 0
    weight_of, total = _weights_by_text(texts, observed, per_code)
    levels = sorted(weight_of)
    if max_levels is not None:
        if isinstance(max_levels, bool) or not isinstance(max_levels, int) or max_levels < 1:
            raise InvalidDataError(f"Expected max_levels an integer >= 1, got {max_levels!r}")
        if len(levels) > max_levels:
            # the most frequent first, ties by text: the same levels whatever the row order
            kept = sorted(levels, key=lambda lvl: (-float(weight_of[lvl]), lvl))[:max_levels]
            return Binning("categorical", levels=tuple((lvl,) for lvl in sorted(kept)), other=True)
    if min_level_share is None:
        return Binning("categorical", levels=tuple((level,) for level in levels))
    if not 0 < min_level_share < 1:
        raise InvalidDataError(f"Expected min_level_share in (0, 1), got {min_level_share!r}")
    rare = {lvl for lvl in levels if total > 0 and weight_of[lvl] / total < min_level_share}
    groups: list[tuple[str, ...]] = [(lvl,) for lvl in levels if lvl not in rare]
    if rare:
        groups.append(tuple(sorted(rare)))
    return Binning("categorical", levels=tuple(groups))


def _weights_by_text(
    texts: list[str], observed: npt.NDArray[np.bool_], per_code: npt.NDArray[Any]
) -> tuple[dict[str, Any], float]:
    """The weight of each observed level text, and their total (added up in the texts' order,
    as pandas adds a Series). Distinct values can share a text (1 and "1"): they are added up
    by pandas' group-by; texts that are distinct already (the levels a database gave as texts)
    are taken as they are, without importing pandas."""
    seen = [t for t, kept in zip(texts, observed.tolist(), strict=True) if kept]
    weights = per_code[observed]
    if len(set(seen)) == len(seen):
        order = sorted(range(len(seen)), key=seen.__getitem__)
        in_order = weights[order]
        return dict(zip((seen[i] for i in order), in_order.tolist(), strict=True)), float(
            in_order.sum()
        )
    import pandas as pd

    summed = pd.Series(weights, index=np.asarray(seen, dtype=object)).groupby(level=0).sum()
    by_text = dict(zip(map(str, summed.index), summed.to_numpy().tolist(), strict=True))
    return by_text, float(summed.sum())


def resolve_binning(
    x: Any,
    binning: Binning | None,
    *,
    kind: Kind | None,
    method: Method,
    n_bins: int,
    edges: Any,
    min_level_share: float | None,
    sample_weight: Any,
) -> tuple[Binning, int | None, tuple[str, ...]]:
    """The binning to use on raw values: ``binning`` when given, else one fitted on ``x``.

    Also returns the number of value bins asked for (None when nothing was asked: a given
    binning, explicit edges, or levels) and a note when fewer bins were fitted than asked.
    """
    if binning is not None:
        if edges is not None:
            raise InvalidDataError("Expected either binning or edges, got both")
        if not isinstance(binning, Binning):
            raise InvalidDataError(f"Expected a Binning, got {type(binning).__name__}")
        return binning, None, ()
    fitted = fit_binning(
        x,
        kind=kind,
        method=method,
        n_bins=n_bins,
        edges=edges,
        min_level_share=min_level_share,
        sample_weight=sample_weight,
    )
    if fitted.kind == "categorical" or edges is not None:
        return fitted, None, ()
    notes: tuple[str, ...] = ()
    if fitted.n_value_bins < n_bins:
        notes = (
            f"{n_bins} {method} bins asked for, {fitted.n_value_bins} fitted: tied or "
            f"constant values are never split",
        )
    return fitted, int(n_bins), notes
