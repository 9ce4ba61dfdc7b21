"""Lift (gain) table: quantile groups of the score, riskiest first, ties never split."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._ranking import Ranked, rank
from riskmon.metrics._validation import FloatArray, not_available

if TYPE_CHECKING:
    import pandas as pd

#: default number of quantile groups (deciles)
DEFAULT_N_GROUPS = 10

LIFT_COLUMNS = (
    "group",
    "score_min",
    "score_max",
    "n_rows",
    "count",
    "bads",
    "goods",
    "bad_rate",
    "bad_share",
    "cum_bad_share",
    "lift",
    "cum_lift",
    "ks",
)


def _ratio(num: FloatArray, den: FloatArray | float) -> FloatArray:
    """num / den, NaN where den is 0."""
    den_arr = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    out = np.full(num.shape, np.nan)
    np.divide(num, den_arr, out=out, where=den_arr > 0)
    return out


def _group_of_each_score(weights: FloatArray, n_groups: int) -> Any:
    """Quantile group (0 = riskiest) of each distinct score: the group holding its middle row."""
    before = np.cumsum(weights) - weights
    middle = (before + 0.5 * weights) / weights.sum()
    return np.minimum(np.floor(middle * n_groups).astype(np.int64), n_groups - 1)


@dataclass(frozen=True)
class LiftColumns:
    """A lift table as numpy columns (``LIFT_COLUMNS``, riskiest group first), without pandas:
    what a run reads (:func:`lift_columns_from_counts`); :meth:`frame` is the table
    :func:`lift_table` returns."""

    columns: dict[str, FloatArray]
    order_breaks: int
    n_groups_requested: int

    @property
    def empty(self) -> bool:
        """No group: the data has no rows."""
        return len(self.columns["group"]) == 0

    def frame(self) -> pd.DataFrame:
        """The columns as a DataFrame, ``order_breaks`` and ``n_groups_requested`` in its
        ``attrs``."""
        import pandas as pd

        frame = pd.DataFrame(self.columns)
        frame.attrs.update(
            order_breaks=self.order_breaks, n_groups_requested=self.n_groups_requested
        )
        return frame


def _lift_columns(r: Ranked, n_groups: int) -> LiftColumns:
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or n_groups < 1:
        raise InvalidDataError(f"Expected n_groups a positive integer, got {n_groups!r}")
    weights = r.goods + r.bads
    total = float(weights.sum())
    if total <= 0:
        not_available("The lift table is not available: the data has no rows", stacklevel=4)
        no_rows = {c: np.empty(0, dtype=np.float64) for c in LIFT_COLUMNS}
        return LiftColumns(no_rows, 0, int(n_groups))
    group = _group_of_each_score(weights, int(n_groups))
    # the groups that received a score, renumbered 0..k-1: a lookup over the groups when there
    # are fewer groups than scores (no sort of every row), else np.unique
    if n_groups <= group.size:
        present = np.bincount(group, minlength=int(n_groups)) > 0
        index = (np.cumsum(present) - 1)[group]
        k = int(np.count_nonzero(present))
    else:
        used, index = np.unique(group, return_inverse=True)
        k = used.size
    n_rows = np.bincount(index, weights=r.n_rows_per_score, minlength=k)
    bads: FloatArray = np.bincount(index, weights=r.bads, minlength=k).astype(np.float64)
    goods: FloatArray = np.bincount(index, weights=r.goods, minlength=k).astype(np.float64)
    count = bads + goods
    first = np.searchsorted(index, np.arange(k), side="left")
    last = np.searchsorted(index, np.arange(k), side="right") - 1
    edge_a, edge_b = r.scores[first], r.scores[last]
    big_b, big_g = r.total_bads, r.total_goods
    bad_rate = _ratio(bads, count)
    if big_b <= 0:
        not_available("Lift is not available: the data has no bads", stacklevel=4)
    if big_g <= 0:
        not_available("KS in the lift table is not available: the data has no goods", stacklevel=4)
    if np.isnan(bad_rate).any():
        not_available(
            "Bad rate is not available for a group whose rows all have zero weight", stacklevel=4
        )
    cum_bad_share = _ratio(np.cumsum(bads), big_b)
    columns = {
        "group": np.arange(1, k + 1),
        "score_min": np.minimum(edge_a, edge_b),
        "score_max": np.maximum(edge_a, edge_b),
        "n_rows": n_rows.round().astype(np.int64),
        "count": count,
        "bads": bads,
        "goods": goods,
        "bad_rate": bad_rate,
        "bad_share": _ratio(bads, big_b),
        "cum_bad_share": cum_bad_share,
        "lift": _ratio(bad_rate, big_b / total),
        "cum_lift": _ratio(cum_bad_share, np.cumsum(count) / total),
        "ks": np.abs(cum_bad_share - _ratio(np.cumsum(goods), big_g)),
    }
    # a break: a safer group with a strictly higher bad rate than the group just riskier
    breaks = int(np.count_nonzero(np.diff(bad_rate) > 0))
    return LiftColumns(columns, breaks, int(n_groups))


def lift_table_from_counts(
    table: CountTable, *, n_groups: int = DEFAULT_N_GROUPS, higher_is_riskier: bool = True
) -> pd.DataFrame:
    """Lift table of a labeled score table; see :func:`lift_table`.

    Examples
    --------
    >>> t = CountTable.from_scores([1, 1, 0, 1, 0, 0, 0, 0], [8, 7, 6, 5, 4, 3, 2, 1])
    >>> lift_table_from_counts(t, n_groups=4)["lift"].tolist()
    [2.6666666666666665, 1.3333333333333333, 0.0, 0.0]
    """
    return _lift_columns(rank(table, higher_is_riskier=higher_is_riskier), n_groups).frame()


def lift_columns_from_counts(
    table: CountTable, *, n_groups: int = DEFAULT_N_GROUPS, higher_is_riskier: bool = True
) -> LiftColumns:
    """:func:`lift_table_from_counts`' table as numpy columns, without pandas.

    Examples
    --------
    >>> t = CountTable.from_scores([1, 1, 0, 1, 0, 0, 0, 0], [8, 7, 6, 5, 4, 3, 2, 1])
    >>> lifted = lift_columns_from_counts(t, n_groups=4)
    >>> lifted.columns["lift"].tolist(), lifted.order_breaks
    ([2.6666666666666665, 1.3333333333333333, 0.0, 0.0], 0)
    """
    return _lift_columns(rank(table, higher_is_riskier=higher_is_riskier), n_groups)


def lift_table(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    n_groups: int = DEFAULT_N_GROUPS,
    higher_is_riskier: bool = True,
) -> pd.DataFrame:
    """Lift table: the population cut into ``n_groups`` quantile groups, riskiest first.

    Grouping rule: rows are ordered riskiest first and each distinct score goes, whole, to
    the quantile group that holds the middle of its tie group, i.e. group
    ⌊n_groups·(W_riskier + w/2)/W⌋ with W_riskier the weight ranked riskier, w the tie
    group's weight and W the total. Ties are never split, so groups are only roughly equal;
    a group that receives no score is dropped and the remaining groups are numbered 1, 2, ...

    Columns: ``group``; ``score_min``, ``score_max`` (caller's units); ``n_rows``; ``count``
    (summed weight); ``bads``; ``goods``; ``bad_rate`` = bads/count; ``bad_share`` =
    bads/B; ``cum_bad_share`` (capture rate of this and riskier groups); ``lift`` =
    bad_rate / (B/W); ``cum_lift`` = cum_bad_share / cumulative population share; ``ks`` =
    |cumulative bad share − cumulative good share| at the group's safe boundary.

    ``frame.attrs["order_breaks"]`` counts adjacent groups where the safer group has a
    strictly higher bad rate than the riskier one (0 for a perfectly rank-ordering model);
    ``frame.attrs["n_groups_requested"]`` keeps ``n_groups``.

    References
    ----------
    Siddiqi, N. (2006). Credit Risk Scorecards, chapter 6 (gains tables). Wiley.

    Examples
    --------
    >>> y = [1, 1, 0, 1, 0, 0, 0, 0]
    >>> frame = lift_table(y, [8, 7, 6, 5, 4, 3, 2, 1], n_groups=4)
    >>> frame[["group", "bads", "cum_bad_share", "ks"]].to_numpy().tolist()[:2]
    [[1.0, 2.0, 0.6666666666666666, 0.6666666666666666], [2.0, 1.0, 1.0, 0.8]]
    >>> frame.attrs["order_breaks"]
    0
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _lift_columns(rank(table, higher_is_riskier=higher_is_riskier), n_groups).frame()
