"""PD sums per bin: what calibration figures need of every loan, summed where the loans live.

A :class:`PdTable` holds, per bin of one variable (the grades), the loans and their defaults
(rows and summed weights) and the sums of the PD's powers — Σp, Σp², Σp³, Σp⁴ over all loans,
Σp over defaults (Σ y·p) — and, weighted, Σw², Σw·p, Σw·p² and Σw·p over defaults. Every
calibration figure (default rates against mean PDs, Brier, Spiegelhalter, Hosmer–Lemeshow) is a
function of these sums, so a collect pass computes them in the same ``GROUP BY`` as the counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, cast

import numpy as np

from riskmon.metrics._binning import Binning
from riskmon.metrics._validation import FloatArray

#: the sums a collect pass returns per cell (label × bin), in this order: unweighted, then
#: those only a weighted source has
PD_SUMS: tuple[str, ...] = ("p", "p2", "p3", "p4")
WEIGHTED_PD_SUMS: tuple[str, ...] = ("w2", "wp", "wp2")


@dataclass(frozen=True, eq=False)
class PdTable:
    """Loans, defaults and PD sums per bin (numpy arrays of one length).

    ``n``/``d``: loans and defaults (rows); ``w``/``wd``: their summed weights (equal to ``n``
    and ``d`` when unweighted); ``p``, ``p2``, ``p3``, ``p4``: Σp^k over the loans; ``pd``: Σp
    over the defaults; ``w2``: Σw²; ``wp``, ``wp2``: Σw·p, Σw·p²; ``wpd``: Σw·p over the
    defaults. ``labels`` names the bins (grades).
    """

    labels: Sequence[str]
    n: FloatArray
    d: FloatArray
    w: FloatArray
    wd: FloatArray
    p: FloatArray
    pd: FloatArray
    p2: FloatArray
    p3: FloatArray
    p4: FloatArray
    w2: FloatArray
    wp: FloatArray
    wp2: FloatArray
    wpd: FloatArray
    binning: Binning | None = None

    @classmethod
    def from_arrays(
        cls,
        y: Any,
        pd: Any,
        bins: Any,
        *,
        n_bins: int,
        sample_weight: Any = None,
        labels: Sequence[str] | None = None,
        binning: Binning | None = None,
    ) -> PdTable:
        """Sums per bin from one row per loan (``bins``: each loan's bin index)."""
        y_ = np.asarray(y, dtype=np.float64)
        p = np.asarray(pd, dtype=np.float64)
        b = np.asarray(bins, dtype=np.intp)
        w = np.ones_like(p) if sample_weight is None else np.asarray(sample_weight, np.float64)

        def total(values: FloatArray) -> FloatArray:
            return np.bincount(b, weights=values, minlength=n_bins).astype(np.float64)

        return cls(
            labels=list(labels) if labels is not None else [str(i) for i in range(n_bins)],
            n=total(np.ones_like(p)),
            d=total(y_),
            w=total(w),
            wd=total(w * y_),
            p=total(p),
            pd=total(y_ * p),
            p2=total(p**2),
            p3=total(p**3),
            p4=total(p**4),
            w2=total(w**2),
            wp=total(w * p),
            wp2=total(w * p**2),
            wpd=total(w * y_ * p),
            binning=binning,
        )

    @classmethod
    def from_cells(
        cls,
        cells: Sequence[tuple[int, int, float, float, Sequence[float]]],
        *,
        n_bins: int,
        weighted: bool,
        labels: Sequence[str],
        binning: Binning | None = None,
    ) -> PdTable:
        """Sums per bin from aggregate cells ``(bin, label, rows, weight, sums)``: ``sums`` as
        :data:`PD_SUMS` (then :data:`WEIGHTED_PD_SUMS` when ``weighted``) name them."""
        arrays = {f.name: np.zeros(n_bins) for f in fields(cls) if f.name not in _NOT_SUMS}
        for key, label, rows, weight, sums in cells:
            index = int(key)
            bad = label == 1
            arrays["n"][index] += rows
            arrays["w"][index] += weight
            p, p2, p3, p4 = (float(s) for s in sums[:4])
            arrays["p"][index] += p
            arrays["p2"][index] += p2
            arrays["p3"][index] += p3
            arrays["p4"][index] += p4
            if weighted:
                w2, wp, wp2 = (float(s) for s in sums[4:7])
            else:  # every weight is 1
                w2, wp, wp2 = float(rows), p, p2
            arrays["w2"][index] += w2
            arrays["wp"][index] += wp
            arrays["wp2"][index] += wp2
            if bad:
                arrays["d"][index] += rows
                arrays["wd"][index] += weight
                arrays["pd"][index] += p
                arrays["wpd"][index] += wp
        return cls(labels=list(labels), binning=binning, **arrays)

    def portfolio(self) -> PdTable:
        """Every bin summed into one."""
        arrays = {
            f.name: np.asarray([getattr(self, f.name).sum()])
            for f in fields(self)
            if f.name not in _NOT_SUMS
        }
        return PdTable(labels=["portfolio"], **cast(Any, arrays))

    def merged(self, groups: Sequence[Sequence[int]]) -> PdTable:
        """Bins merged into ``groups`` (each a list of bin indices)."""
        arrays = {
            f.name: np.asarray([getattr(self, f.name)[list(g)].sum() for g in groups])
            for f in fields(self)
            if f.name not in _NOT_SUMS
        }
        labels = [
            self.labels[g[0]] if len(g) == 1 else f"{self.labels[g[0]]} … {self.labels[g[-1]]}"
            for g in groups
        ]
        return PdTable(labels=labels, **cast(Any, arrays))

    def effective(self, weighted: bool) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Per bin: the loans, the defaults and the mean PD a test uses.

        Unweighted: rows, default rows, Σp/n. Weighted: Kish's effective number of loans
        n_eff = (Σw)²/Σw², the defaults at the weighted default rate (n_eff·Σw·y/Σw) and the
        weighted mean PD Σw·p/Σw. Empty bins give zeros and NaN means.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            if not weighted:
                return self.n, self.d, self.p / self.n
            n_eff = np.where(self.w2 > 0, self.w**2 / np.where(self.w2 > 0, self.w2, 1.0), 0.0)
            rate = self.wd / self.w
            return n_eff, np.nan_to_num(rate * n_eff), self.wp / self.w

    def equals(self, other: PdTable, *, rtol: float = 1e-9) -> bool:
        """Same sums (to ``rtol``) in the same bins."""
        return all(
            np.allclose(getattr(self, f.name), getattr(other, f.name), rtol=rtol, atol=1e-9)
            for f in fields(self)
            if f.name not in _NOT_SUMS
        ) and list(self.labels) == list(other.labels)


_NOT_SUMS = frozenset({"labels", "binning"})
