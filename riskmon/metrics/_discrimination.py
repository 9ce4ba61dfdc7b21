"""Discrimination: Kolmogorov–Smirnov statistic, AUC with its DeLong error, and Gini.

Each figure has two layers that agree exactly: ``*_from_counts`` works on a labeled score
table (:class:`~riskmon.metrics.CountTable`, one row per distinct score) in O(bins); the
array function validates ``y_true, y_score``, builds that table with one sort, and calls it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.metrics._counts import CountTable
from riskmon.metrics._ks_pvalue import ks_pvalue
from riskmon.metrics._ranking import Ranked, rank
from riskmon.metrics._validation import FloatArray, check_fraction, not_available

#: c(α) of the asymptotic two-sample critical value c(α)·√((n+m)/(n·m)) at α = 5 %
KS_CRITICAL_COEFFICIENT_5PCT = 1.358
#: default confidence level of the DeLong intervals
DEFAULT_CONFIDENCE_LEVEL = 0.95


# --------------------------------------------------------------------------- KS
@dataclass(frozen=True)
class KSResult:
    """The two-sample Kolmogorov–Smirnov statistic of goods against bads.

    Attributes
    ----------
    statistic : float
        KS as a fraction in [0, 1]; ``float(result)`` gives it.
    score : float
        The score (caller's units) at which KS is reached: the largest separation is between
        the rows with a score at or on the safe side of it (``<= score`` when higher is
        riskier, ``>= score`` for scorecard points) and the others.
    p_value : float
        Two-sided p-value as :func:`scipy.stats.ks_2samp` (``method="auto"``) defines it, with
        n = rows of bads and m = rows of goods. Exact for max(n, m) <= ``KS_EXACT_MAX_N``,
        asymptotic beyond. Conservative (too large) when scores are tied.
    p_value_method : {"exact", "asymptotic"}
    critical_value : float
        Asymptotic 5 % critical value 1.358·√((n+m)/(n·m)).
    n_bads, n_goods : int
        Row counts n and m used by the p-value and the critical value (never weights).
    p_value_conservative : bool
        True when some score value is shared by several rows: the null distribution assumes
        continuous scores, so with ties the p-value overstates the probability.
    """

    statistic: float
    score: float
    p_value: float
    p_value_method: str
    critical_value: float
    n_bads: int
    n_goods: int
    p_value_conservative: bool

    def __float__(self) -> float:
        return self.statistic


def ks_statistic_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> KSResult:
    """KS of a labeled score table; see :func:`ks_statistic`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> r = ks_statistic_from_counts(t)
    >>> r.statistic, r.score
    (0.5, 0.1)
    """
    r = rank(table, higher_is_riskier=higher_is_riskier)
    return _ks(r)


def _ks(r: Ranked) -> KSResult:
    nan = float("nan")
    big_b, big_g = r.total_bads, r.total_goods
    if big_b <= 0 or big_g <= 0 or r.n_bads == 0 or r.n_goods == 0:
        reason = "no bads" if big_b <= 0 or r.n_bads == 0 else "no goods"
        not_available(f"KS is not available: the data has {reason}", stacklevel=4)
        return KSResult(nan, nan, nan, "", nan, r.n_bads, r.n_goods, r.has_ties)
    # ascending in risk: F(t) = share of rows at or on the safe side of t
    f_bad = np.cumsum(r.bads[::-1]) / big_b
    f_good = np.cumsum(r.goods[::-1]) / big_g
    gap = np.abs(f_good - f_bad)
    at = int(np.argmax(gap))
    d = float(min(gap[at], 1.0))
    p_value, method = ks_pvalue(r.n_bads, r.n_goods, d)
    n, m = r.n_bads, r.n_goods
    return KSResult(
        statistic=d,
        score=float(r.scores[::-1][at]),
        p_value=p_value,
        p_value_method=method,
        critical_value=KS_CRITICAL_COEFFICIENT_5PCT * math.sqrt((n + m) / (n * m)),
        n_bads=n,
        n_goods=m,
        p_value_conservative=r.has_ties,
    )


def ks_statistic(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> KSResult:
    """Kolmogorov–Smirnov statistic between the score distributions of goods and bads.

    KS = max_t |F_bad(t) − F_good(t)|, with F the (weighted) empirical CDFs and t running over
    the distinct score values only, so a tie group moves both CDFs at once.

    Weights change the CDFs, hence the statistic, but not the sample sizes: the p-value and
    the critical value use n = number of bad rows and m = number of good rows, as a count
    table stores them (an effective sample size would need the sum of squared weights, which
    a count table does not keep).

    Parameters
    ----------
    y_true : array-like of 0/1
        1 = bad (default).
    y_score : array-like of float
    sample_weight : array-like, optional
    higher_is_riskier : bool, default True
        False for scorecard points. KS itself does not depend on it; ``score`` reads the
        same either way, only the side it bounds changes.

    Returns
    -------
    KSResult
        See :class:`KSResult`; ``float(result)`` is the statistic.

    References
    ----------
    Smirnov, N. (1948). Table for estimating the goodness of fit of empirical distributions.
    Annals of Mathematical Statistics 19(2).

    Examples
    --------
    >>> r = ks_statistic([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> float(r), r.score, r.p_value_method, r.p_value_conservative
    (0.5, 0.1, 'exact', True)
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _ks(rank(table, higher_is_riskier=higher_is_riskier))


# --------------------------------------------------------------------------- AUC / Gini
@dataclass(frozen=True)
class AUCResult:
    """Area under the ROC curve with its DeLong standard error and confidence interval.

    ``float(result)`` gives ``auc``. The interval is ``auc ± z·std_error`` clipped to [0, 1].
    """

    auc: float
    std_error: float
    ci_low: float
    ci_high: float
    confidence_level: float

    def __float__(self) -> float:
        return self.auc


@dataclass(frozen=True)
class GiniResult:
    """Gini (accuracy ratio) = 2·AUC − 1 with its standard error and confidence interval.

    The interval is the AUC interval mapped by 2·x − 1. ``float(result)`` gives ``gini``.
    """

    gini: float
    std_error: float
    ci_low: float
    ci_high: float
    confidence_level: float

    def __float__(self) -> float:
        return self.gini


def _auc(r: Ranked, confidence_level: float) -> AUCResult:
    nan = float("nan")
    level = check_fraction(confidence_level, "confidence_level")
    big_b, big_g = r.total_bads, r.total_goods
    if big_b <= 0 or big_g <= 0:
        reason = "no bads" if big_b <= 0 else "no goods"
        not_available(f"AUC is not available: the data has {reason}", stacklevel=4)
        return AUCResult(nan, nan, nan, nan, level)
    v10, v01 = placements(r.goods, r.bads, big_g, big_b)
    # within [0, 1]: weighted sums may round a perfect ranking to 1 + 2.2e-16, which the AUC
    # test would then refuse as an initial AUC
    auc = min(1.0, max(0.0, float(np.dot(r.bads, v10) / big_b)))
    std_error = _delong_std_error(r, v10, v01, auc)
    if math.isnan(std_error):
        return AUCResult(auc, nan, nan, nan, level)
    from scipy.special import ndtri  # the normal quantile, as scipy.stats.norm.ppf computes it

    z = float(ndtri(0.5 + level / 2))
    low, high = max(0.0, auc - z * std_error), min(1.0, auc + z * std_error)
    return AUCResult(auc, std_error, low, high, level)


def placements(
    goods: FloatArray, bads: FloatArray, total_goods: float, total_bads: float
) -> tuple[FloatArray, FloatArray]:
    """DeLong's placements of tie groups ordered from the riskiest to the safest.

    V10 of a bad: the share of goods ranked safer (+½ tied); V01 of a good: the share of bads
    ranked riskier (+½ tied). Constant within a tie group, so one value per group.
    """
    goods_safer = np.cumsum(goods[::-1])[::-1] - goods
    bads_riskier = np.cumsum(bads) - bads
    return (goods_safer + 0.5 * goods) / total_goods, (bads_riskier + 0.5 * bads) / total_bads


def _delong_std_error(r: Ranked, v10: FloatArray, v01: FloatArray, auc: float) -> float:
    """√(S10/n + S01/m), S the (weighted) variances of the placements with n−1, m−1."""
    n, m = r.n_bads, r.n_goods
    if n < 2 or m < 2:
        return not_available(
            "The DeLong standard error of AUC is not available: it needs at least two bads "
            f"and two goods, got {n} bad(s) and {m} good(s)",
            stacklevel=5,
        )
    s10 = float(np.dot(r.bads, (v10 - auc) ** 2)) / r.total_bads * n / (n - 1)
    s01 = float(np.dot(r.goods, (v01 - auc) ** 2)) / r.total_goods * m / (m - 1)
    return math.sqrt(s10 / n + s01 / m)


def roc_auc_from_counts(
    table: CountTable,
    *,
    higher_is_riskier: bool = True,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> AUCResult:
    """AUC of a labeled score table; see :func:`roc_auc`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> roc_auc_from_counts(t).auc
    0.875
    """
    r = rank(table, higher_is_riskier=higher_is_riskier)
    return _auc(r, confidence_level)


def roc_auc(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> AUCResult:
    """Area under the ROC curve, with DeLong standard error and confidence interval.

    AUC = P(score_bad riskier than score_good) + ½·P(tie), the Mann–Whitney U / (B·G).
    From the score table sorted by risk: AUC = Σ_i b_i·(G_safer(i) + ½·g_i) / (B·G).

    DeLong variance: with placements V10(bad) = share of goods safer than it (+½ tied) and
    V01(good) = share of bads riskier than it (+½ tied), s² = S10/n + S01/m, S the sample
    variances (divisor n−1, m−1). Under weights the placements and variances are weighted
    and n, m are the row counts of bads and goods. CI: AUC ± z·s clipped to [0, 1].

    Parameters
    ----------
    y_true : array-like of 0/1
    y_score : array-like of float
    sample_weight : array-like, optional
    higher_is_riskier : bool, default True
        False for scorecard points; flipping it turns AUC into 1 − AUC.
    confidence_level : float, default 0.95

    Returns
    -------
    AUCResult
        ``float(result)`` is the AUC.

    References
    ----------
    DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Comparing the areas under two
    or more correlated receiver operating characteristic curves: a nonparametric approach.
    Biometrics 44(3), 837–845.

    Examples
    --------
    >>> r = roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> r.auc, round(r.std_error, 6)
    (0.875, 0.176777)
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _auc(rank(table, higher_is_riskier=higher_is_riskier), confidence_level)


def _gini(a: AUCResult) -> GiniResult:
    return GiniResult(
        gini=2 * a.auc - 1,
        std_error=2 * a.std_error,
        ci_low=2 * a.ci_low - 1,
        ci_high=2 * a.ci_high - 1,
        confidence_level=a.confidence_level,
    )


def gini_from_counts(
    table: CountTable,
    *,
    higher_is_riskier: bool = True,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> GiniResult:
    """Gini of a labeled score table; see :func:`gini`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> gini_from_counts(t).gini
    0.75
    """
    r = rank(table, higher_is_riskier=higher_is_riskier)
    return _gini(_auc(r, confidence_level))


def gini(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> GiniResult:
    """Gini coefficient (accuracy ratio) = 2·AUC − 1, with its DeLong interval.

    The standard error is twice the AUC's and the interval is the AUC interval mapped by
    2·x − 1 (so it stays within [−1, 1]).

    References
    ----------
    Engelmann, B., Hayden, E. & Tasche, D. (2003). Testing rating accuracy. Risk 16(1).

    Examples
    --------
    >>> g = gini([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> float(g), round(g.std_error, 6)
    (0.75, 0.353553)
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _gini(_auc(rank(table, higher_is_riskier=higher_is_riskier), confidence_level))
