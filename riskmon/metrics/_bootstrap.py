"""Bootstrap confidence intervals for any figure of (y_true, y_score).

Percentile bootstrap, stratified by default (bads and goods resampled separately, so every
resample keeps the observed bad count), seeded and reproducible. For unweighted data and a
figure that riskmon can compute from a count table, a resample of rows is a multinomial
draw over the cells of the score table, so each resample costs O(bins) instead of O(n).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._curves import (
    average_precision,
    average_precision_from_counts,
    break_even_point,
    break_even_point_from_counts,
)
from riskmon.metrics._discrimination import (
    gini,
    gini_from_counts,
    ks_statistic,
    ks_statistic_from_counts,
    roc_auc,
    roc_auc_from_counts,
)
from riskmon.metrics._validation import (
    FloatArray,
    IntArray,
    check_fraction,
    check_labels,
    check_same_length,
    check_scores,
    check_weights,
    not_available,
)

#: default number of resamples
DEFAULT_N_RESAMPLES = 1000
#: default seed: the same data gives the same interval unless a seed is chosen
DEFAULT_RANDOM_STATE = 0
#: default confidence level
DEFAULT_CONFIDENCE_LEVEL = 0.95

Metric = Callable[..., Any]

# array figures whose count-table twin lets a resample be drawn over the table's cells
_COUNT_TWINS: dict[Metric, Callable[..., Any]] = {
    ks_statistic: ks_statistic_from_counts,
    roc_auc: roc_auc_from_counts,
    gini: gini_from_counts,
    average_precision: average_precision_from_counts,
    break_even_point: break_even_point_from_counts,
}


@dataclass(frozen=True)
class BootstrapResult:
    """A figure with its percentile bootstrap interval.

    ``estimate`` is the figure on the full data; ``ci_low``, ``ci_high`` the
    (1 − level)/2 and (1 + level)/2 quantiles of the resampled figures; ``std_error``
    their standard deviation; ``n_failed`` the resamples on which the figure was not
    defined (left out). ``float(result)`` gives the estimate.
    """

    estimate: float
    ci_low: float
    ci_high: float
    std_error: float
    confidence_level: float
    n_resamples: int
    n_failed: int
    stratified: bool

    def __float__(self) -> float:
        return self.estimate


def _resolve(metric: Metric, kwargs: Mapping[str, Any]) -> tuple[Metric, dict[str, Any]]:
    """Unwrap ``functools.partial(f, **kw)`` so a known figure keeps its fast path."""
    merged = dict(kwargs)
    if isinstance(metric, functools.partial) and not metric.args:
        merged = {**metric.keywords, **merged}
        metric = metric.func
    return metric, merged


def _count_resamples(
    table: CountTable,
    twin: Callable[..., Any],
    kwargs: dict[str, Any],
    rng: np.random.Generator,
    n_resamples: int,
    stratify: bool,
) -> FloatArray:
    assert table.n_bads is not None
    n_bads, n_goods = table.n_bads, table.n_total - table.n_bads
    n_b, n_g = int(n_bads.sum()), int(n_goods.sum())
    n = n_b + n_g
    out = np.empty(n_resamples)
    for i in range(n_resamples):
        if stratify:
            bads: IntArray = rng.multinomial(n_b, n_bads / n_b)
            goods: IntArray = rng.multinomial(n_g, n_goods / n_g)
        else:
            cells = rng.multinomial(n, np.r_[n_bads, n_goods] / n)
            bads, goods = cells[: len(table)], cells[len(table) :]
        total = bads + goods
        resample = CountTable(
            labels=table.labels,
            total=total.astype(np.float64),
            n_total=total,
            bads=bads.astype(np.float64),
            n_bads=bads,
            values=table.values,
        )
        out[i] = float(twin(resample, **kwargs))
    return out


def _row_resamples(
    metric: Metric,
    y: Any,
    s: FloatArray,
    w: FloatArray | None,
    kwargs: dict[str, Any],
    rng: np.random.Generator,
    n_resamples: int,
    stratify: bool,
) -> FloatArray:
    groups = [np.flatnonzero(y), np.flatnonzero(~y)] if stratify else [np.arange(y.size)]
    out = np.empty(n_resamples)
    for i in range(n_resamples):
        idx = np.concatenate([g[rng.integers(0, g.size, g.size)] for g in groups])
        if w is not None:
            kwargs = {**kwargs, "sample_weight": w[idx]}
        out[i] = float(metric(y[idx], s[idx], **kwargs))
    return out


def bootstrap_ci(
    metric: Metric,
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    random_state: int | np.random.Generator | None = DEFAULT_RANDOM_STATE,
    stratify: bool = True,
    metric_kwargs: Mapping[str, Any] | None = None,
) -> BootstrapResult:
    """Percentile bootstrap confidence interval of ``metric(y_true, y_score, ...)``.

    Each resample draws rows with replacement, bads and goods separately when ``stratify``
    (so the bad count is fixed, as in a cohort with a known number of defaults), from all
    rows otherwise; a weighted row keeps its weight. The interval is the empirical
    (1 − level)/2 and (1 + level)/2 quantiles of the resampled figures.

    ``metric`` is any callable ``metric(y_true, y_score, **metric_kwargs)`` returning a
    number (or a result with ``__float__``); it receives ``sample_weight=`` only when
    weights are given. For riskmon's own ``ks_statistic``, ``roc_auc``, ``gini``,
    ``average_precision`` and ``break_even_point`` (also wrapped in
    :func:`functools.partial`) on unweighted data, a resample is drawn as multinomial counts
    over the cells of the score table, which has exactly the distribution of a row resample
    and costs O(bins).

    Resamples on which the figure is undefined (e.g. no bads in an unstratified resample)
    are left out and counted in ``n_failed``, with one warning.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap, chapter 13.
    Chapman & Hall.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> y = rng.integers(0, 2, 500)
    >>> s = y + rng.normal(size=500)
    >>> r = bootstrap_ci(roc_auc, y, s, n_resamples=200, random_state=7)
    >>> r.ci_low < r.estimate < r.ci_high, r == bootstrap_ci(
    ...     roc_auc, y, s, n_resamples=200, random_state=7)
    (True, True)
    """
    if not callable(metric):
        raise InvalidDataError(f"Expected a callable metric, got {metric!r}")
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, (int, np.integer))
        or (n_resamples < 1)
    ):
        raise InvalidDataError(f"Expected n_resamples a positive integer, got {n_resamples!r}")
    level = check_fraction(confidence_level, "confidence_level")
    fn, kwargs = _resolve(metric, metric_kwargs or {})
    y = check_labels(y_true)
    s = check_scores(y_score)
    check_same_length(y.shape[0], s.shape[0], "y_score")
    w = check_weights(sample_weight, y.shape[0])
    rng = np.random.default_rng(random_state)
    twin = _COUNT_TWINS.get(fn)
    if w is None and twin is not None:
        table = CountTable.from_scores(y, s)
        estimate = float(twin(table, **kwargs))
    else:
        weight_arg = {} if w is None else {"sample_weight": w}
        estimate = float(fn(y, s, **weight_arg, **kwargs))
    n_bads = int(y.sum())
    if stratify and (n_bads == 0 or n_bads == y.size):
        nan = float("nan")
        not_available("A stratified bootstrap needs both bads and goods", stacklevel=2)
        return BootstrapResult(estimate, nan, nan, nan, level, int(n_resamples), 0, stratify)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        if w is None and twin is not None:
            values = _count_resamples(table, twin, kwargs, rng, int(n_resamples), stratify)
        else:
            values = _row_resamples(fn, y, s, w, kwargs, rng, int(n_resamples), stratify)
    finite = values[np.isfinite(values)]
    n_failed = int(values.size - finite.size)
    if n_failed:
        not_available(
            f"The figure was not defined on {n_failed} of {values.size} resamples; "
            "they are left out of the interval",
            stacklevel=2,
        )
    if finite.size < 2:
        nan = float("nan")
        return BootstrapResult(estimate, nan, nan, nan, level, int(n_resamples), n_failed, stratify)
    low, high = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
    return BootstrapResult(
        estimate=estimate,
        ci_low=float(low),
        ci_high=float(high),
        std_error=float(finite.std(ddof=1)),
        confidence_level=level,
        n_resamples=int(n_resamples),
        n_failed=n_failed,
        stratified=stratify,
    )
