"""Expected performance of loans whose outcome has not matured, from their PDs alone.

Under H0 "the PDs are calibrated" each loan defaults independently with probability p_i, so
the number of defaults D is Poisson-binomial: E[D] = Σp, Var[D] = Σp(1 − p). The AUC, KS and
Gini the model should show once the outcome matures follow from the same PDs: a pair of loans
(i, j), i ≠ j, is a (bad, good) pair with probability p_i(1 − p_j), so

    E[AUC] = Σ_{i≠j} p_i(1 − p_j)·([s_i riskier than s_j] + ½[tied]) / (ΣpΣ(1 − p) − Σp(1 − p))

(the denominator is the expected number of (bad, good) pairs). Loans of one bin are tied; from
bins k with n_k loans, D_k = Σp, G_k = n_k − D_k and S_k = Σp(1 − p) = Σp − Σp²:

    E[AUC] = (Σ_{k riskier than l} D_k·G_l + ½·Σ_k (D_k·G_k − S_k)) / (ΣD·ΣG − ΣS),

exact for pairs across bins and within them. NannyML's CBPE also counts a loan paired with
itself (i = j), which pulls its estimate toward ½ in small samples. E[KS] is the KS of the
expected counts, max_t |F_D(t) − F_G(t)|, and E[Gini] = 2·E[AUC] − 1.

The interval of D: exact quantiles of the Poisson-binomial distribution (each bin's loans
Binomial(n_k, mean PD), the bins' distributions convolved: exact for loan-level PDs, which are
grouped by value, and for bins of equal PDs) while N <= :data:`EXACT_MAX_LOANS`; the normal
approximation E[D] ± z·√Var[D] beyond, where the convolution grows as N² and the normal is
accurate (Lyapunov's CLT, Var[D] large). Reference: FORMULAS.md, "Expected performance".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import FloatArray, check_probabilities, not_available

#: the most loans whose defaults' interval is computed from the exact Poisson-binomial
#: distribution; beyond, the normal approximation
EXACT_MAX_LOANS = 2000
#: default confidence of the interval of the expected defaults
DEFAULT_INTERVAL_CONFIDENCE = 0.95


@dataclass(frozen=True)
class ExpectedPerformance:
    """What calibrated PDs imply for loans whose outcome is not yet known.

    Attributes
    ----------
    n : float
        Loans.
    defaults, defaults_variance : float
        E[D] = Σp and Var[D] = Σp(1 − p).
    default_rate : float
        E[D] / n.
    auc, ks, gini : float
        Expected AUC (pairs i ≠ j, ties ½), KS of the expected counts, 2·AUC − 1; NaN (with a
        :class:`~riskmon.errors.DegenerateDataWarning`) when no (bad, good) pair is expected.
    interval : tuple of float
        The central interval of D at ``confidence``.
    interval_method : {"exact", "normal"}
    confidence : float
    """

    n: float
    defaults: float
    defaults_variance: float
    default_rate: float
    auc: float
    ks: float
    gini: float
    interval: tuple[float, float]
    interval_method: Literal["exact", "normal"]
    confidence: float

    @property
    def defaults_sd(self) -> float:
        """√Var[D]."""
        return math.sqrt(self.defaults_variance)


def expected_performance(
    pd: Any, *, confidence: float = DEFAULT_INTERVAL_CONFIDENCE
) -> ExpectedPerformance:
    """Expected defaults, default rate, AUC, KS and Gini of loans with PDs ``pd``.

    A loan is riskier than another when its PD is higher; loans of equal PD are tied. See the
    module's docstring for the formulas.

    Examples
    --------
    >>> r = expected_performance([0.02, 0.05, 0.08, 0.10, 0.20, 0.40])
    >>> round(r.auc, 6), round(r.defaults, 2), r.interval_method
    (0.81627, 0.85, 'exact')
    """
    p = check_probabilities(pd, name="pd", closed=True)
    values, counts = np.unique(p, return_counts=True)
    n = counts.astype(np.float64)
    return _expected(n, values * n, values**2 * n, values, confidence)


def expected_performance_from_sums(
    n: Any, pd_sum: Any, pd_sq_sum: Any, *, confidence: float = DEFAULT_INTERVAL_CONFIDENCE
) -> ExpectedPerformance:
    """Expected performance from the loans and PD sums of bins ordered from the lowest risk to
    the highest, the loans of one bin tied: ``n`` loans, ``pd_sum`` Σp and ``pd_sq_sum`` Σp²
    per bin. The interval's exact distribution takes each bin's loans at its mean PD.

    Examples
    --------
    >>> r = expected_performance_from_sums([500, 300, 200], [5, 9, 20], [0.05, 0.27, 2.0])
    >>> round(r.default_rate, 6), round(r.defaults_variance, 6)
    (0.034, 31.68)
    >>> round(r.auc, 6), round(r.ks, 6), r.interval_method
    (0.746858, 0.4019, 'exact')
    """
    counts = np.atleast_1d(np.asarray(n, dtype=np.float64))
    sums = np.atleast_1d(np.asarray(pd_sum, dtype=np.float64))
    squares = np.atleast_1d(np.asarray(pd_sq_sum, dtype=np.float64))
    if not counts.shape == sums.shape == squares.shape or counts.ndim != 1:
        raise InvalidDataError(
            f"Expected n, pd_sum and pd_sq_sum of one length, got shapes {counts.shape}, "
            f"{sums.shape} and {squares.shape}"
        )
    finite = np.isfinite(counts) & np.isfinite(sums) & np.isfinite(squares)
    # Σp ≤ n and Σp² ≤ Σp for PDs in [0, 1] (rounding aside)
    slack = 1e-9 * np.maximum(counts, 1.0)
    valid = finite & (counts >= 0) & (sums >= -slack) & (sums <= counts + slack)
    valid &= (squares >= -slack) & (squares <= sums + slack)
    if not valid.all():
        bad = int(np.flatnonzero(~valid)[0])
        raise InvalidDataError(
            f"Expected 0 <= pd_sq_sum <= pd_sum <= n in every bin, got n={counts[bad]!r}, "
            f"pd_sum={sums[bad]!r}, pd_sq_sum={squares[bad]!r} in bin {bad}"
        )
    held = counts > 0
    counts, sums, squares = counts[held], sums[held], squares[held]
    means = np.clip(sums / np.where(counts > 0, counts, 1.0), 0.0, 1.0)
    return _expected(counts, sums, np.minimum(squares, sums), means, confidence)


def _expected(
    n: FloatArray, d: FloatArray, p2: FloatArray, means: FloatArray, confidence: float
) -> ExpectedPerformance:
    if not 0 < confidence < 1:
        raise InvalidDataError(f"Expected confidence in (0, 1), got {confidence!r}")
    total = float(n.sum())
    if total <= 0:
        raise InvalidDataError("Expected at least one loan, got none")
    g = n - d
    s = d - p2  # Σp(1 − p) per bin
    defaults, variance = float(d.sum()), max(float(s.sum()), 0.0)
    pairs = defaults * float(g.sum()) - float(s.sum())
    if pairs <= 0:
        reason = "no (default, survivor) pair is expected: every PD is 0, or every PD is 1"
        auc = ks = not_available(reason)
    else:
        goods_safer = np.concatenate(([0.0], np.cumsum(g)[:-1]))
        auc = float((d * goods_safer).sum() + 0.5 * (d * g - s).sum()) / pairs
        ks = float(np.max(np.abs(np.cumsum(d) / defaults - np.cumsum(g) / float(g.sum()))))
    interval, method = defaults_interval(n, means, confidence=confidence, variance=variance)
    return ExpectedPerformance(
        n=total,
        defaults=defaults,
        defaults_variance=variance,
        default_rate=defaults / total,
        auc=auc,
        ks=ks,
        gini=2 * auc - 1,
        interval=interval,
        interval_method=method,
        confidence=confidence,
    )


def poisson_binomial_pmf(n: Any, pd: Any) -> FloatArray:
    """P(D = d), d = 0..Σn, for ``n[k]`` loans of PD ``pd[k]`` each: the binomial pmfs of the
    groups convolved (exact; O(N²)).

    Examples
    --------
    >>> poisson_binomial_pmf([1, 1], [0.5, 0.2]).round(3).tolist()
    [0.4, 0.5, 0.1]
    """
    binomial = _binomial_pmf()
    pmf = np.ones(1)
    for count, p in zip(np.asarray(n, dtype=np.int64), np.asarray(pd, np.float64), strict=True):
        if count > 0:
            pmf = np.convolve(pmf, binomial(np.arange(count + 1), count, p))
    return np.asarray(pmf, dtype=np.float64)


def _binomial_pmf() -> Any:
    """The binomial pmf ``(k, n, p)`` as ``scipy.stats.binom.pmf`` evaluates it: its ufunc
    itself where this SciPy has it (scipy.special's ``_binom_pmf``, which ``binom.pmf`` calls
    after checking its arguments: 5 µs a call against 40, and no import of scipy.stats, which
    costs a second), else ``binom.pmf``. The arguments here are valid by construction."""
    try:
        from scipy.special._ufuncs import _binom_pmf

        return _binom_pmf
    except ImportError:
        from scipy.stats import binom

        return binom.pmf


def defaults_interval(
    n: Any,
    pd: Any,
    *,
    confidence: float = DEFAULT_INTERVAL_CONFIDENCE,
    variance: float | None = None,
) -> tuple[tuple[float, float], Literal["exact", "normal"]]:
    """The central ``confidence`` interval of the defaults among ``n[k]`` loans of PD ``pd[k]``,
    and how it was found: exact Poisson-binomial quantiles while Σn <= :data:`EXACT_MAX_LOANS`
    (and the counts are whole), else E ± z·sd, clipped to [0, Σn]. ``variance`` overrides
    Σn·p(1 − p) for the normal approximation (a bin's PDs spread about their mean lower it).

    Examples
    --------
    >>> defaults_interval([10], [0.5])
    ((2.0, 8.0), 'exact')
    """
    counts = np.asarray(n, dtype=np.float64)
    p = np.asarray(pd, dtype=np.float64)
    total = float(counts.sum())
    alpha = 1 - confidence
    whole = bool(np.all(counts == np.round(counts)))
    if total <= EXACT_MAX_LOANS and whole:
        cdf = np.cumsum(poisson_binomial_pmf(counts, p))
        # the smallest d with P(D <= d) >= α/2, and with P(D <= d) >= 1 − α/2
        tolerance = 1e-12
        low = int(np.searchsorted(cdf, alpha / 2 - tolerance))
        high = int(np.searchsorted(cdf, 1 - alpha / 2 - tolerance))
        return (float(low), float(min(high, total))), "exact"
    mean = float((counts * p).sum())
    var = float((counts * p * (1 - p)).sum()) if variance is None else variance
    from scipy.special import ndtri

    half = float(ndtri(1 - alpha / 2)) * math.sqrt(var)
    return (max(0.0, mean - half), min(total, mean + half)), "normal"
