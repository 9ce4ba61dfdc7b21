"""Curves of a ranking: ROC, KS, CAP (gain), precision–recall, with average precision and
the break-even point.

Every curve has one point per distinct score (a tie group is one step), traced from the
riskiest score to the safest; thresholds are in the caller's units, and a row is "predicted
bad" at threshold t when its score is t or riskier (inclusive).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from riskmon.metrics._counts import CountTable
from riskmon.metrics._ranking import Ranked, rank
from riskmon.metrics._validation import FloatArray, not_available

Curve = tuple[FloatArray, FloatArray, FloatArray]


def _start(r: Ranked) -> float:
    """The threshold before the riskiest score: nothing is predicted bad."""
    return float(np.inf) if r.higher_is_riskier else float(-np.inf)


def _cumulative_share(weights: FloatArray, what: str, curve: str) -> FloatArray:
    """Cumulative share riskiest first, starting at 0; NaN (with a warning) when empty."""
    total = float(weights.sum())
    if total <= 0:
        not_available(f"The {curve} is not available: the data has no {what}", stacklevel=5)
        return np.full(weights.size + 1, np.nan)
    shares: FloatArray = np.r_[0.0, np.cumsum(weights)] / total
    return shares


def _roc(r: Ranked) -> Curve:
    fpr = _cumulative_share(r.goods, "goods", "false positive rate of the ROC curve")
    tpr = _cumulative_share(r.bads, "bads", "true positive rate of the ROC curve")
    return fpr, tpr, np.r_[_start(r), r.scores]


def roc_curve_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> Curve:
    """ROC curve of a labeled score table; see :func:`roc_curve`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> fpr, tpr, thresholds = roc_curve_from_counts(t)
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    return _roc(rank(table, higher_is_riskier=higher_is_riskier))


def roc_curve(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> Curve:
    """Receiver operating characteristic: (FPR, TPR, thresholds), riskiest threshold first.

    At threshold t, TPR = share of bads with a score t or riskier, FPR = the same share of
    goods. The first point (0, 0) has threshold +inf (−inf for scorecard points, where lower
    is riskier). Same layout as :func:`sklearn.metrics.roc_curve` with
    ``drop_intermediate=False``.

    References
    ----------
    Fawcett, T. (2006). An introduction to ROC analysis. Pattern Recognition Letters 27(8).

    Examples
    --------
    >>> fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> thresholds.tolist()
    [inf, 0.8, 0.4, 0.1]
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _roc(rank(table, higher_is_riskier=higher_is_riskier))


def _ks_curve(r: Ranked) -> Curve:
    # F(t): share of rows at t or on the safe side, for t from the safest score up
    f_good = _cumulative_share(r.goods[::-1], "goods", "KS curve")[1:]
    f_bad = _cumulative_share(r.bads[::-1], "bads", "KS curve")[1:]
    return r.scores[::-1].copy(), f_good, f_bad


def ks_curve_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> Curve:
    """KS curve of a labeled score table; see :func:`ks_curve`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> thresholds, f_good, f_bad = ks_curve_from_counts(t)
    >>> (f_good - f_bad).tolist()
    [0.5, 0.5, 0.0]
    """
    return _ks_curve(rank(table, higher_is_riskier=higher_is_riskier))


def ks_curve(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> Curve:
    """The two empirical CDFs whose largest gap is KS: (thresholds, F_good, F_bad).

    Thresholds run from the safest distinct score to the riskiest; F(t) is the (weighted)
    share of goods or bads whose score is t or safer. KS = max |F_good − F_bad|.

    Examples
    --------
    >>> thresholds, f_good, f_bad = ks_curve([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> thresholds.tolist(), f_bad.tolist()
    ([0.1, 0.4, 0.8], [0.0, 0.5, 1.0])
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _ks_curve(rank(table, higher_is_riskier=higher_is_riskier))


def _cap(r: Ranked) -> Curve:
    population = _cumulative_share(r.goods + r.bads, "rows", "CAP curve")
    captured = _cumulative_share(r.bads, "bads", "CAP curve")
    return population, captured, np.r_[_start(r), r.scores]


def cap_curve_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> Curve:
    """CAP (gain) curve of a labeled score table; see :func:`cap_curve`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> population, captured, _ = cap_curve_from_counts(t)
    >>> population.tolist(), captured.tolist()
    ([0.0, 0.25, 0.75, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    return _cap(rank(table, higher_is_riskier=higher_is_riskier))


def cap_curve(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> Curve:
    """Cumulative accuracy profile (gain chart): (population share, bad share, thresholds).

    Rows are taken riskiest first; each point is the share of the population with a score t
    or riskier and the share of all bads among them. The accuracy ratio read off this curve
    (area between it and the diagonal over the same area for a perfect model) equals Gini.

    References
    ----------
    Engelmann, B., Hayden, E. & Tasche, D. (2003). Testing rating accuracy. Risk 16(1).

    Examples
    --------
    >>> population, captured, thresholds = cap_curve([0, 1, 1, 0], [1, 2, 3, 3])
    >>> captured.tolist()
    [0.0, 0.5, 1.0, 1.0]
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _cap(rank(table, higher_is_riskier=higher_is_riskier))


def _pr(r: Ranked) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(precision, recall, thresholds, tp) riskiest first, without the end point."""
    tp = np.cumsum(r.bads)
    predicted = tp + np.cumsum(r.goods)
    big_b = r.total_bads
    if big_b <= 0:
        not_available(
            "The precision–recall curve is not available: the data has no bads", stacklevel=5
        )
        recall = np.full(tp.size, np.nan)
    else:
        recall = tp / big_b
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    return precision, recall, r.scores, tp


def precision_recall_curve_from_counts(
    table: CountTable, *, higher_is_riskier: bool = True
) -> Curve:
    """Precision–recall curve of a labeled score table; see :func:`precision_recall_curve`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> precision, recall, thresholds = precision_recall_curve_from_counts(t)
    >>> precision.tolist(), recall.tolist()
    ([0.5, 0.6666666666666666, 1.0, 1.0], [1.0, 1.0, 0.5, 0.0])
    """
    return _pr_curve(rank(table, higher_is_riskier=higher_is_riskier))


def _pr_curve(r: Ranked) -> Curve:
    precision, recall, thresholds, _ = _pr(r)
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thresholds[::-1].copy()


def precision_recall_curve(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> Curve:
    """Precision and recall at every distinct threshold: (precision, recall, thresholds).

    Same layout as :func:`sklearn.metrics.precision_recall_curve`: thresholds from the safest
    score to the riskiest (recall decreasing), then a last point precision 1, recall 0 with
    no threshold. Precision = TP / (TP + FP), recall = TP / B among rows predicted bad
    (score at the threshold or riskier); a precision with nothing predicted bad is 0.

    Examples
    --------
    >>> precision, recall, thresholds = precision_recall_curve([0, 1, 1], [1, 2, 3])
    >>> precision.tolist(), recall.tolist(), thresholds.tolist()
    ([0.6666666666666666, 1.0, 1.0, 1.0], [1.0, 1.0, 0.5, 0.0], [1.0, 2.0, 3.0])
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _pr_curve(rank(table, higher_is_riskier=higher_is_riskier))


def _average_precision(r: Ranked) -> float:
    if r.total_bads <= 0:
        return not_available(
            "Average precision is not available: the data has no bads", stacklevel=4
        )
    precision, recall, _, _ = _pr(r)
    gained = np.diff(np.r_[0.0, recall])
    return max(0.0, float(np.dot(gained, precision)))


def average_precision_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> float:
    """Average precision of a labeled score table; see :func:`average_precision`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> round(average_precision_from_counts(t), 6)
    0.833333
    """
    return _average_precision(rank(table, higher_is_riskier=higher_is_riskier))


def average_precision(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> float:
    """Average precision: AP = Σ_k (R_k − R_{k−1})·P_k over thresholds, riskiest first.

    The step-wise sum without interpolation, exactly as
    :func:`sklearn.metrics.average_precision_score` computes it; a tie group is one step.

    References
    ----------
    Manning, C. D., Raghavan, P. & Schütze, H. (2008). Introduction to Information Retrieval,
    section 8.4. Cambridge University Press.

    Examples
    --------
    >>> average_precision([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.8333333333333333
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _average_precision(rank(table, higher_is_riskier=higher_is_riskier))


def _break_even(r: Ranked) -> float:
    big_b = r.total_bads
    if big_b <= 0:
        return not_available(
            "The break-even point is not available: the data has no bads", stacklevel=4
        )
    # precision = recall exactly when the weight predicted bad equals B; TP at that point is
    # read off the cumulative bads, linearly within a tie group (its expected value when the
    # tie is broken at random)
    predicted = np.r_[0.0, np.cumsum(r.goods + r.bads)]
    tp = np.r_[0.0, np.cumsum(r.bads)]
    return float(np.interp(big_b, predicted, tp)) / big_b


def break_even_point_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> float:
    """Break-even point of a labeled score table; see :func:`break_even_point`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> break_even_point_from_counts(t)
    0.75
    """
    return _break_even(rank(table, higher_is_riskier=higher_is_riskier))


def break_even_point(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> float:
    """The value at which precision equals recall on the precision–recall curve.

    Precision TP/(TP + FP) equals recall TP/B exactly when the weight predicted bad equals B,
    the total weight of bads; the break-even point is TP/B there. When that point falls
    inside a tie group, the group is split in proportion (TP interpolated linearly), which is
    the expected value when ties are broken at random.

    Examples
    --------
    >>> break_even_point([0, 1, 0, 1], [1, 2, 3, 4])
    0.5
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _break_even(rank(table, higher_is_riskier=higher_is_riskier))
