"""Figures of a rating system: how obligors spread over the grades and how they migrate.

Grades are 1..K from best to worst, at array positions 0..K−1; counts may be summed weights.
The ECB's Herfindahl index and its test measure the concentration over the grades; the
migration matrix (rows the grade at the start of the horizon, columns the grade at its end),
its matrix weighted bandwidth and the ECB's stability test measure how obligors migrate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import (
    FloatArray,
    IntArray,
    _quote,
    check_same_length,
    check_scores,
    check_weights,
    not_available,
)

#: the fewest grades a rating scale needs for these figures (ln K and K − 1 divide)
MIN_GRADES = 2
#: the highest grade accepted: a higher one is an identifier or a score taken for a grade, and
#: its K×K matrix would not fit in memory
MAX_GRADES = 1_000
#: a CV at or below this is 0 up to rounding: the grades hold equal shares
CV_ROUNDING = 1e-12
#: the stability test compares a cell with its neighbour nearer the diagonal, itself off the
#: diagonal: only cells this many grades or more off it are tested, so K must exceed it
_STABILITY_OFFSET = 2


def _check_counts(
    counts: Any, name: str, *, matrix: bool = False, least: int = MIN_GRADES
) -> FloatArray:
    """Counts per grade (1-d) or per migration (K×K, when ``matrix``) as float64; raise unless
    finite and non-negative over at least ``least`` grades."""
    arr = np.asarray(counts)
    if matrix and (arr.ndim != 2 or arr.shape[0] != arr.shape[1]):
        raise InvalidDataError(f"Expected a square K×K matrix for {name!r}, got shape {arr.shape}")
    if not matrix and arr.ndim != 1:
        raise InvalidDataError(f"Expected a 1-d array for {name!r}, got shape {arr.shape}")
    if arr.shape[0] < least:
        raise InvalidDataError(f"Expected at least {least} grades in {name!r}, got {arr.shape[0]}")
    flat = check_scores(arr.reshape(-1), name=name, what="counts")
    negative = flat < 0
    if negative.any():
        raise InvalidDataError(
            f"Expected non-negative counts in {name!r}, got {_quote(flat[negative])}"
        )
    return flat.reshape(arr.shape)


# --------------------------------------------------------------------------- concentration
def _cv_and_hi(counts: FloatArray) -> tuple[float, float]:
    """CV and HI of counts with a positive total; HI = 1 + ln((CV² + 1)/K) / ln K is computed
    as ln(CV² + 1) / ln K, the same number, so that equal shares give exactly 0."""
    k = counts.size
    cv = math.sqrt(k * float(np.sum((counts / counts.sum() - 1 / k) ** 2)))
    cv = 0.0 if cv <= CV_ROUNDING else cv
    return cv, math.log1p(cv * cv) / math.log(k)


def herfindahl_index(counts: Any) -> float:
    """The ECB's Herfindahl index of the concentration of obligors over the grades.

    With R_i the share of grade i among K grades, HI is 0 when every grade holds the same
    share and 1 when one grade holds everything:

        CV = √(K · Σ_i (R_i − 1/K)²),    HI = 1 + ln((CV² + 1)/K) / ln K

    Parameters
    ----------
    counts : array-like of float
        Obligors (or summed weights) per grade, K >= 2 grades, each >= 0. No obligors at all
        gives NaN with a :class:`~riskmon.errors.DegenerateDataWarning`.

    Returns
    -------
    float

    References
    ----------
    ECB (2019). Instructions for reporting the validation results of internal models, §2.5.5.3.

    Examples
    --------
    >>> herfindahl_index([25, 25, 25, 25]), round(herfindahl_index([0, 40, 0, 0]), 12)
    (0.0, 1.0)
    >>> round(herfindahl_index([50, 30, 20]), 4)
    0.1193
    """
    n = _check_counts(counts, "counts")
    if n.sum() == 0:
        return not_available("The Herfindahl index is not available: 'counts' holds no obligors")
    return _cv_and_hi(n)[1]


@dataclass(frozen=True)
class HerfindahlTestResult:
    """The test of the concentration over the grades against the initial one.

    Attributes
    ----------
    statistic, pvalue : float
        z (``float(result)`` gives it) and 1 − Φ(z), small when the obligors are significantly
        more concentrated than initially; NaN when the test is not available.
    cv, cv_initial, hi, hi_initial : float
        CV and Herfindahl index of the current and of the initial distribution.
    """

    statistic: float
    pvalue: float
    cv: float
    cv_initial: float
    hi: float
    hi_initial: float

    def __float__(self) -> float:
        return self.statistic


def herfindahl_test(counts: Any, initial_counts: Any) -> HerfindahlTestResult:
    """Test whether the obligors are more concentrated over the grades than initially (ECB).

    With CV the coefficient of variation of :func:`herfindahl_index` over K grades:

        z = √(K − 1) · (CV_now − CV_init) / √(CV_now² · (0.5 + CV_now²)),    p = 1 − Φ(z)

    H0: the current distribution is not more concentrated than the initial one. A small p says
    it is; a p near 1 says it is markedly less concentrated.

    Parameters
    ----------
    counts : array-like of float
        Obligors (or summed weights) per grade now, K >= 2 grades, each >= 0.
    initial_counts : array-like of float
        The same at the initial validation (development), over the same K grades.

    Returns
    -------
    HerfindahlTestResult
        NaN statistic and p-value, with a :class:`~riskmon.errors.DegenerateDataWarning`, when
        a distribution holds no obligors or the current one has CV = 0 (equal shares).

    References
    ----------
    ECB (2019). Instructions for reporting the validation results of internal models, §2.5.5.3.

    Examples
    --------
    >>> r = herfindahl_test([50, 30, 20], [40, 35, 25])
    >>> round(r.cv, 4), round(r.cv_initial, 4), round(r.statistic, 4), round(r.pvalue, 4)
    (0.3742, 0.1871, 0.8839, 0.1884)
    """
    now = _check_counts(counts, "counts")
    initial = _check_counts(initial_counts, "initial_counts")
    check_same_length(now.size, initial.size, "initial_counts", reference="counts")
    empty = [name for name, n in (("counts", now), ("initial_counts", initial)) if n.sum() == 0]
    if empty:
        where = " and ".join(map(repr, empty))
        nan = not_available(f"The Herfindahl test is not available: no obligors in {where}")
        return HerfindahlTestResult(nan, nan, nan, nan, nan, nan)
    (cv, hi), (cv_initial, hi_initial) = _cv_and_hi(now), _cv_and_hi(initial)
    if cv == 0:
        reason = "the current CV is 0 (equal shares in every grade), and z divides by it"
        nan = not_available(f"The Herfindahl test is not available: {reason}")
        return HerfindahlTestResult(nan, nan, cv, cv_initial, hi, hi_initial)
    statistic = math.sqrt(now.size - 1) * (cv - cv_initial) / math.sqrt(cv * cv * (0.5 + cv * cv))
    from scipy.special import ndtr

    return HerfindahlTestResult(statistic, float(ndtr(-statistic)), cv, cv_initial, hi, hi_initial)


# --------------------------------------------------------------------------- migrations
def _check_grades(values: Any, name: str, highest: int, bound: str) -> IntArray:
    """Grades as int64; raise unless each is a whole number from 1 to ``highest``."""
    import pandas as pd

    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InvalidDataError(f"Expected a 1-d array for {name!r}, got shape {arr.shape}")
    if arr.dtype.kind not in "iufO":
        raise InvalidDataError(f"Expected integer grades in {name!r}, got dtype {arr.dtype}")
    if arr.dtype.kind in "fO":
        missing = pd.isna(arr)
        if missing.any():
            raise InvalidDataError(
                f"Expected a grade in every row of {name!r}, got {int(missing.sum())} missing "
                "value(s): NaN and None are not grades"
            )
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise InvalidDataError(
                f"Expected integer grades in {name!r}, got non-numeric values {_quote(arr[:50])}"
            ) from None
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise InvalidDataError(f"Expected integer grades in {name!r}, got {_quote(arr[bad])}")
    outside = (arr < 1) | (arr > highest)
    if outside.any():
        raise InvalidDataError(
            f"Expected grades from 1 (the best) to {bound} in {name!r}, got {_quote(arr[outside])}"
        )
    return arr.astype(np.int64)


def migration_matrix(
    grade_from: Any, grade_to: Any, *, sample_weight: Any = None, n_grades: int | None = None
) -> FloatArray:
    """The migration matrix: obligors by grade at the start and at the end of the horizon.

    n_ij, the obligors (or summed weights) in grade i at the start and grade j at the end
    (i, j = 1..K), sits at position [i − 1, j − 1]. Rows with weight 0 are dropped.

    Parameters
    ----------
    grade_from, grade_to : array-like of int
        Each obligor's grade at the start and at the end, whole numbers >= 1 (1 the best).
        NaN and None are not grades: a row without both grades has no migration to count.
    sample_weight : array-like of float, optional
        Non-negative, finite weights; the cells then hold summed weights.
    n_grades : int, optional
        K; by default the highest grade in the rows kept (needed when no row is kept).

    Returns
    -------
    numpy.ndarray of float, shape (K, K)

    Examples
    --------
    >>> migration_matrix([1, 1, 2, 3, 3], [1, 2, 2, 2, 3]).tolist()
    [[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]]
    >>> migration_matrix([1, 2], [2, 2], sample_weight=[0.5, 2.0], n_grades=2).tolist()
    [[0.0, 0.5], [0.0, 2.0]]
    """
    whole = isinstance(n_grades, (int, np.integer)) and not isinstance(n_grades, bool)
    if n_grades is not None and not (whole and 1 <= n_grades <= MAX_GRADES):
        raise InvalidDataError(f"Expected n_grades from 1 to {MAX_GRADES}, got {n_grades!r}")
    highest, bound = (MAX_GRADES, "") if n_grades is None else (int(n_grades), "n_grades=")
    start = _check_grades(grade_from, "grade_from", highest, f"{bound}{highest}")
    end = _check_grades(grade_to, "grade_to", highest, f"{bound}{highest}")
    check_same_length(start.size, end.size, "grade_to", reference="grade_from")
    weights = check_weights(sample_weight, start.size)
    if weights is not None:
        kept = weights > 0
        start, end, weights = start[kept], end[kept], weights[kept]
    if n_grades is None and start.size == 0:
        raise InvalidDataError("Expected n_grades when no row has a positive weight, got None")
    k = int(max(start.max(), end.max())) if n_grades is None else int(n_grades)
    cells = np.bincount((start - 1) * k + (end - 1), weights=weights, minlength=k * k)
    return cells.astype(np.float64).reshape(k, k)


def _bandwidth(side: FloatArray, distance: FloatArray, reach: FloatArray) -> float:
    """Σ |i − j|·n_ij over one side of the diagonal / Σ_i reach_i·(row i's sum on that side)."""
    bound = float(reach @ side.sum(axis=1))
    return float(np.sum(distance * side)) / bound if bound > 0 else 0.0


def matrix_weighted_bandwidth(counts: Any) -> tuple[float, float]:
    """The upper and lower matrix weighted bandwidth (MWB) of a migration matrix (ECB).

    With n_ij the obligors migrating from grade i to grade j (i, j = 1..K):

        MWB_up  = Σ_{i<K} Σ_{j>i} |i − j|·n_ij / M_up,   M_up  = Σ_{i<K} r_i · Σ_{j>i} n_ij
        MWB_low = Σ_{i>1} Σ_{j<i} |i − j|·n_ij / M_low,  M_low = Σ_{i>1} r_i · Σ_{j<i} n_ij

    with r_i = max(|i − K|, |i − 1|). Upper counts downgrades, lower upgrades; each lies in
    [0, 1], larger when obligors move farther. A side without migrations (as in a diagonal
    matrix) has bandwidth 0: it measures how far obligors moved that way, and none moved.

    Parameters
    ----------
    counts : array-like of float, shape (K, K)
        A migration matrix (:func:`migration_matrix`), K >= 2, counts >= 0. No obligors at all
        gives NaN for both with a :class:`~riskmon.errors.DegenerateDataWarning`.

    Returns
    -------
    (float, float)
        The upper and the lower MWB.

    References
    ----------
    ECB (2019). Instructions for reporting the validation results of internal models, §2.5.5.1.

    Examples
    --------
    >>> upper, lower = matrix_weighted_bandwidth([[10, 3, 1], [2, 20, 4], [0, 5, 30]])
    >>> upper, round(lower, 6)
    (0.75, 0.583333)
    >>> matrix_weighted_bandwidth(np.eye(4))
    (0.0, 0.0)
    """
    n = _check_counts(counts, "counts", matrix=True)
    if n.sum() == 0:
        nan = not_available(
            "The matrix weighted bandwidth is not available: 'counts' holds no obligors"
        )
        return nan, nan
    k = n.shape[0]
    grades = np.arange(1.0, k + 1)
    distance = np.abs(grades[:, None] - grades[None, :])
    reach = np.maximum(np.abs(grades - k), np.abs(grades - 1))
    return _bandwidth(np.triu(n, 1), distance, reach), _bandwidth(np.tril(n, -1), distance, reach)


@dataclass(frozen=True, eq=False)
class MigrationStabilityResult:
    """The stability test of a migration matrix, cell by cell (read-only arrays).

    Attributes
    ----------
    statistic, pvalue : numpy.ndarray of float, shape (K, K)
        z and 1 − Φ(z) of each cell two or more grades off the diagonal; NaN elsewhere and
        where the test is not defined.
    n_from : numpy.ndarray of float, shape (K,)
        N_i, the obligors starting in each grade (the row totals).
    """

    statistic: FloatArray
    pvalue: FloatArray
    n_from: FloatArray


def migration_stability_test(counts: Any) -> MigrationStabilityResult:
    """Test, cell by cell, that migration frequencies fall away from the diagonal (ECB).

    With p_ij = n_ij / N_i the share of grade i's N_i obligors that ended in grade j, a cell
    is compared with its neighbour one grade nearer the diagonal: for j > i + 1 (above)

        z_ij = (p_{i,j−1} − p_ij) / √((p_ij(1 − p_ij) + p_{i,j−1}(1 − p_{i,j−1})
                                       + 2·p_ij·p_{i,j−1}) / N_i)

    and for j < i − 1 (below) the same with p_{i,j+1} in place of p_{i,j−1}; p = 1 − Φ(z).
    H0: the frequencies do not fall away from the diagonal (the cell holds at least its
    neighbour's share). A small p rejects it: the cell holds significantly less than its
    neighbour, as in a stable rating system. A p near 1 says it holds more, which a stable
    system should not show; about 0.5, the two shares are alike.

    Cells within one grade of the diagonal are not tested. A tested cell is undefined (NaN)
    when its start grade holds no obligors or its variance is 0 (both shares 0, or one of them
    the whole row); then one :class:`~riskmon.errors.DegenerateDataWarning` says how many.

    Parameters
    ----------
    counts : array-like of float, shape (K, K)
        A migration matrix (:func:`migration_matrix`), K >= 3, counts >= 0.

    Returns
    -------
    MigrationStabilityResult

    References
    ----------
    ECB (2019). Instructions for reporting the validation results of internal models, §2.5.5.2.

    Examples
    --------
    >>> r = migration_stability_test([[60, 25, 10, 5], [8, 70, 15, 7], [4, 10, 80, 6],
    ...                               [1, 3, 16, 80]])
    >>> round(float(r.statistic[0, 2]), 4), round(float(r.pvalue[0, 2]), 4), r.n_from.tolist()
    (2.6211, 0.0044, [100.0, 100.0, 100.0, 100.0])
    """
    n = _check_counts(counts, "counts", matrix=True, least=_STABILITY_OFFSET + 1)
    k = n.shape[0]
    n_from = n.sum(axis=1)
    rows, cols = np.indices((k, k))
    above = cols >= rows + _STABILITY_OFFSET
    tested = above | (cols <= rows - _STABILITY_OFFSET)
    with np.errstate(divide="ignore", invalid="ignore"):  # an empty grade's shares are NaN
        p = n / n_from[:, None]
        q = p[rows, np.clip(np.where(above, cols - 1, cols + 1), 0, k - 1)]
        variance = (p * (1 - p) + q * (1 - q) + 2 * p * q) / n_from[:, None]
    defined = tested & (variance > 0)
    statistic = np.full((k, k), np.nan)
    statistic[defined] = (q - p)[defined] / np.sqrt(variance[defined])
    from scipy.special import ndtr

    pvalue = ndtr(-statistic)
    undefined = int((tested & ~defined).sum())
    if undefined:
        not_available(
            f"The migration stability test is not available in {undefined} of "
            f"{int(tested.sum())} cells: their start grade holds no obligors, or the cell and "
            "its neighbour nearer the diagonal are both empty, or one holds the whole grade"
        )
    for arr in (statistic, pvalue, n_from):
        arr.setflags(write=False)
    return MigrationStabilityResult(statistic, pvalue, n_from)
