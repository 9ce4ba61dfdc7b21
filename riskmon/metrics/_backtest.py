"""Back-testing of LGD, CCF and EAD estimates against realised values (ECB, 2019, §2.6–2.9).

A facility whose recovery process closed in the observation period has an estimate E (LGDᴱ,
CCFᴱ or EADᴱ, as of one year before default) and a realised value R; d = R − E. Every test
here is a function of per-cell sums, so a collect pass computes them where the facilities
live: N, Σd, Σd² (the t-test), Σ EAD, Σ EAD·E, Σ EAD·R, Σ EAD·|d| (loss shortfall, mean
absolute deviation) and the count table of estimated class × realised class (the generalised
AUC). The array functions build those sums and call the same code.

References
----------
European Central Bank (2019). Instructions for reporting the validation results of internal
models — IRB Pillar I models for credit risk, sections 2.6.2 (t-test), 2.6.3 and the Annex
(generalised AUC), 2.7 (ELBE), 2.8 (LGD in-default), 2.9 (CCF).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import (
    FloatArray,
    check_same_length,
    check_scores,
    check_weights,
    not_available,
)

Alternative = Literal["greater", "two-sided"]

#: the upper edges of the ECB's 12 segments of an estimate: [0, 5 %), [5 %, 10 %),
#: [10 %, 20 %), …, [90 %, 100 %), ≥ 100 %; a negative value falls in the first
ECB_SEGMENT_EDGES: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: the segments' labels, 1..12 in order
ECB_SEGMENT_LABELS: tuple[str, ...] = (
    "< 5%",
    "5-10%",
    "10-20%",
    "20-30%",
    "30-40%",
    "40-50%",
    "50-60%",
    "60-70%",
    "70-80%",
    "80-90%",
    "90-100%",
    ">= 100%",
)


# --------------------------------------------------------------------------- t-test
@dataclass(frozen=True)
class BacktestTResult:
    """The t-test of the mean difference d = realised − estimated.

    Attributes
    ----------
    statistic : float
        T = √N·d̄ / s; ``float(result)`` gives it.
    pvalue : float
        One-sided 1 − t_{N−1}(T) (``"greater"``: small when the estimate is too low), or
        two-sided 2·(1 − t_{N−1}(|T|)).
    dof : int
        N − 1.
    n : float
        N, the facilities tested.
    mean_difference : float
        d̄.
    variance : float
        s² = Σ(d − d̄)² / (N − 1).
    alternative : str
    """

    statistic: float
    pvalue: float
    dof: int
    n: float
    mean_difference: float
    variance: float
    alternative: str

    def __float__(self) -> float:
        return self.statistic


def backtest_t_test_from_sums(
    n: float, sum_d: float, sum_d2: float, *, alternative: Alternative = "greater"
) -> BacktestTResult:
    """The back-testing t-test from N, Σd and Σd²; see :func:`backtest_t_test`.

    s² = (Σd² − (Σd)²/N) / (N − 1), a negative rounding residue taken as 0.

    Examples
    --------
    >>> r = backtest_t_test_from_sums(10, 0.55, 0.2375)
    >>> round(r.statistic, 6), round(r.pvalue, 6), r.dof
    (1.146137, 0.140649, 9)
    """
    if alternative not in ("greater", "two-sided"):
        raise InvalidDataError(
            f"Expected alternative 'greater' or 'two-sided', got {alternative!r}"
        )
    for name, value in (("n", n), ("sum_d", sum_d), ("sum_d2", sum_d2)):
        if not math.isfinite(value):
            raise InvalidDataError(f"Expected a finite {name}, got {value!r}")
    if n < 0 or sum_d2 < 0:
        raise InvalidDataError(f"Expected n >= 0 and sum_d2 >= 0, got n={n!r}, sum_d2={sum_d2!r}")
    nan = float("nan")
    dof = max(round(n) - 1, 0)
    if n < 2:
        reason = f"The back-testing t-test needs at least 2 facilities, got {n:g}"
        return BacktestTResult(
            not_available(reason), nan, dof, n, sum_d / n if n else nan, nan, alternative
        )
    mean = sum_d / n
    variance = max(sum_d2 - sum_d * mean, 0.0) / (n - 1)
    if variance <= 1e-15 * max(sum_d2 / n, 1e-300):
        reason = "The back-testing t-test is not available: every difference is the same"
        return BacktestTResult(not_available(reason), nan, dof, n, mean, variance, alternative)
    from scipy.special import stdtr  # Student's t CDF, without importing scipy.stats

    statistic = math.sqrt(n) * mean / math.sqrt(variance)
    if alternative == "greater":
        pvalue = float(stdtr(n - 1, -statistic))
    else:
        pvalue = float(2 * stdtr(n - 1, -abs(statistic)))
    return BacktestTResult(statistic, pvalue, dof, n, mean, variance, alternative)


def backtest_t_test(
    realised: Any, estimated: Any, *, alternative: Alternative = "greater"
) -> BacktestTResult:
    """Test whether the estimates (LGD, CCF, EAD) are too low for the realised values.

        d = R − E,    T = √N·d̄ / s,    s² = Σ(d − d̄)² / (N − 1),

    T follows Student's t with N − 1 degrees of freedom under H0 "the estimate is not too
    low" (mean difference 0); the one-sided p = 1 − t_{N−1}(T) is small when the realised
    values exceed the estimates by more than chance explains. ELBE (§2.7) takes the two-sided
    p = 2·(1 − t_{N−1}(|T|)) (``alternative="two-sided"``). It is scipy's one-sample t-test
    of d against 0.

    Parameters
    ----------
    realised, estimated : array-like of float
        One value each per facility whose recovery has closed (no NaN: leave open recoveries
        out before).
    alternative : {"greater", "two-sided"}

    Returns
    -------
    BacktestTResult
        NaN statistic and p-value (with a :class:`~riskmon.errors.DegenerateDataWarning`) for
        fewer than 2 facilities, or when every difference is the same.

    References
    ----------
    European Central Bank (2019). Instructions for reporting the validation results of
    internal models — IRB Pillar I models for credit risk, sections 2.6.2, 2.7, 2.8, 2.9.

    Examples
    --------
    The ECB example (FORMULAS.md): LGDᴱ = .20, .25, …, .65 against the realised LGDs:

    >>> e = [0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65]
    >>> r = [0.10, 0.40, 0.25, 0.55, 0.35, 0.70, 0.45, 0.50, 0.90, 0.60]
    >>> t = backtest_t_test(r, e)
    >>> round(t.mean_difference, 6), round(t.variance, 8), round(t.statistic, 6), t.dof
    (0.055, 0.02302778, 1.146137, 9)
    >>> round(t.pvalue, 6), round(backtest_t_test(r, e, alternative="two-sided").pvalue, 6)
    (0.140649, 0.281297)
    """
    r = check_scores(realised, name="realised", what="realised values")
    e = check_scores(estimated, name="estimated", what="estimates")
    check_same_length(r.shape[0], e.shape[0], "estimated", reference="realised")
    d = r - e
    # centred sums: Σ(d − d̄)² computed directly, then handed on as Σd² = Σ(d − d̄)² + (Σd)²/N
    n = float(d.shape[0])
    sum_d = float(d.sum())
    centred = float(((d - sum_d / n) ** 2).sum()) if n else 0.0
    return backtest_t_test_from_sums(
        n, sum_d, centred + (sum_d * sum_d / n if n else 0.0), alternative=alternative
    )


# --------------------------------------------------------------------------- segments
def ecb_lgd_segment(values: Any) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The ECB segment (1..12) of each estimate: [0, 5 %) → 1, [5 %, 10 %) → 2, [10 %, 20 %)
    → 3, …, [90 %, 100 %) → 11, ≥ 100 % → 12; a negative value is in segment 1.

    Examples
    --------
    >>> ecb_lgd_segment([-0.1, 0.0, 0.05, 0.199, 0.2, 0.95, 1.0, 1.7]).tolist()
    [1, 1, 2, 3, 4, 11, 12, 12]
    """
    v = check_scores(np.atleast_1d(values), name="values", what="estimates")
    return np.searchsorted(np.asarray(ECB_SEGMENT_EDGES), v, side="right").astype(np.int64) + 1


# --------------------------------------------------------------------------- EAD-weighted
def _weighted_inputs(ead: Any, estimated: Any, realised: Any) -> tuple[FloatArray, ...]:
    e = check_scores(estimated, name="estimated", what="estimates")
    r = check_scores(realised, name="realised", what="realised values")
    check_same_length(e.shape[0], r.shape[0], "realised", reference="estimated")
    w = check_weights(ead, e.shape[0], name="ead")
    assert w is not None
    return w, e, r


def loss_shortfall_from_sums(sum_ead_estimate: float, sum_ead_realised: float) -> float:
    """LS = 1 − Σ EAD·E / Σ EAD·R; NaN (with a warning) when Σ EAD·R is 0."""
    if sum_ead_realised == 0:
        return not_available("The loss shortfall is not available: no realised loss")
    return 1.0 - sum_ead_estimate / sum_ead_realised


def loss_shortfall(ead: Any, estimated: Any, realised: Any) -> float:
    """The loss shortfall LS = 1 − Σ EAD·LGDᴱ / Σ EAD·LGDᴿ (Li et al. 2009): the share of the
    realised loss that the estimates did not foresee (negative when they over-estimate).

    References
    ----------
    Li, D., Bhariok, R., Keenan, S. & Santilli, S. (2009). Validation techniques and
    performance metrics for loss given default models. Journal of Risk Model Validation 3(3).

    Examples
    --------
    >>> loss_shortfall([100, 200, 100, 100], [0.2, 0.4, 0.6, 0.8], [0.1, 0.5, 0.4, 0.9])
    0.0
    """
    w, e, r = _weighted_inputs(ead, estimated, realised)
    return loss_shortfall_from_sums(float((w * e).sum()), float((w * r).sum()))


def mean_absolute_deviation_from_sums(sum_ead_abs_d: float, sum_ead: float) -> float:
    """MAD = Σ EAD·|d| / Σ EAD; NaN (with a warning) when Σ EAD is 0."""
    if sum_ead == 0:
        return not_available("The mean absolute deviation is not available: no exposure")
    return sum_ead_abs_d / sum_ead


def mean_absolute_deviation(ead: Any, estimated: Any, realised: Any) -> float:
    """The EAD-weighted mean absolute deviation MAD = Σ EAD·|LGDᴿ − LGDᴱ| / Σ EAD (Li et al.
    2009).

    Examples
    --------
    >>> round(mean_absolute_deviation([100, 200, 100, 100], [.2, .4, .6, .8], [.1, .5, .4, .9]), 6)
    0.12
    """
    w, e, r = _weighted_inputs(ead, estimated, realised)
    return mean_absolute_deviation_from_sums(float((w * np.abs(r - e)).sum()), float(w.sum()))
