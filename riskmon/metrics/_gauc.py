"""The generalised AUC of LGD, CCF and EAD estimates: Somers' D of the contingency table of
estimated class × realised class, its standard error and the test against the initial gAUC
(ECB, 2019, §2.6.3 and Annex)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import FloatArray, not_available


# --------------------------------------------------------------------------- generalised AUC
@dataclass(frozen=True)
class GeneralisedAUCResult:
    """The generalised AUC of a contingency table of estimated × realised classes.

    Attributes
    ----------
    gauc : float
        (D + 1) / 2; ``float(result)`` gives it.
    somers_d : float
        Somers' D(C|R) = (P − Q) / w_r.
    se : float
        Its standard error s (half Brown & Benedetti's asymptotic standard error of D).
    concordant, discordant : float
        P = Σ a·A and Q = Σ a·D (each pair counted from both of its cells).
    n : float
        F = Σ a, the facilities in the table.
    """

    gauc: float
    somers_d: float
    se: float
    concordant: float
    discordant: float
    n: float

    def __float__(self) -> float:
        return self.gauc


def _check_table(table: Any) -> FloatArray:
    try:
        a = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidDataError("Expected a numeric contingency table in 'table'") from None
    if a.ndim != 2:
        raise InvalidDataError(f"Expected a 2-d contingency table in 'table', got shape {a.shape}")
    if not np.isfinite(a).all() or (a < 0).any():
        raise InvalidDataError("Expected finite non-negative counts in 'table'")
    return a


def _agreeing(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    """A_ij (cells both above-left or both below-right of (i, j)) and D_ij (the others off its
    row and column), from 2-d cumulative sums."""
    padded = np.zeros((a.shape[0] + 1, a.shape[1] + 1))
    padded[1:, 1:] = a.cumsum(0).cumsum(1)
    total = padded[-1, -1]
    rows = padded[1:, -1]  # Σ_{k<=i}, every column
    cols = padded[-1, 1:]  # Σ_{l<=j}, every row
    upper_left = padded[:-1, :-1]  # k < i, l < j
    below_right = total - rows[:, None] - cols[None, :] + padded[1:, 1:]  # k > i, l > j
    # k > i, l < j: Σ_{l<j} every row − Σ_{k<=i, l<j}
    below_left = padded[-1, :-1][None, :] - padded[1:, :-1]
    # k < i, l > j: Σ_{k<i} every column − Σ_{k<i, l<=j}
    upper_right = padded[:-1, -1][:, None] - padded[:-1, 1:]
    return upper_left + below_right, below_left + upper_right


def generalised_auc(table: Any) -> GeneralisedAUCResult:
    """The generalised AUC of an estimated-class × realised-class contingency table (ECB).

    With a_ij the facilities estimated in class i (row) and realised in class j (column),
    A_ij = Σ_{k<i,l<j} a_kl + Σ_{k>i,l>j} a_kl, D_ij = Σ_{k>i,l<j} a_kl + Σ_{k<i,l>j} a_kl,
    P = Σ a·A, Q = Σ a·D, F = Σ a, r_i the row totals and w_r = F² − Σ r_i²:

        D(C|R) = (P − Q) / w_r,    gAUC = (D + 1) / 2,
        s = √(Σ a_ij (w_r·(A_ij − D_ij) − (P − Q)(F − r_i))²) / w_r².

    Somers' D is :func:`scipy.stats.somersd`'s of the table; s is half its asymptotic standard
    error (Brown & Benedetti), the standard error of the gAUC.

    Returns
    -------
    GeneralisedAUCResult
        NaN figures (with a :class:`~riskmon.errors.DegenerateDataWarning`) when every
        facility is in one row (w_r = 0).

    References
    ----------
    European Central Bank (2019). Instructions for reporting the validation results of
    internal models — IRB Pillar I models for credit risk, section 2.6.3 and Annex.
    Brown, M. B. & Benedetti, J. K. (1977). Sampling behavior of tests for correlation in
    two-way contingency tables. JASA 72(358), 309–315.

    Examples
    --------
    >>> r = generalised_auc([[30, 12, 6, 2], [10, 25, 15, 5], [3, 8, 20, 14]])
    >>> r.concordant, r.discordant, round(r.somers_d, 6), round(r.gauc, 6), round(r.se, 6)
    (9704.0, 1978.0, 0.516789, 0.758395, 0.03089)
    """
    a = _check_table(table)
    agree, disagree = _agreeing(a)
    p, q = float((a * agree).sum()), float((a * disagree).sum())
    f = float(a.sum())
    r = a.sum(axis=1)
    w_r = f * f - float((r * r).sum())
    if w_r <= 0:
        nan = not_available(
            "The generalised AUC needs facilities in at least two estimated classes"
        )
        return GeneralisedAUCResult(nan, nan, nan, p, q, f)
    d = (p - q) / w_r
    terms = w_r * (agree - disagree) - (p - q) * (f - r)[:, None]
    se = math.sqrt(float((a * terms * terms).sum())) / (w_r * w_r)
    return GeneralisedAUCResult((d + 1) / 2, d, se, p, q, f)


@dataclass(frozen=True)
class GeneralisedAUCTestResult:
    """The test of a gAUC against the initial one: S = (gAUC_init − gAUC_now) / s,
    p = 1 − Φ(S) (small when the gAUC has fallen)."""

    statistic: float
    pvalue: float
    gauc: float
    se: float
    initial_gauc: float

    def __float__(self) -> float:
        return self.statistic


def generalised_auc_test(table: Any, initial_gauc: float) -> GeneralisedAUCTestResult:
    """Test whether the generalised AUC has fallen since the initial validation (ECB §2.6.3).

        S = (gAUC_init − gAUC_now) / s_now,    p = 1 − Φ(S)

    H0: no deterioration; s_now the standard error of :func:`generalised_auc`.

    Examples
    --------
    >>> r = generalised_auc_test([[30, 12, 6, 2], [10, 25, 15, 5], [3, 8, 20, 14]], 0.70)
    >>> round(r.statistic, 6), round(r.pvalue, 6)
    (-1.890381, 0.970646)
    """
    if not (math.isfinite(initial_gauc) and 0 <= initial_gauc <= 1):
        raise InvalidDataError(f"Expected initial_gauc in [0, 1], got {initial_gauc!r}")
    now = generalised_auc(table)
    if math.isnan(now.se):
        statistic = float("nan")
    elif now.se == 0:
        statistic = not_available("The gAUC test is not available: the gAUC's standard error is 0")
    else:
        statistic = (initial_gauc - now.gauc) / now.se
    from scipy.special import ndtr

    return GeneralisedAUCTestResult(
        statistic, float(ndtr(-statistic)), now.gauc, now.se, float(initial_gauc)
    )
