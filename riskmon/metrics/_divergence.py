"""The divergence behind both IV and PSI, with its zero-cell smoothing.

IV and PSI are the same figure on different pairs of distributions over the same bins
(Jeffreys' symmetrised Kullback-Leibler divergence): Σ (p_i − q_i)·ln(p_i / q_i), goods
against bads for IV, current against baseline for PSI. Each term is ≥ 0, since p_i − q_i and
ln(p_i / q_i) always have the same sign.

Zero cells. A bin holding rows of one distribution but none of the other would make its term
infinite. Such a *zero cell* is given the share of ``smoothing`` rows of average weight of its
distribution, ``smoothing / n`` (n that distribution's row count), and flagged; every other
share is left exactly as observed, so data without zero cells gives the textbook figure. The
default, 0.5, is the Haldane-Anscombe half-count used for log odds with empty cells. Measured
in rows, not in weight or as a fixed share floor, the correction (a) does not change when all
weights are scaled, and (b) stays below the share of any one observed row, however large the
sample, which a fixed floor such as 1e-4 would not. A bin with no rows in either distribution
(an *empty bin*) has nothing to compare: its term is 0 by definition, it is flagged empty and
never smoothed, and its log ratio is left undefined (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import FloatArray

#: pseudo-count, in rows, given to a zero cell (Haldane-Anscombe correction)
DEFAULT_SMOOTHING = 0.5

BoolArray = npt.NDArray[np.bool_]


def check_smoothing(smoothing: float) -> float:
    """Raise unless the pseudo-count is a finite number > 0."""
    value = float(smoothing)
    if not np.isfinite(value) or value <= 0:
        raise InvalidDataError(
            f"Expected smoothing > 0 (a pseudo-count in rows given to zero cells), "
            f"got {smoothing!r}"
        )
    return value


@dataclass(frozen=True, eq=False)
class DivergenceTerms:
    """Per-bin pieces of Σ (p_i − q_i)·ln(p_i / q_i)."""

    p_share: FloatArray
    q_share: FloatArray
    p_used: FloatArray
    q_used: FloatArray
    p_smoothed: BoolArray
    q_smoothed: BoolArray
    empty: BoolArray
    log_ratio: FloatArray
    terms: FloatArray

    @property
    def value(self) -> float:
        return float(self.terms.sum())


def divergence_terms(
    p: FloatArray, p_rows: int, q: FloatArray, q_rows: int, *, smoothing: float
) -> DivergenceTerms:
    """The smoothed per-bin terms; ``p`` and ``q`` are summed weights with positive totals."""
    p_share = p / p.sum()
    q_share = q / q.sum()
    empty = (p == 0) & (q == 0)
    p_smoothed = (p == 0) & ~empty
    q_smoothed = (q == 0) & ~empty
    p_used = np.where(p_smoothed, smoothing / p_rows, p_share)
    q_used = np.where(q_smoothed, smoothing / q_rows, q_share)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.where(empty, np.nan, np.log(p_used) - np.log(q_used))
    terms = np.where(empty, 0.0, (p_used - q_used) * log_ratio)
    return DivergenceTerms(
        p_share, q_share, p_used, q_used, p_smoothed, q_smoothed, empty, log_ratio, terms
    )
