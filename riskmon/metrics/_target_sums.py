"""Moments of a continuous target per bin: what LGD, CCF and EAD figures need of every loan.

A model with a continuous target predicts a value ŝ per loan (its score: the predicted LGD,
CCF or exposure) whose realised value y is known once the loan's outcome is (NULL before).
A :class:`TargetTable` holds, per bin of one variable, over the loans whose target is
realised: their number n_y, Σy, Σy², Σŝ, Σŝ², Σŝ·y, and, weighted, Σw, Σw·y, Σw·y², Σw·ŝ,
Σw·ŝ², Σw·ŝ·y and Σw². Means, variances, the mean error and the mean squared error, R² and
the correlation of prediction and realisation are functions of these sums, so a collect pass
computes them in the same ``GROUP BY`` as the counts, and a table of several bins (segments,
days) adds up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, cast

import numpy as np

from riskmon.metrics._binning import Binning
from riskmon.metrics._validation import FloatArray

#: the moments a collect pass returns per cell, in this order: unweighted (the first counts
#: the rows whose target is realised), then those only a weighted source has
#: (``ad`` = Σ|y − ŝ| and ``d2`` = Σ(y − ŝ)², ``wad`` = Σw·|y − ŝ|: the back-testing of
#: LGD, CCF and EAD estimates reads the absolute and squared differences directly; ``n_u``
#: and ``u``: the count and sum of a second prediction û, the estimate without its downturn
#: component, where given, else ŝ itself)
TARGET_MOMENTS: tuple[str, ...] = ("n_y", "y", "y2", "s", "s2", "sy", "ad", "d2", "n_u", "u")
WEIGHTED_TARGET_MOMENTS: tuple[str, ...] = (
    "w_y",
    "wy",
    "wy2",
    "ws",
    "ws2",
    "wsy",
    "w2_y",
    "wad",
    "wd2",
)


@dataclass(frozen=True, eq=False)
class TargetTable:
    """Loans and the moments of their realised target per bin (numpy arrays of one length).

    ``n``/``w``: every loan of the bin (rows, summed weight), realised or not; over the loans
    whose target y is realised: ``n_y`` rows, ``y`` = Σy, ``y2`` = Σy², ``s`` = Σŝ, ``s2`` =
    Σŝ², ``sy`` = Σŝ·y (ŝ the prediction, the score), ``ad`` = Σ|y − ŝ|, ``d2`` = Σ(y − ŝ)²;
    ``w_y`` = Σw, ``wy`` = Σw·y, ``wy2`` = Σw·y², ``ws`` = Σw·ŝ, ``ws2`` = Σw·ŝ², ``wsy`` =
    Σw·ŝ·y, ``w2_y`` = Σw², ``wad`` = Σw·|y − ŝ|, ``wd2`` = Σw·(y − ŝ)² (unweighted, every w
    is 1: ``w_y`` = ``w2_y`` = ``n_y``, ``wy`` = ``y``, …); ``n_u`` and ``u`` = Σû count and
    sum a second prediction û (an estimate without its downturn component; ŝ itself when
    none is given) over the realised loans where û is not NULL. A NULL prediction adds nothing
    to its sums (as SQL's ``SUM``). ``labels`` names the bins.

    Examples
    --------
    Three loans in two bins, the second loan's target not realised yet:

    >>> t = TargetTable.from_arrays([0.2, None, 0.6], [0.3, 0.5, 0.4], [0, 0, 1], n_bins=2)
    >>> t.n.tolist(), t.n_y.tolist(), t.y.tolist(), t.sy.tolist()
    ([2.0, 1.0], [1.0, 1.0], [0.2, 0.6], [0.06, 0.24])
    >>> t.mean_realised(), t.mean_predicted()
    ([0.2, 0.6], [0.3, 0.4])
    >>> t.portfolio().mean_realised()
    [0.4]
    """

    labels: Sequence[str]
    n: FloatArray
    w: FloatArray
    n_y: FloatArray
    y: FloatArray
    y2: FloatArray
    s: FloatArray
    s2: FloatArray
    sy: FloatArray
    ad: FloatArray
    d2: FloatArray
    n_u: FloatArray
    u: FloatArray
    w_y: FloatArray
    wy: FloatArray
    wy2: FloatArray
    ws: FloatArray
    ws2: FloatArray
    wsy: FloatArray
    w2_y: FloatArray
    wad: FloatArray
    wd2: FloatArray
    binning: Binning | None = None

    @classmethod
    def from_arrays(
        cls,
        y: Any,
        score: Any,
        bins: Any,
        *,
        n_bins: int,
        sample_weight: Any = None,
        labels: Sequence[str] | None = None,
        binning: Binning | None = None,
        downturn: Any = None,
    ) -> TargetTable:
        """Moments per bin from one row per loan: ``y`` the realised target (None or NaN where
        not realised), ``score`` the prediction, ``bins`` each loan's bin index, ``downturn``
        the second prediction û (default: ``score``)."""
        target = np.asarray(y, dtype=np.float64)  # None becomes NaN
        realised = ~np.isnan(target)
        y_ = np.where(realised, target, 0.0)
        prediction = np.asarray(score, dtype=np.float64)
        s = np.nan_to_num(prediction, nan=0.0) * realised
        b = np.asarray(bins, dtype=np.intp)
        w = np.ones_like(y_) if sample_weight is None else np.asarray(sample_weight, np.float64)
        w_y = w * realised
        d = np.where(~np.isnan(prediction), y_ - s, 0.0)  # y − ŝ is NULL where ŝ is
        second = prediction if downturn is None else np.asarray(downturn, dtype=np.float64)
        has_u = realised & ~np.isnan(second)

        def total(values: FloatArray) -> FloatArray:
            return np.bincount(b, weights=values, minlength=n_bins).astype(np.float64)

        return cls(
            labels=list(labels) if labels is not None else [str(i) for i in range(n_bins)],
            n=total(np.ones_like(y_)),
            w=total(w),
            n_y=total(realised.astype(np.float64)),
            y=total(y_),
            y2=total(y_ * y_),
            s=total(s),
            s2=total(s * s),
            sy=total(s * y_),
            ad=total(np.abs(d)),
            d2=total(d * d),
            n_u=total(has_u.astype(np.float64)),
            u=total(np.where(has_u, second, 0.0)),
            w_y=total(w_y),
            wy=total(w_y * y_),
            wy2=total(w_y * y_ * y_),
            ws=total(w_y * s),
            ws2=total(w_y * s * s),
            wsy=total(w_y * s * y_),
            w2_y=total(w_y * w),
            wad=total(w_y * np.abs(d)),
            wd2=total(w_y * d * d),
            binning=binning,
        )

    @classmethod
    def from_cells(
        cls,
        cells: Sequence[tuple[int, float, float, Sequence[float]]],
        *,
        n_bins: int,
        weighted: bool,
        labels: Sequence[str],
        binning: Binning | None = None,
    ) -> TargetTable:
        """Moments per bin from aggregate cells ``(bin, rows, weight, moments)``: ``moments``
        as :data:`TARGET_MOMENTS` (then :data:`WEIGHTED_TARGET_MOMENTS` when ``weighted``)
        name them."""
        arrays = {f.name: np.zeros(n_bins) for f in fields(cls) if f.name not in _NOT_SUMS}
        for key, rows, weight, moments in cells:
            index = int(key)
            arrays["n"][index] += rows
            arrays["w"][index] += weight
            values = [float(m) for m in moments]
            plain = dict(zip(TARGET_MOMENTS, values[:_N_PLAIN], strict=True))
            if weighted:
                named = dict(zip(WEIGHTED_TARGET_MOMENTS, values[_N_PLAIN:], strict=True))
            else:  # every weight is 1
                named = {"w_y": plain["n_y"], "w2_y": plain["n_y"]}
                named |= {f"w{name}": plain[name] for name in _WEIGHTED_TWINS}
            for name, value in (plain | named).items():
                arrays[name][index] += value
        return cls(labels=list(labels), binning=binning, **arrays)

    def portfolio(self) -> TargetTable:
        """Every bin summed into one."""
        arrays = {
            f.name: np.asarray([getattr(self, f.name).sum()])
            for f in fields(self)
            if f.name not in _NOT_SUMS
        }
        return TargetTable(labels=["portfolio"], **cast(Any, arrays))

    def mean_realised(self, *, weighted: bool = False) -> list[float | None]:
        """Per bin, the mean realised target: Σy / n_y, or weighted Σw·y / Σw (over the loans
        whose target is realised); None where no loan of the bin has its target realised."""
        return _ratios(self.wy if weighted else self.y, self.w_y if weighted else self.n_y)

    def mean_predicted(self, *, weighted: bool = False) -> list[float | None]:
        """Per bin, the mean prediction of the loans whose target is realised: Σŝ / n_y, or
        weighted Σw·ŝ / Σw; None where no loan of the bin has its target realised."""
        return _ratios(self.ws if weighted else self.s, self.w_y if weighted else self.n_y)

    def equals(self, other: TargetTable, *, rtol: float = 1e-9, atol: float = 1e-9) -> bool:
        """Same moments (to ``rtol``, and ``atol`` for sums near 0) in the same bins."""
        return list(self.labels) == list(other.labels) and all(
            np.allclose(getattr(self, f.name), getattr(other, f.name), rtol=rtol, atol=atol)
            for f in fields(self)
            if f.name not in _NOT_SUMS
        )


def _ratios(numerator: FloatArray, denominator: FloatArray) -> list[float | None]:
    """numerator / denominator per bin; None where the denominator is not positive (a mean of
    no realised target is not available, not 0)."""
    return [
        float(top / bottom) if bottom > 0 else None
        for top, bottom in zip(numerator.tolist(), denominator.tolist(), strict=True)
    ]


_N_PLAIN = len(TARGET_MOMENTS)
#: the unweighted moments whose weighted twin (``w`` + name) an unweighted table equals
_WEIGHTED_TWINS = tuple(n for n in TARGET_MOMENTS[1:] if f"w{n}" in WEIGHTED_TARGET_MOMENTS)
_NOT_SUMS = frozenset({"labels", "binning"})
