"""Vintage curves: the cumulative default rate of one origination month by months on book,
against what its PDs imply.

Vintage v = origination (or score) month, MOB m = months on book. The cumulative default rate
CDR_v(m) = defaulted by MOB m / originated in v. Under calibrated PDs (12-month horizon) a
loan has defaulted by MOB m with probability PD_i·σ(m), σ(m) the share of the 12-month
defaults observed by MOB m on matured vintages (:func:`default_timing`), so

    E[CDR_v(m)] = σ(m)·Σ PD_i / n_v,   z = (D_v(m) − σ(m)·ΣPD_i) / √(Σ PD_i σ(m)(1 − PD_i σ(m))),

the variance σΣp − σ²Σp² computed from the vintage's Σp and Σp². Reference: FORMULAS.md,
"Vintages".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import FloatArray


@dataclass(frozen=True)
class VintageCurve:
    """One vintage's realised and expected cumulative default rates by MOB.

    ``mob``: months on book; ``observed``: CDR_v(m); ``expected``: σ(m)·Σp/n; ``z``: the
    observed defaults' standard score under calibrated PDs (NaN where σ(m)·Σp is 0);
    ``p_value``: one-sided P(Z ≥ z), the chance of a curve this far above the expected one.
    """

    mob: FloatArray
    observed: FloatArray
    expected: FloatArray
    z: FloatArray
    p_value: FloatArray


def vintage_curve(
    n: float,
    pd_sum: float,
    pd_sq_sum: float,
    defaults_by_mob: Any,
    sigma: Any,
) -> VintageCurve:
    """The vintage curve of ``n`` loans with PD sums Σp = ``pd_sum``, Σp² = ``pd_sq_sum``:
    ``defaults_by_mob[m]`` loans (or weights) defaulted by MOB m, against ``sigma[m]`` the share
    of 12-month defaults observed by MOB m (m = 0, 1, ...; NaN where unknown).

    Examples
    --------
    >>> c = vintage_curve(1000, 20.0, 0.5, [0, 2, 5, 9], [0.0, 0.1, 0.25, 0.4])
    >>> c.expected.round(4).tolist()
    [0.0, 0.002, 0.005, 0.008]
    >>> round(float(c.z[3]), 4)
    0.3553
    """
    d = np.atleast_1d(np.asarray(defaults_by_mob, dtype=np.float64))
    s = np.atleast_1d(np.asarray(sigma, dtype=np.float64))
    if d.shape != s.shape or d.ndim != 1:
        raise InvalidDataError(
            f"Expected defaults_by_mob and sigma of one length, got {d.shape} and {s.shape}"
        )
    if n <= 0:
        raise InvalidDataError(f"Expected a vintage with loans, got n={n!r}")
    if not 0 <= pd_sq_sum <= pd_sum <= n * (1 + 1e-12):
        raise InvalidDataError(
            f"Expected 0 <= pd_sq_sum <= pd_sum <= n, got {pd_sq_sum!r}, {pd_sum!r}, {n!r}"
        )
    mean = s * pd_sum
    variance = s * pd_sum - s**2 * pd_sq_sum
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(
            variance > 0, (d - mean) / np.sqrt(np.where(variance > 0, variance, 1)), np.nan
        )
    from scipy.special import ndtr

    return VintageCurve(
        mob=np.arange(d.shape[0], dtype=np.float64),
        observed=d / n,
        expected=mean / n,
        z=z,
        p_value=np.asarray(ndtr(-np.asarray(z)), dtype=np.float64),
    )


def default_timing(defaults_by_mob: Any, defaults_total: Any) -> FloatArray:
    """σ(m): the share of the 12-month defaults of matured vintages observed by MOB m,
    Σ_v D_v(m) / Σ_v D_v(12) over the vintages (rows of ``defaults_by_mob``; ``defaults_total``
    each vintage's 12-month defaults). NaN for every m when they hold no default.

    Examples
    --------
    >>> default_timing([[0, 1, 3, 4], [0, 0, 2, 4]], [4, 4]).tolist()
    [0.0, 0.125, 0.625, 1.0]
    """
    d = np.atleast_2d(np.asarray(defaults_by_mob, dtype=np.float64))
    total = float(np.asarray(defaults_total, dtype=np.float64).sum())
    if total <= 0:
        return np.full(d.shape[1], np.nan)
    return np.minimum(np.asarray(d.sum(axis=0) / total, dtype=np.float64), 1.0)


@dataclass(frozen=True, eq=False)
class VintageTable:
    """Loans per vintage (origination or score month) and the months on book at which they
    reached each event (default, 30+, 60+, 90+ days past due), counted where the loans live.

    ``vintages``: the months, ``"YYYY-MM"``; per vintage ``n``/``w`` loans (rows, summed
    weight), ``p``/``p2`` Σp and Σp² of their PDs (zeros without a PD), ``labeled``/``bads``
    the rows with a label and with label 1; ``events[name]``: rows (and ``event_weights``
    their summed weight) by MOB m = 0..``max_mob`` at which the event first happened (an
    array vintages × (max_mob + 1), not cumulative).
    """

    vintages: tuple[str, ...]
    n: FloatArray
    w: FloatArray
    p: FloatArray
    p2: FloatArray
    labeled: FloatArray
    bads: FloatArray
    events: dict[str, FloatArray]
    event_weights: dict[str, FloatArray]
    max_mob: int

    def cumulative(self, event: str, *, weighted: bool = False) -> FloatArray:
        """Loans (or weight) that reached ``event`` by each MOB, vintages × MOBs."""
        counts = (self.event_weights if weighted else self.events)[event]
        return np.asarray(np.cumsum(counts, axis=1), dtype=np.float64)

    def equals(self, other: VintageTable, *, rtol: float = 1e-9) -> bool:
        """Same vintages, loans, sums and events (to ``rtol``)."""
        same = self.vintages == other.vintages and self.max_mob == other.max_mob
        same = same and set(self.events) == set(other.events)
        arrays = ("n", "w", "p", "p2", "labeled", "bads")
        return (
            same
            and all(
                np.allclose(getattr(self, a), getattr(other, a), rtol=rtol, atol=1e-9)
                for a in arrays
            )
            and all(
                np.allclose(self.events[e], other.events[e], rtol=rtol)
                and np.allclose(self.event_weights[e], other.event_weights[e], rtol=rtol)
                for e in self.events
            )
        )
