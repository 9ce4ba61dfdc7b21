"""The sums a back-test of LGD, CCF or EAD estimates reads, per estimated class, from one joint
table of moments (estimated class × realised class) that a collect pass computes.

A collect pass crosses the estimate's class (a grade, or one of the ECB's 12 segments) with the
realised value's class (the realised value cut at the ECB segments' edges, its missing bin the
open recoveries) and sums the target's moments per cell (:class:`TargetTable`, the exposure
as the weight). Summed over the realised classes, a row gives the t-test's N, Σd, Σd² and the
EAD-weighted sums of the loss shortfall and the mean absolute deviation; the closed cells are
the generalised AUC's contingency table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from riskmon.metrics._backtest import (
    ECB_SEGMENT_EDGES,
    ECB_SEGMENT_LABELS,
    Alternative,
    BacktestTResult,
    backtest_t_test_from_sums,
    loss_shortfall_from_sums,
    mean_absolute_deviation_from_sums,
)
from riskmon.metrics._binning import Binning
from riskmon.metrics._gauc import GeneralisedAUCResult, generalised_auc
from riskmon.metrics._target_sums import TargetTable
from riskmon.metrics._validation import FloatArray


def ecb_segment_binning() -> Binning:
    """The ECB's 12 segments as a :class:`Binning`: [0, 5 %), [5 %, 10 %), …, ≥ 100 % (a
    negative value in the first, NULL in the missing bin after the 12th).

    A binning's bins are right-closed, the ECB's left-closed: each edge is the largest double
    below the ECB's, so x ≤ edge exactly when x < the ECB's edge, in numpy and in SQL alike.

    Examples
    --------
    >>> ecb_segment_binning().assign([-0.2, 0.05, 0.0999, 0.1, 1.0, None]).tolist()
    [0, 1, 1, 2, 11, 12]
    """
    edges = tuple(float(np.nextafter(e, -np.inf)) for e in ECB_SEGMENT_EDGES)
    return Binning("numeric", edges=edges)


@dataclass(frozen=True, eq=False)
class BacktestTable:
    """Per estimated class (``labels``), numpy arrays of one length:

    ``facilities`` M (closed and open), ``closed`` N (the realised value known), over the
    closed ones ``estimate`` = ΣE, ``realised`` = ΣR, ``d2`` = Σd², ``abs_d`` = Σ|d|
    (d = R − E), ``ead`` = Σ EAD, ``ead_estimate`` = Σ EAD·E, ``ead_realised`` = Σ EAD·R,
    ``ead_abs_d`` = Σ EAD·|d| (without an exposure, every EAD is 1), ``closed_without_downturn``
    and ``estimate_without_downturn``, the closed facilities that have an estimate without its
    downturn component and its sum (the estimate's own where the model gives none); and
    ``contingency``, the closed facilities by estimated class (rows) and realised class
    (columns).

    Examples
    --------
    Four facilities in two classes, the fourth's recovery still open:

    >>> keys = [0 * 3 + 0, 0 * 3 + 1, 1 * 3 + 1, 1 * 3 + 2]  # class * 3 + realised class
    >>> joint = TargetTable.from_arrays([0.1, 0.5, 0.9, None], [0.2, 0.3, 0.6, 0.7], keys,
    ...                                 n_bins=6, sample_weight=[100, 200, 100, 100])
    >>> t = BacktestTable.from_joint(joint, labels=["A", "B"], n_realised=3)
    >>> t.facilities.tolist(), t.closed.tolist(), t.contingency.tolist()
    ([2.0, 2.0], [2.0, 1.0], [[1.0, 1.0], [0.0, 1.0]])
    >>> [round(v, 6) for v in t.mean_difference()], round(t.portfolio().mad(), 6)
    ([0.05, 0.3], 0.2)
    """

    labels: Sequence[str]
    facilities: FloatArray
    closed: FloatArray
    estimate: FloatArray
    realised: FloatArray
    d2: FloatArray
    abs_d: FloatArray
    ead: FloatArray
    ead_estimate: FloatArray
    ead_realised: FloatArray
    ead_abs_d: FloatArray
    closed_without_downturn: FloatArray
    estimate_without_downturn: FloatArray
    contingency: FloatArray

    @classmethod
    def from_joint(
        cls, joint: TargetTable, *, labels: Sequence[str], n_realised: int
    ) -> BacktestTable:
        """From a joint table on keys ``estimated class * n_realised + realised class``, its
        last realised class the open recoveries (the realised value's missing bin); the
        estimated classes past ``labels`` (a binning's unseen and missing bins, empty where
        every facility has an estimate) are left out."""
        k = len(labels)

        def rows(values: FloatArray) -> FloatArray:
            summed: FloatArray = np.asarray(values, np.float64).reshape(-1, n_realised)[:k].sum(1)
            return summed

        cells = np.asarray(joint.n_y, np.float64).reshape(-1, n_realised)[:k, :-1]
        return cls._of(joint, labels, rows, cells)

    @classmethod
    def from_bins(cls, table: TargetTable, *, labels: Sequence[str]) -> BacktestTable:
        """From a table of moments per estimated class (a grade column's bins: its grades, then
        its missing and unseen bins), without a contingency table (the gAUC is the joint
        table's)."""

        def rows(values: FloatArray) -> FloatArray:
            kept: FloatArray = np.array(values[: len(labels)], dtype=np.float64)
            return kept

        return cls._of(table, labels, rows, np.zeros((len(labels), 0)))

    @classmethod
    def _of(
        cls,
        table: TargetTable,
        labels: Sequence[str],
        rows: Callable[[FloatArray], FloatArray],
        contingency: FloatArray,
    ) -> BacktestTable:
        return cls(
            labels=list(labels),
            facilities=rows(table.n),
            closed=rows(table.n_y),
            estimate=rows(table.s),
            realised=rows(table.y),
            d2=rows(table.d2),
            abs_d=rows(table.ad),
            ead=rows(table.w_y),
            ead_estimate=rows(table.ws),
            ead_realised=rows(table.wy),
            ead_abs_d=rows(table.wad),
            closed_without_downturn=rows(table.n_u),
            estimate_without_downturn=rows(table.u),
            contingency=contingency,
        )

    def portfolio(self) -> BacktestTable:
        """Every class summed into one row; the contingency table kept whole (the gAUC is the
        portfolio's)."""
        sums = {name: np.asarray([getattr(self, name).sum()]) for name in _ROW_SUMS}
        return BacktestTable(labels=["portfolio"], contingency=self.contingency, **sums)

    def mean_difference(self) -> list[float | None]:
        """d̄ per class: (ΣR − ΣE) / N; None without a closed facility."""
        return _ratios(self.realised - self.estimate, self.closed)

    def mean_estimate(self) -> list[float | None]:
        return _ratios(self.estimate, self.closed)

    def mean_realised(self) -> list[float | None]:
        return _ratios(self.realised, self.closed)

    def mean_estimate_without_downturn(self) -> list[float | None]:
        """The mean estimate without its downturn component of the closed facilities that
        have one; None where none has."""
        return _ratios(self.estimate_without_downturn, self.closed_without_downturn)

    def exposure_weighted_realised(self) -> list[float | None]:
        """Σ EAD·R / Σ EAD per class (a CCF's exposure-weighted mean); None without exposure."""
        return _ratios(self.ead_realised, self.ead)

    def t_test(self, index: int = 0, *, alternative: Alternative = "greater") -> BacktestTResult:
        """The back-testing t-test of one class (:func:`backtest_t_test_from_sums`)."""
        n = float(self.closed[index])
        sum_d = float(self.realised[index] - self.estimate[index])
        return backtest_t_test_from_sums(n, sum_d, float(self.d2[index]), alternative=alternative)

    def loss_shortfall(self, index: int = 0) -> float:
        return loss_shortfall_from_sums(
            float(self.ead_estimate[index]), float(self.ead_realised[index])
        )

    def mad(self, index: int = 0) -> float:
        return mean_absolute_deviation_from_sums(
            float(self.ead_abs_d[index]), float(self.ead[index])
        )

    def gauc(self) -> GeneralisedAUCResult:
        """The generalised AUC of the contingency table."""
        return generalised_auc(self.contingency)


def _ratios(numerator: FloatArray, denominator: FloatArray) -> list[float | None]:
    return [
        float(top / bottom) if bottom > 0 else None
        for top, bottom in zip(numerator.tolist(), denominator.tolist(), strict=True)
    ]


_ROW_SUMS = (
    "facilities",
    "closed",
    "estimate",
    "realised",
    "d2",
    "abs_d",
    "ead",
    "ead_estimate",
    "ead_realised",
    "ead_abs_d",
    "closed_without_downturn",
    "estimate_without_downturn",
)
#: the realised classes' labels (the ECB segments, then the open recoveries)
REALISED_CLASS_LABELS: tuple[str, ...] = (*ECB_SEGMENT_LABELS, "open")
