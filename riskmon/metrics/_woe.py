"""Weight of evidence and information value of one characteristic.

Siddiqi's convention (*Credit Risk Scorecards*, Wiley, 2006): with %g_i and %b_i the shares of
all goods and of all bads that fall in bin i,

    WOE_i = ln(%g_i / %b_i)            (positive: safer than average)
    IV    = Σ (%g_i − %b_i)·WOE_i      (≥ 0)

Zero cells are smoothed as :mod:`riskmon.metrics._divergence` explains; bins with no rows at
all contribute 0 and are flagged empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from riskmon.metrics._bin_fit import DEFAULT_N_BINS, Method, resolve_binning
from riskmon.metrics._binning import Binning, Kind
from riskmon.metrics._counts import CountTable
from riskmon.metrics._divergence import DEFAULT_SMOOTHING, check_smoothing, divergence_terms
from riskmon.metrics._validation import check_labels, check_same_length, not_available

if TYPE_CHECKING:
    import pandas as pd

#: (upper bound, band) for IV, Siddiqi (2006); a value equal to a bound is in the next band,
#: except 0.5 itself, which is still "strong"; above 0.5 an IV is "too good to be true"
IV_USELESS_BELOW = 0.02
IV_WEAK_BELOW = 0.1
IV_MEDIUM_BELOW = 0.3
IV_STRONG_UP_TO = 0.5
NOT_AVAILABLE = "not available"


def iv_band(value: float) -> str:
    """The strength band of an information value.

    Examples
    --------
    >>> [iv_band(v) for v in (0.01, 0.05, 0.2, 0.4, 0.8)]
    ['useless', 'weak', 'medium', 'strong', 'suspicious']
    """
    if not np.isfinite(value):
        return NOT_AVAILABLE
    if value < IV_USELESS_BELOW:
        return "useless"
    if value < IV_WEAK_BELOW:
        return "weak"
    if value < IV_MEDIUM_BELOW:
        return "medium"
    return "strong" if value <= IV_STRONG_UP_TO else "suspicious"


@dataclass(frozen=True, eq=False)
class IVResult:
    """An information value with everything needed to store and explain it.

    ``float(result)`` is the IV. ``table`` is :func:`woe_table`'s per-bin frame (built on
    first access, from the arrays in ``per_bin``). ``n_bins`` counts the bins holding rows;
    ``n_bins_requested`` is the number of value bins asked for when the binning was fitted
    (None otherwise); ``notes`` say, e.g., that ties allowed fewer bins than asked, or where
    smoothing was applied.
    """

    value: float
    band: str
    smoothing: float
    n_bins: int
    n_goods: int
    n_bads: int
    per_bin: dict[str, Any] = field(repr=False)
    binning: Binning | None = None
    n_bins_requested: int | None = None
    notes: tuple[str, ...] = ()

    def __float__(self) -> float:
        return self.value

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per bin; columns as :func:`woe_table_from_counts` describes."""
        import pandas as pd

        frame = pd.concat(
            [
                bin_columns(self.per_bin["bin"], self.binning),
                pd.DataFrame(self.per_bin).drop(columns="bin"),
            ],
            axis=1,
        )
        frame.attrs.update(
            smoothing=self.smoothing,
            information_value=self.value,
            n_bins_requested=self.n_bins_requested,
            notes=self.notes,
        )
        return frame


def bin_columns(labels: Any, binning: Binning | None) -> pd.DataFrame:
    """``bin``, ``lower``, ``upper``, ``levels`` of each bin (bounds unknown without binning)."""
    import pandas as pd

    if binning is not None:
        return binning.describe()
    nan = np.full(len(labels), np.nan)
    return pd.DataFrame(
        {"bin": list(labels), "lower": nan, "upper": nan, "levels": [None] * len(labels)}
    )


def _woe(table: CountTable, smoothing: float) -> IVResult:
    smoothing = check_smoothing(smoothing)
    bads = table._require_bads()
    goods = table.goods
    assert table.n_bads is not None
    n_bads, n_goods = int(table.n_bads.sum()), int(table.n_goods.sum())
    total = table.total.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        per_bin: dict[str, Any] = {
            "bin": table.labels,
            "rows": table.n_total,
            "goods": goods,
            "bads": bads,
            "n_goods": table.n_goods,
            "n_bads": table.n_bads,
            "share": table.total / total if total > 0 else np.full(len(table), np.nan),
            "bad_rate": np.where(table.total > 0, bads / table.total, np.nan),
        }
    if goods.sum() > 0 and bads.sum() > 0:
        d = divergence_terms(goods, n_goods, bads, n_bads, smoothing=smoothing)
        value = d.value
        smoothed = d.p_smoothed | d.q_smoothed
        columns = [
            d.p_share,
            d.q_share,
            d.p_used,
            d.q_used,
            d.log_ratio,
            d.terms,
            smoothed,
            d.empty,
        ]
        notes = _smoothing_notes(table.labels, smoothed, smoothing)
    else:
        what = "rows" if total == 0 else "bads" if bads.sum() == 0 else "goods"
        value = not_available(
            f"WOE and IV need both goods and bads; the sample has no {what} "
            f"({n_goods} good and {n_bads} bad rows)",
            stacklevel=4,
        )
        nan = np.full(len(table), np.nan)
        columns = [nan, nan, nan, nan, nan, nan, np.zeros(len(table), bool), table.total == 0]
        notes = ()
    names = [
        "goods_share",
        "bads_share",
        "goods_share_used",
        "bads_share_used",
        "woe",
        "iv_contribution",
        "smoothed",
        "empty",
    ]
    per_bin.update(zip(names, columns, strict=True))
    n_bins = int((table.n_total > 0).sum())
    return IVResult(
        value,
        iv_band(value),
        smoothing,
        n_bins,
        n_goods,
        n_bads,
        per_bin,
        table.binning,
        None,
        notes,
    )


def _smoothing_notes(labels: Sequence[str], smoothed: Any, smoothing: float) -> tuple[str, ...]:
    if not smoothed.any():
        return ()
    where = ", ".join(label for label, s in zip(labels, smoothed, strict=True) if s)
    return (f"zero cells smoothed with a pseudo-count of {smoothing:g} rows in: {where}",)


def woe_table_from_counts(
    table: CountTable, *, smoothing: float = DEFAULT_SMOOTHING
) -> pd.DataFrame:
    """Per-bin WOE and IV contributions of a labeled count table.

    Parameters
    ----------
    table : CountTable
        Goods and bads per bin (weighted sums and row counts).
    smoothing : float
        Pseudo-count, in rows, given to a zero cell (a bin with goods but no bads, or the
        reverse): its share becomes ``smoothing / n`` with n the class's row count.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin``, ``lower``/``upper`` (numeric bins ``(lower, upper]``),
        ``levels`` (categorical), ``rows``, ``goods``, ``bads`` (summed weights), ``n_goods``,
        ``n_bads`` (rows), ``share`` of all weight, ``bad_rate``, the raw shares
        ``goods_share`` = %g_i and ``bads_share`` = %b_i, the shares used after smoothing,
        ``woe`` = ln(%g_i/%b_i), ``iv_contribution`` = (%g_i − %b_i)·WOE_i, and the flags
        ``smoothed`` and ``empty`` (no rows: WOE undefined, contribution 0).
        ``attrs`` holds ``smoothing`` and ``information_value``. A sample without goods or
        without bads gives NaN figures and a :class:`DegenerateDataWarning`.

    Examples
    --------
    >>> from riskmon.metrics import Binning
    >>> b = Binning("categorical", levels=(("a",), ("b",)))
    >>> t = CountTable.from_bins(b.assign(["a", "a", "a", "b", "b", "b"]), b, [0, 0, 1, 0, 1, 1])
    >>> woe_table_from_counts(t)[["bin", "goods", "bads", "woe"]].round(4)
           bin  goods  bads     woe
    0        a    2.0   1.0  0.6931
    1        b    1.0   2.0 -0.6931
    2  missing    0.0   0.0     NaN
    3   unseen    0.0   0.0     NaN
    """
    return _woe(table, smoothing).table


def information_value_from_counts(
    table: CountTable, *, smoothing: float = DEFAULT_SMOOTHING
) -> IVResult:
    """Information value of a labeled count table: IV = Σ (%g_i − %b_i)·ln(%g_i / %b_i).

    Parameters and smoothing as :func:`woe_table_from_counts`. IV ≥ 0; bands after Siddiqi
    (2006): < 0.02 useless, 0.02–0.1 weak, 0.1–0.3 medium, 0.3–0.5 strong, > 0.5 suspicious.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 0, 1, 1], [1, 1, 1, 2, 2, 2])
    >>> r = information_value_from_counts(t)
    >>> round(float(r), 4), r.band   # 2 · (2/3 − 1/3) · ln 2
    (0.4621, 'strong')
    """
    return _woe(table, smoothing)


def _labeled_table(
    x: Any,
    y_true: Any,
    *,
    binning: Binning | None,
    kind: Kind | None,
    method: Method,
    n_bins: int,
    edges: Any,
    min_level_share: float | None,
    sample_weight: Any,
) -> tuple[CountTable, int | None, tuple[str, ...]]:
    y = check_labels(y_true)
    check_same_length(y.shape[0], len(x), "x")
    used, requested, notes = resolve_binning(
        x,
        binning,
        kind=kind,
        method=method,
        n_bins=n_bins,
        edges=edges,
        min_level_share=min_level_share,
        sample_weight=sample_weight,
    )
    table = CountTable.from_bins(used.assign(x), used, y, sample_weight=sample_weight)
    return table, requested, notes


def information_value(
    x: Any,
    y_true: Any,
    *,
    binning: Binning | None = None,
    kind: Kind | None = None,
    method: Method = "quantile",
    n_bins: int = DEFAULT_N_BINS,
    edges: Any = None,
    min_level_share: float | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    sample_weight: Any = None,
) -> IVResult:
    """Information value of a characteristic, from raw values and labels.

    IV = Σ (%g_i − %b_i)·ln(%g_i / %b_i) over the bins of ``x`` (Siddiqi, 2006), with
    ``binning`` or one fitted on ``x`` by :func:`fit_binning` (``kind``, ``method``,
    ``n_bins``, ``edges``, ``min_level_share``: see there). Equal to
    :func:`information_value_from_counts` on the count table of the same bins.

    Parameters
    ----------
    x : array-like
        Numeric or categorical values; missing values form their own bin.
    y_true : array-like of 0/1
        1 = bad.
    smoothing : float
        Pseudo-count in rows for zero cells (see :func:`woe_table_from_counts`).
    sample_weight : array-like, optional
        Row weights, for the binning and the counts.

    Returns
    -------
    IVResult
        ``float(result)`` is the IV; ``result.table`` the per-bin WOE table;
        ``n_bins_requested`` and ``n_bins`` show when ties allowed fewer bins than asked.

    Examples
    --------
    >>> r = information_value(["a", "a", "a", "b", "b", "b", None], [0, 0, 1, 0, 1, 1, 0])
    >>> round(float(r), 4), r.band, r.smoothing
    (0.51, 'suspicious', 0.5)
    >>> r.notes   # the missing bin has a good but no bad: its %b is 0.5 / 3
    ('zero cells smoothed with a pseudo-count of 0.5 rows in: missing',)
    """
    table, requested, notes = _labeled_table(
        x,
        y_true,
        binning=binning,
        kind=kind,
        method=method,
        n_bins=n_bins,
        edges=edges,
        min_level_share=min_level_share,
        sample_weight=sample_weight,
    )
    r = _woe(table, smoothing)
    return replace(r, n_bins_requested=requested, notes=notes + r.notes)


def woe_table(
    x: Any,
    y_true: Any,
    *,
    binning: Binning | None = None,
    kind: Kind | None = None,
    method: Method = "quantile",
    n_bins: int = DEFAULT_N_BINS,
    edges: Any = None,
    min_level_share: float | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    sample_weight: Any = None,
) -> pd.DataFrame:
    """Per-bin weight of evidence of a characteristic, from raw values and labels.

    WOE_i = ln(%g_i / %b_i), positive = safer than average (Siddiqi, 2006). Options as
    :func:`information_value`; columns as :func:`woe_table_from_counts`. ``attrs`` also holds
    ``n_bins_requested`` and ``notes``.

    Examples
    --------
    >>> t = woe_table([1, 2, 3, 4, 5, 6], [0, 0, 1, 0, 1, 1], n_bins=2)
    >>> t[["bin", "rows", "bads", "woe", "smoothed"]].round(4)
             bin  rows  bads     woe  smoothed
    0  (-inf, 3]     3   1.0  0.6931     False
    1   (3, inf)     3   2.0 -0.6931     False
    2    missing     0   0.0     NaN     False
    """
    result = information_value(
        x,
        y_true,
        binning=binning,
        kind=kind,
        method=method,
        n_bins=n_bins,
        edges=edges,
        min_level_share=min_level_share,
        smoothing=smoothing,
        sample_weight=sample_weight,
    )
    return result.table
