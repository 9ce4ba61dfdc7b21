"""Calibration of one grade's PD: the Jeffreys test and the binomial test (with correlation).

N obligors in a grade at the start of the horizon, D of them defaulted within it, PD the PD
assigned to the grade (its mean PD). Each test gives two one-sided p-values:

- ``pvalue``, against "the PD is not too low": small when more defaults were seen than the PD
  makes plausible, i.e. the PD under-estimates the risk (the direction the ECB reports);
- ``pvalue_over``, against "the PD is not too high": small when fewer defaults were seen than
  the PD makes plausible, i.e. the PD over-estimates the risk.

D and N need not be whole numbers: for weighted (exposure) data, pass Kish's effective counts
N_eff = (Σw)² / Σw² and D_eff = N_eff · Σw·y / Σw. On whole numbers the figures are the usual
ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._discrimination import DEFAULT_CONFIDENCE_LEVEL
from riskmon.metrics._mixed_binomial import critical_count, tail
from riskmon.metrics._validation import (
    check_default_counts,
    check_fraction,
    check_grade_pds,
    not_available,
)

#: the Jeffreys prior Beta(½, ½) adds ½ to defaults and ½ to survivors
JEFFREYS_PRIOR = 0.5
#: default significance level of the binomial test's critical count
DEFAULT_BINOMIAL_ALPHA = 0.01


def _grade(defaults: Any, n: Any, pd: Any, *, closed: bool = False) -> tuple[float, float, float]:
    """One grade's D, N and PD as floats; raise unless each is one number, 0 <= D <= N and, when
    N > 0, PD in (0, 1) ([0, 1] when ``closed``; an empty grade's PD is not read: NaN)."""
    plain = _plain_grade(defaults, n, pd, closed=closed)
    if plain is not None:
        return plain
    for name, value in (("defaults", defaults), ("n", n), ("pd", pd)):
        if np.ndim(value) != 0:
            raise InvalidDataError(
                f"Expected a single number for {name!r}, got shape {np.shape(value)}"
            )
    d, total = check_default_counts(defaults, n)
    return float(d[0]), float(total[0]), float(check_grade_pds(pd, total, closed=closed)[0])


def _plain_grade(
    defaults: Any, n: Any, pd: Any, *, closed: bool
) -> tuple[float, float, float] | None:
    """:func:`_grade` of Python numbers that pass its checks as they are (no count above N by
    rounding), without numpy: a run tests thousands of grades one at a time. None for anything
    else, which :func:`_grade` checks in full (and raises for with its messages)."""
    if not all(type(v) in (float, int) for v in (defaults, n, pd)):
        return None
    try:
        d, total, p = float(defaults), float(n), float(pd)
    except OverflowError:  # an int beyond a double's range
        return None
    if not (math.isfinite(d) and math.isfinite(total) and 0.0 <= d <= total):
        return None
    d = d if d < total else total  # as numpy.minimum(d, total): N where they are equal
    if total == 0.0:
        return d, total, math.nan
    inside = 0.0 <= p <= 1.0 if closed else 0.0 < p < 1.0
    return (d, total, p) if inside else None


# --------------------------------------------------------------------------- Jeffreys
@dataclass(frozen=True)
class JeffreysResult:
    """The Jeffreys test of one grade's PD.

    Attributes
    ----------
    statistic : float
        The observed default rate D / N; ``float(result)`` gives it.
    pvalue : float
        F(PD), F the CDF of Beta(D + ½, N − D + ½): small when the PD is too low.
    pvalue_over : float
        1 − F(PD): small when the PD is too high.
    interval : (float, float)
        Equal-tailed Jeffreys interval of the default rate at ``confidence_level``: the
        (1 − level)/2 and (1 + level)/2 quantiles of that Beta law.
    confidence_level : float
    defaults, n, pd : float
        The grade tested (D taken as N when above it by rounding only).
    """

    statistic: float
    pvalue: float
    pvalue_over: float
    interval: tuple[float, float]
    confidence_level: float
    defaults: float
    n: float
    pd: float

    def __float__(self) -> float:
        return self.statistic


def jeffreys_test(
    defaults: Any,
    n: Any,
    pd: Any,
    *,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> JeffreysResult:
    """Jeffreys test of a PD against the defaults of one grade.

    With Jeffreys' prior Beta(½, ½) on the default rate, its posterior after D defaults among
    N obligors is Beta(D + ½, N − D + ½), and the p-value is that law's CDF at the PD:

        p = F_Beta(D + ½, N − D + ½)(PD)

    H0: the PD is at least the true default rate. A small p says the PD is too low
    (under-estimation); ``pvalue_over`` = 1 − p is the mirror test of over-estimation. The
    test is defined for D = 0 and for non-integer (effective) counts.

    Parameters
    ----------
    defaults : float
        D, defaults in the grade over the horizon, 0 <= D <= N.
    n : float
        N, obligors in the grade at the start of the horizon. N = 0 gives NaN with a
        :class:`~riskmon.errors.DegenerateDataWarning`.
    pd : float
        The grade's PD, in [0, 1]: at 0 the p-value is 0 and at 1 it is 1 (the Beta CDF at the
        ends of its support); not read when N = 0 (it may then be NaN).
    confidence_level : float, default 0.95
        Of the Jeffreys interval of the default rate.

    Returns
    -------
    JeffreysResult

    References
    ----------
    European Central Bank (2019). Instructions for reporting the validation results of
    internal models — IRB Pillar I models for credit risk, section 2.5.3.1.

    Examples
    --------
    The ECB instructions' example: 7 defaults among 200 obligors with a PD of 2.5 %.

    >>> r = jeffreys_test(7, 200, 0.025)
    >>> r.statistic, round(r.pvalue, 4), round(r.pvalue_over, 4)
    (0.035, 0.1779, 0.8221)

    A PD of exactly 1 cannot be too low:

    >>> jeffreys_test(5, 5, 1.0).pvalue
    1.0
    """
    d, total, p = _grade(defaults, n, pd, closed=True)
    level = check_fraction(confidence_level, "confidence_level")
    if total == 0:
        nan = not_available("The Jeffreys test is not available: the grade has no obligors")
        return JeffreysResult(nan, nan, nan, (nan, nan), level, d, total, p)
    from scipy.special import betainc, betaincc, betaincinv

    a, b = d + JEFFREYS_PRIOR, total - d + JEFFREYS_PRIOR
    tail = (1 - level) / 2
    return JeffreysResult(
        statistic=d / total,
        pvalue=float(betainc(a, b, p)),
        pvalue_over=float(betaincc(a, b, p)),
        interval=(float(betaincinv(a, b, tail)), float(betaincinv(a, b, 1 - tail))),
        confidence_level=level,
        defaults=d,
        n=total,
        pd=p,
    )


# --------------------------------------------------------------------------- binomial
@dataclass(frozen=True)
class BinomialTestResult:
    """The binomial test of one grade's PD, with or without default correlation.

    Attributes
    ----------
    statistic : float
        D, the defaults observed; ``float(result)`` gives it.
    pvalue : float
        P(X >= D) under H0: small when the PD is too low.
    pvalue_over : float
        P(X <= D) under H0: small when the PD is too high.
    critical_value : int
        The smallest default count d with P(X >= d) <= ``alpha``; ``ceil(n + 1)`` (a count
        above n) when no possible count is that unlikely.
    expected : float
        N · PD, the defaults expected under H0.
    n, pd, correlation, alpha : float
        The grade and the options used.
    """

    statistic: float
    pvalue: float
    pvalue_over: float
    critical_value: int
    expected: float
    n: float
    pd: float
    correlation: float
    alpha: float

    def __float__(self) -> float:
        return self.statistic


def binomial_test(
    defaults: Any,
    n: Any,
    pd: Any,
    *,
    correlation: float = 0.0,
    alpha: float = DEFAULT_BINOMIAL_ALPHA,
) -> BinomialTestResult:
    """Binomial test of a PD against the defaults of one grade.

    Under H0 the number of defaults X is Binomial(N, PD) and the p-value is P(X >= D); a small
    one says the PD is too low. ``pvalue_over`` = P(X <= D) is the mirror test of
    over-estimation. Independent defaults make this test liberal (too many rejections) when
    defaults are correlated; with an asset correlation ρ > 0 the one-factor Vasicek model
    replaces the binomial law: given the systematic factor z the conditional PD is

        p(z) = Φ((Φ⁻¹(PD) − √ρ·z) / √(1 − ρ))

    and P(X >= D) = ∫ φ(z)·P(Bin(N, p(z)) >= D) dz, integrated numerically: adaptive
    Gauss–Kronrod quadrature (:func:`scipy.integrate.quad`) over z, in pieces broken where the
    conditional probability turns from 0 to 1, to about 1e-10 relative. The critical count
    takes one such integral per step of a bisection over the counts.

    Non-integer counts use the continuous extension of the binomial tail through the
    regularized incomplete beta function, P(X >= x) = I_p(x, N − x + 1) for 0 < x < N + 1
    (1 below, 0 above), and P(X <= x) = 1 − P(X >= x + 1); for whole numbers this is the
    binomial law exactly.

    Parameters
    ----------
    defaults : float
        D, defaults in the grade over the horizon, 0 <= D <= N.
    n : float
        N, obligors in the grade at the start of the horizon. N = 0 gives NaN p-values with a
        :class:`~riskmon.errors.DegenerateDataWarning`.
    pd : float
        The grade's PD, in [0, 1]; not read when N = 0 (it may then be NaN). At 0 no
        obligor defaults and at 1 every one does, whatever the correlation (the conditional
        PD p(z) is then 0 or 1 for every z): X is N·PD for certain, and the p-values are 1 or
        0, as :func:`scipy.stats.binomtest` gives them.
    correlation : float, default 0.0
        Asset correlation ρ in [0, 1); 0 is the plain binomial test.
    alpha : float, default 0.01
        Significance level of ``critical_value``.

    Returns
    -------
    BinomialTestResult

    References
    ----------
    Basel Committee on Banking Supervision (2005). Studies on the validation of internal rating
    systems, Working Paper 14, section 5.
    Tasche, D. (2003). A traffic lights approach to PD validation. arXiv:cond-mat/0305038.

    Examples
    --------
    >>> r = binomial_test(7, 200, 0.025)
    >>> round(r.pvalue, 4), r.critical_value
    (0.2359, 12)

    Correlated defaults make 7 defaults less surprising:

    >>> round(binomial_test(7, 200, 0.025, correlation=0.05).pvalue, 4)
    0.2737

    A PD of 1 with a survivor is too high for certain, and cannot be too low:

    >>> r = binomial_test(4, 5, 1.0)
    >>> r.pvalue, r.pvalue_over
    (1.0, 0.0)
    """
    d, total, p = _grade(defaults, n, pd, closed=True)
    rho = _check_correlation(correlation)
    level = check_fraction(alpha, "alpha")
    critical = critical_count(total, p, rho, level)
    if total == 0:
        nan = not_available("The binomial test is not available: the grade has no obligors")
        return BinomialTestResult(d, nan, nan, critical, 0.0, total, p, rho, level)
    return BinomialTestResult(
        statistic=d,
        pvalue=tail(d, total, p, rho, upper=True),
        pvalue_over=tail(d, total, p, rho, upper=False),
        critical_value=critical,
        expected=total * p,
        n=total,
        pd=p,
        correlation=rho,
        alpha=level,
    )


def _check_correlation(value: float) -> float:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and 0 <= value < 1):
        raise InvalidDataError(f"Expected correlation in [0, 1), got {value!r}")
    return float(value)
