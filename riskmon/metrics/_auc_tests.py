"""Tests on AUCs: has the AUC fallen since the model was built (the ECB's test), and do two
scores of the same loans discriminate alike (DeLong's paired test)?

Both rest on DeLong's placements (:func:`~riskmon.metrics.roc_auc`): a bad's share of goods
ranked safer and a good's share of bads ranked riskier, ties counting ½.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._discrimination import (
    DEFAULT_CONFIDENCE_LEVEL,
    AUCResult,
    placements,
    roc_auc_from_counts,
)
from riskmon.metrics._validation import (
    FloatArray,
    IntArray,
    check_fraction,
    check_labels,
    check_same_length,
    check_scores,
    not_available,
)


# --------------------------------------------------------------------------- ECB AUC test
@dataclass(frozen=True)
class AUCTestResult:
    """The test of an AUC against the AUC the model had when it was built.

    Attributes
    ----------
    statistic : float
        S = (AUC_init − AUC_now) / s, s the standard error used; ``float(result)`` gives it.
    pvalue : float
        1 − Φ(S): small when the AUC has fallen by more than chance explains.
    auc, std_error : float
        The current AUC and its DeLong standard error s_now.
    initial_auc : float
    initial_auc_se : float or None
        The initial AUC's standard error when it was taken into account.
    """

    statistic: float
    pvalue: float
    auc: float
    std_error: float
    initial_auc: float
    initial_auc_se: float | None

    def __float__(self) -> float:
        return self.statistic


def auc_test_from_counts(
    table: CountTable,
    *,
    initial_auc: float,
    initial_auc_se: float | None = None,
    higher_is_riskier: bool = True,
) -> AUCTestResult:
    """The AUC test of a labeled score table; see :func:`auc_test`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> round(auc_test_from_counts(t, initial_auc=0.9).statistic, 6)
    0.141421
    """
    init, init_se = _check_initial(initial_auc, initial_auc_se)
    return _auc_test(roc_auc_from_counts(table, higher_is_riskier=higher_is_riskier), init, init_se)


def auc_test(
    y_true: Any,
    y_score: Any,
    *,
    initial_auc: float,
    initial_auc_se: float | None = None,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
) -> AUCTestResult:
    """Test whether the AUC has fallen since the model was developed (ECB).

        S = (AUC_init − AUC_now) / s_now,    p = 1 − Φ(S)

    with s_now the DeLong standard error of the current AUC (as :func:`roc_auc` computes it).
    H0: the AUC has not deteriorated; a small p says it has. The initial AUC is taken as
    known; when it is itself an estimate, give its standard error ``initial_auc_se`` and the
    denominator becomes √(s_now² + s_init²) (the two samples being independent).

    Parameters
    ----------
    y_true : array-like of 0/1
    y_score : array-like of float
    initial_auc : float
        The AUC at development (initial validation), in [0, 1].
    initial_auc_se : float, optional
        Its standard error, >= 0.
    sample_weight : array-like, optional
    higher_is_riskier : bool, default True

    Returns
    -------
    AUCTestResult
        NaN statistic and p-value (with a :class:`~riskmon.errors.DegenerateDataWarning`) when
        the AUC or its standard error is not available, or the standard error is 0.

    References
    ----------
    European Central Bank (2019). Instructions for reporting the validation results of
    internal models — IRB Pillar I models for credit risk, section 2.5.4.1.
    DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Biometrics 44(3), 837–845.

    Examples
    --------
    AUC 0.875 with standard error √(1/32) against an initial AUC of 0.9:

    >>> r = auc_test([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], initial_auc=0.9)
    >>> r.auc, round(r.statistic, 6), round(r.pvalue, 4)
    (0.875, 0.141421, 0.4438)
    """
    init, init_se = _check_initial(initial_auc, initial_auc_se)
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _auc_test(roc_auc_from_counts(table, higher_is_riskier=higher_is_riskier), init, init_se)


def _check_initial(initial_auc: float, initial_auc_se: float | None) -> tuple[float, float | None]:
    init = check_fraction(initial_auc, "initial_auc", closed=True)
    if initial_auc_se is None:
        return init, None
    if not (math.isfinite(initial_auc_se) and initial_auc_se >= 0):
        raise InvalidDataError(f"Expected initial_auc_se >= 0, got {initial_auc_se!r}")
    return init, float(initial_auc_se)


def _auc_test(a: AUCResult, init: float, init_se: float | None) -> AUCTestResult:
    variance = a.std_error**2 + (init_se or 0.0) ** 2
    if math.isnan(variance):  # roc_auc has said why
        statistic = float("nan")
    elif variance == 0:
        statistic = not_available(
            "The AUC test is not available: the AUC's standard error is 0", stacklevel=4
        )
    else:
        statistic = (init - a.auc) / math.sqrt(variance)
    from scipy.special import ndtr

    return AUCTestResult(statistic, float(ndtr(-statistic)), a.auc, a.std_error, init, init_se)


# --------------------------------------------------------------------------- DeLong paired
@dataclass(frozen=True)
class DeLongTestResult:
    """DeLong's test of the difference between the AUCs of two scores of the same loans.

    Attributes
    ----------
    statistic : float
        z = (AUC_a − AUC_b) / s; ``float(result)`` gives it.
    pvalue : float
        Two-sided: 2·(1 − Φ(|z|)).
    difference : float
        AUC_a − AUC_b.
    std_error : float
        s, the DeLong standard error of the difference.
    interval : (float, float)
        difference ± z_level·s, clipped to [−1, 1].
    auc_a, auc_b : float
    confidence_level : float
    """

    statistic: float
    pvalue: float
    difference: float
    std_error: float
    interval: tuple[float, float]
    auc_a: float
    auc_b: float
    confidence_level: float

    def __float__(self) -> float:
        return self.statistic


def delong_test(
    y_true: Any,
    y_score_a: Any,
    y_score_b: Any,
    *,
    higher_is_riskier: bool = True,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> DeLongTestResult:
    """DeLong's paired test: do two scores of the same loans have the same AUC?

    Each bad has a placement under each score (V10: its share of goods ranked safer, +½ tied)
    and so does each good (V01: its share of bads ranked riskier, +½ tied); the AUC is the
    mean placement. With S10 and S01 the 2×2 sample covariance matrices (divisors n − 1 and
    m − 1) of the placement pairs over the n bads and m goods, S = S10/n + S01/m estimates the
    covariance of the two AUCs, and

        z = (AUC_a − AUC_b) / √(S_aa + S_bb − 2·S_ab),    p = 2·(1 − Φ(|z|)).

    Both scores are oriented alike by ``higher_is_riskier``.

    Parameters
    ----------
    y_true : array-like of 0/1
    y_score_a, y_score_b : array-like of float
        Two scores of the same rows.
    higher_is_riskier : bool, default True
    confidence_level : float, default 0.95
        Of the interval of the difference.

    Returns
    -------
    DeLongTestResult
        NaN figures (with a :class:`~riskmon.errors.DegenerateDataWarning`) when there are no
        bads or no goods; NaN z, p-value and interval when there are fewer than two of either,
        and NaN z and p-value when the difference has no variance (as when the two scores
        order the loans alike).

    References
    ----------
    DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Comparing the areas under two
    or more correlated receiver operating characteristic curves: a nonparametric approach.
    Biometrics 44(3), 837–845.

    Examples
    --------
    >>> r = delong_test([0, 0, 1, 1, 0, 1], [1, 2, 3, 4, 5, 6], [1, 5, 3, 2, 4, 6])
    >>> round(r.auc_a, 4), round(r.auc_b, 4), round(r.difference, 4)
    (0.7778, 0.5556, 0.2222)
    """
    level = check_fraction(confidence_level, "confidence_level")
    y = check_labels(y_true)
    sign = 1.0 if higher_is_riskier else -1.0
    a = sign * check_scores(y_score_a, name="y_score_a")
    b = sign * check_scores(y_score_b, name="y_score_b")
    check_same_length(y.shape[0], a.shape[0], "y_score_a")
    check_same_length(y.shape[0], b.shape[0], "y_score_b")
    _, row = np.unique(a, return_inverse=True)
    values_b, col = np.unique(b, return_inverse=True)
    # the occupied cells of the joint table of distinct values, never the whole grid
    cells, cell = np.unique(row * values_b.size + col, return_inverse=True)
    bad = y.astype(np.float64)
    goods, bads = _sum_by(cell, 1 - bad, cells.size), _sum_by(cell, bad, cells.size)
    return _paired(cells // values_b.size, cells % values_b.size, goods, bads, level)


def delong_test_from_counts(
    goods: Any, bads: Any, *, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
) -> DeLongTestResult:
    """DeLong's paired test from the joint count table of two binned scores.

    ``goods[i, j]`` and ``bads[i, j]`` count the loans in bin i of score a and bin j of score
    b — what ``GROUP BY bin_a, bin_b, label`` returns. Rows run from the safest bin of score a
    to the riskiest, columns likewise for score b. Loans in one bin of a score are tied under
    it (½). On the table of distinct score values this is :func:`delong_test` exactly.

    Parameters
    ----------
    goods, bads : 2-d array-like of row counts, same shape
    confidence_level : float, default 0.95

    Returns
    -------
    DeLongTestResult

    Examples
    --------
    Two bins per score; score a puts 3 of 4 bads and 1 of 5 goods in its risky bin, score b
    3 of 4 bads and 2 of 5 goods.

    >>> goods = [[3, 1], [0, 1]]
    >>> bads = [[0, 1], [1, 2]]
    >>> r = delong_test_from_counts(goods, bads)
    >>> round(r.auc_a, 4), round(r.auc_b, 4)
    (0.775, 0.675)
    """
    level = check_fraction(confidence_level, "confidence_level")
    g = _joint_counts(goods, "goods")
    b = _joint_counts(bads, "bads")
    if g.shape != b.shape:
        raise InvalidDataError(f"Expected bads of shape {g.shape} to match goods, got {b.shape}")
    rows, cols = np.indices(g.shape)
    return _paired(rows.ravel(), cols.ravel(), g.ravel(), b.ravel(), level)


def _joint_counts(values: Any, name: str) -> FloatArray:
    arr = np.asarray(values)
    if arr.ndim != 2:
        raise InvalidDataError(f"Expected a 2-d array for {name!r}, got shape {arr.shape}")
    flat = check_scores(arr.ravel(), name=name, what="counts")
    negative = flat < 0
    if negative.any():
        raise InvalidDataError(
            f"Expected non-negative counts in {name!r}, got {flat[negative][:5].tolist()!r}"
        )
    return flat.reshape(arr.shape)


def _sum_by(index: IntArray, weights: FloatArray, k: int) -> FloatArray:
    return np.asarray(np.bincount(index, weights=weights, minlength=k), dtype=np.float64)


def _margin_placements(
    index: IntArray, goods: FloatArray, bads: FloatArray, big_g: float, big_b: float
) -> tuple[FloatArray, FloatArray, float]:
    """The placements of each cell under one score, and that score's AUC, from the cells'
    bin ``index`` (bins ascending in risk)."""
    k = int(index.max()) + 1
    riskiest_first = slice(None, None, -1)
    g = _sum_by(index, goods, k)[riskiest_first]
    b = _sum_by(index, bads, k)[riskiest_first]
    v10, v01 = placements(g, b, big_g, big_b)
    auc = float(np.dot(b, v10) / big_b)
    return v10[riskiest_first][index], v01[riskiest_first][index], auc


def _paired(
    rows: IntArray, cols: IntArray, goods: FloatArray, bads: FloatArray, level: float
) -> DeLongTestResult:
    """DeLong's paired test over the cells (row bin of a, column bin of b) of a joint table."""
    nan = float("nan")
    big_g, big_b = float(goods.sum()), float(bads.sum())
    if big_g <= 0 or big_b <= 0:
        reason = "no bads" if big_b <= 0 else "no goods"
        not_available(f"DeLong's test is not available: the data has {reason}", stacklevel=4)
        return DeLongTestResult(nan, nan, nan, nan, (nan, nan), nan, nan, level)
    v10_a, v01_a, auc_a = _margin_placements(rows, goods, bads, big_g, big_b)
    v10_b, v01_b, auc_b = _margin_placements(cols, goods, bads, big_g, big_b)
    difference = auc_a - auc_b
    std_error = _difference_std_error(
        v10_a - v10_b, v01_a - v01_b, goods, bads, big_g, big_b, difference
    )
    from scipy.special import ndtr, ndtri

    half_width = float(ndtri(0.5 + level / 2)) * std_error
    interval = (nan, nan)
    if not math.isnan(std_error):
        interval = (max(-1.0, difference - half_width), min(1.0, difference + half_width))
    if std_error == 0:
        statistic = not_available(
            "DeLong's test is not available: the difference of the AUCs has no variance "
            "(as when the two scores order the loans alike)",
            stacklevel=4,
        )
    else:
        statistic = difference / std_error
    pvalue = 2 * float(ndtr(-abs(statistic)))
    return DeLongTestResult(statistic, pvalue, difference, std_error, interval, auc_a, auc_b, level)


def _difference_std_error(
    d10: FloatArray,
    d01: FloatArray,
    goods: FloatArray,
    bads: FloatArray,
    big_g: float,
    big_b: float,
    difference: float,
) -> float:
    """√(var(V10_a − V10_b)/n + var(V01_a − V01_b)/m), variances with divisors n − 1, m − 1:
    the same as S_aa + S_bb − 2·S_ab, without its cancellation."""
    if big_b < 2 or big_g < 2:
        return not_available(
            "The DeLong standard error of the AUC difference is not available: it needs at "
            f"least two bads and two goods, got {big_b:g} bad(s) and {big_g:g} good(s)",
            stacklevel=5,
        )
    s10 = float(np.dot(bads, (d10 - difference) ** 2)) / (big_b - 1)
    s01 = float(np.dot(goods, (d01 - difference) ** 2)) / (big_g - 1)
    return math.sqrt(s10 / big_b + s01 / big_g)
