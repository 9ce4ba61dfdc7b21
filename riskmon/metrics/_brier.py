"""Calibration of individual PDs: the Brier score and Spiegelhalter's test.

Both are functions of a few sums over the loans (y the 0/1 default flag, p the PD, w the
weight), so a database can add them up per cell in the statement that counts goods and bads,
and cells can be added together afterwards (:class:`CalibrationSums`). Since y² = y:

    Σw·(y − p)²            = Σw·y − 2·Σw·y·p + Σw·p²
    Σ(y − p)·(1 − 2p)      = Σy − 2·Σy·p − Σp + 2·Σp²
    Σ(1 − 2p)²·p·(1 − p)   = Σp − 5·Σp² + 8·Σp³ − 4·Σp⁴

The functions on arrays compute the same figures from the rows directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import (
    FloatArray,
    check_labels,
    check_probabilities,
    check_same_length,
    check_weights,
    not_available,
)

#: a variance of the Spiegelhalter numerator at or below this share of Σp (Σw²·p) is taken as
#: zero: the moment form cancels to rounding when every PD sits at 0, ½ or 1
VARIANCE_ROUNDING = 1e-9
#: the sums a weighted :class:`CalibrationSums` adds, all or none
_WEIGHTED = ("w", "wy", "wp2", "wyp")


@dataclass(frozen=True)
class CalibrationSums:
    """The sums over some loans that the Brier score and Spiegelhalter's test need.

    y is the default flag (0/1), p the PD, w the weight. Cells add up with ``+`` (and
    ``sum(cells)``), so a database may return one row of sums per cell (a ``GROUP BY``
    with ``SUM(pd)``, ``SUM(pd * pd)``, ...), and the sums of a grade or of the portfolio are
    the sums of its cells.

    Attributes
    ----------
    n, y, p, p2, p3, p4, yp : float
        Over the rows, unweighted: their number, Σy (the defaults), Σp, Σp², Σp³, Σp⁴, Σy·p.
    w, wy, wp2, wyp : float or None
        For weighted data, Σw, Σw·y, Σw·p², Σw·y·p (what the weighted Brier score needs);
        None, all four, for unweighted data.

    Examples
    --------
    >>> a = CalibrationSums.from_arrays([0, 1], [0.2, 0.6])
    >>> b = CalibrationSums.from_arrays([1], [0.5])
    >>> (a + b).n, (a + b).y, round((a + b).p, 10), (a + b).w
    (3.0, 2.0, 1.3, None)
    """

    n: float
    y: float
    p: float
    p2: float
    p3: float
    p4: float
    yp: float
    w: float | None = None
    wy: float | None = None
    wp2: float | None = None
    wyp: float | None = None

    def __post_init__(self) -> None:
        given = [name for name in _WEIGHTED if getattr(self, name) is not None]
        if given and len(given) < len(_WEIGHTED):
            raise InvalidDataError(
                f"Expected all of the weighted sums {list(_WEIGHTED)} or none, got {given}"
            )
        for f in fields(self):
            value = getattr(self, f.name)
            number = isinstance(value, (int, float, np.integer, np.floating))
            if value is not None and not (number and math.isfinite(value) and value >= 0):
                raise InvalidDataError(
                    f"Expected a finite non-negative sum in {f.name!r}, got {value!r}"
                )

    @property
    def weighted(self) -> bool:
        """Whether the weighted sums are there."""
        return self.w is not None

    @classmethod
    def from_arrays(cls, y_true: Any, y_pd: Any, *, sample_weight: Any = None) -> CalibrationSums:
        """The sums of some rows: labels ``y_true`` (0/1), PDs ``y_pd`` in [0, 1], and
        optionally weights (rows of weight 0 carry nothing and are left out of every sum)."""
        y, p, w = _rows(y_true, y_pd, sample_weight)
        if sample_weight is not None:
            kept = w > 0
            y, p, w = y[kept], p[kept], w[kept]
        p2 = p * p
        weighted: dict[str, float] = {}
        if sample_weight is not None:
            weighted = {
                "w": float(w.sum()),
                "wy": float(np.dot(w, y)),
                "wp2": float(np.dot(w, p2)),
                "wyp": float(np.dot(w * y, p)),
            }
        return cls(
            n=float(y.size),
            y=float(y.sum()),
            p=float(p.sum()),
            p2=float(p2.sum()),
            p3=float(np.dot(p2, p)),
            p4=float(np.dot(p2, p2)),
            yp=float(np.dot(y, p)),
            **weighted,
        )

    def __add__(self, other: CalibrationSums) -> CalibrationSums:
        if not isinstance(other, CalibrationSums):
            return NotImplemented
        if self.weighted != other.weighted:
            raise InvalidDataError("Expected sums both weighted or both unweighted to add them")
        added: dict[str, Any] = {}
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            added[f.name] = None if mine is None else mine + theirs
        return CalibrationSums(**added)

    def __radd__(self, other: object) -> CalibrationSums:
        # sum(cells) starts from 0
        if other == 0:
            return self
        return NotImplemented


def _rows(y_true: Any, y_pd: Any, sample_weight: Any) -> tuple[FloatArray, FloatArray, FloatArray]:
    y = check_labels(y_true)
    p = check_probabilities(y_pd, name="y_pd", closed=True)
    check_same_length(y.shape[0], p.shape[0], "y_pd")
    w = check_weights(sample_weight, y.shape[0])
    return y.astype(np.float64), p, np.ones(y.shape[0]) if w is None else w


# --------------------------------------------------------------------------- Brier
def _brier(squared_error: float, weight: float, *, stacklevel: int = 4) -> float:
    if weight <= 0:
        return not_available(
            "The Brier score is not available: the data has no rows of positive weight",
            stacklevel=stacklevel,
        )
    return max(squared_error, 0.0) / weight  # a moment form may round just below 0


def brier_score(y_true: Any, y_pd: Any, *, sample_weight: Any = None) -> float:
    """Brier score: the (weighted) mean squared difference between outcome and PD.

        BS = Σ w·(y − p)² / Σ w

    0 for PDs of exactly 0 and 1 that are always right; a constant PD equal to the default
    rate r scores r·(1 − r). Lower is better; it mixes calibration and discrimination.

    Parameters
    ----------
    y_true : array-like of 0/1
        1 = default.
    y_pd : array-like of float
        PDs, in [0, 1].
    sample_weight : array-like, optional

    Returns
    -------
    float
        NaN (with a :class:`~riskmon.errors.DegenerateDataWarning`) when no row has weight.

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. Monthly
    Weather Review 78(1), 1–3.

    Examples
    --------
    >>> round(brier_score([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]), 4)
    0.1425
    """
    y, p, w = _rows(y_true, y_pd, sample_weight)
    return _brier(float(np.dot(w, (y - p) ** 2)), float(w.sum()))


def brier_score_from_sums(sums: CalibrationSums) -> float:
    """Brier score from the sums of the loans; see :func:`brier_score`.

    Weighted sums give BS = (Σw·y − 2·Σw·y·p + Σw·p²) / Σw; unweighted ones
    (Σy − 2·Σy·p + Σp²) / n.

    Examples
    --------
    >>> s = CalibrationSums.from_arrays([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> round(brier_score_from_sums(s), 4)
    0.1425
    """
    if sums.w is None or sums.wy is None or sums.wyp is None or sums.wp2 is None:
        return _unweighted_brier(sums)
    return _brier(sums.wy - 2 * sums.wyp + sums.wp2, sums.w)


def _unweighted_brier(sums: CalibrationSums) -> float:
    return _brier(sums.y - 2 * sums.yp + sums.p2, sums.n, stacklevel=5)


# --------------------------------------------------------------------------- Spiegelhalter
@dataclass(frozen=True)
class SpiegelhalterResult:
    """Spiegelhalter's test of individual PDs.

    Attributes
    ----------
    statistic : float
        z, standard normal under H0 (every PD right); ``float(result)`` gives it. Positive
        when there were more defaults than the PDs expect where they are low (below ½), or
        fewer where they are high.
    pvalue : float
        Two-sided: 2·(1 − Φ(|z|)).
    brier : float
        The Brier score of the same loans, weighted as the test is.
    """

    statistic: float
    pvalue: float
    brier: float

    def __float__(self) -> float:
        return self.statistic


def _spiegelhalter(numerator: float, variance: float, scale: float) -> float:
    """z, or NaN with a warning when the PDs leave the numerator no variance."""
    if not variance > VARIANCE_ROUNDING * scale:
        return not_available(
            "Spiegelhalter's test is not available: the PDs leave its statistic no variance "
            "(no rows, or every PD at 0, ½ or 1)",
            stacklevel=4,
        )
    return numerator / math.sqrt(variance)


def _result(z: float, brier: float) -> SpiegelhalterResult:
    from scipy.special import ndtr

    return SpiegelhalterResult(z, 2 * float(ndtr(-abs(z))), brier)


def spiegelhalter_test(y_true: Any, y_pd: Any, *, sample_weight: Any = None) -> SpiegelhalterResult:
    """Spiegelhalter's z-test of individual PDs.

    Under H0 (each loan defaults with its own PD), Brier − mean p·(1 − p) has mean 0; its
    standardised form is

        z = Σ w·(y − p)·(1 − 2p) / √(Σ w²·(1 − 2p)²·p·(1 − p))

    which is approximately standard normal. The p-value is two-sided, 2·(1 − Φ(|z|)): the
    test rejects PDs that are off in either direction (and, since the sign depends on the PD
    level, ``statistic`` alone does not say which).

    Parameters
    ----------
    y_true : array-like of 0/1
        1 = default.
    y_pd : array-like of float
        PDs, in [0, 1].
    sample_weight : array-like, optional
        Fixed weights w (exposure): the sums above are weighted, the variance with w².

    Returns
    -------
    SpiegelhalterResult
        NaN statistic and p-value (with a :class:`~riskmon.errors.DegenerateDataWarning`) when
        every PD is 0, ½ or 1, or no row has weight.

    References
    ----------
    Spiegelhalter, D. J. (1986). Probabilistic prediction in patient management and clinical
    trials. Statistics in Medicine 5(5), 421–433.

    Examples
    --------
    >>> r = spiegelhalter_test([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> round(r.statistic, 4), round(r.pvalue, 4), round(r.brier, 4)
    (-0.4364, 0.6625, 0.1425)
    """
    y, p, w = _rows(y_true, y_pd, sample_weight)
    w2 = w * w
    slope = 1 - 2 * p
    brier = _brier(float(np.dot(w, (y - p) ** 2)), float(w.sum()))
    numerator = float(np.dot(w, (y - p) * slope))
    variance = float(np.dot(w2, slope * slope * p * (1 - p)))
    return _result(_spiegelhalter(numerator, variance, float(np.dot(w2, p))), brier)


def spiegelhalter_test_from_sums(sums: CalibrationSums) -> SpiegelhalterResult:
    """Spiegelhalter's test from the sums of the loans; see :func:`spiegelhalter_test`.

    numerator = Σy − 2·Σy·p − Σp + 2·Σp², variance = Σp − 5·Σp² + 8·Σp³ − 4·Σp⁴. A variance
    at or below ``VARIANCE_ROUNDING``·Σp is rounding, not information: the test is then not
    available.

    From sums the test is unweighted, and so is its ``brier``, even when ``sums`` is weighted:
    a weighted z needs Σw²·p^k for k = 1..4, which the sums do not keep (the array form,
    :func:`spiegelhalter_test` with ``sample_weight``, computes it).

    Examples
    --------
    >>> s = CalibrationSums.from_arrays([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> round(spiegelhalter_test_from_sums(s).statistic, 4)
    -0.4364
    """
    brier = _unweighted_brier(sums)
    numerator = sums.y - 2 * sums.yp - sums.p + 2 * sums.p2
    variance = sums.p - 5 * sums.p2 + 8 * sums.p3 - 4 * sums.p4
    return _result(_spiegelhalter(numerator, variance, sums.p), brier)
