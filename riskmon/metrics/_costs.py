"""Cost-sensitive evaluation: expected cost at a cutoff, the cost-optimal cutoff, and the
cost curve of Drummond & Holte.

c_FN is the cost of accepting a bad (a missed bad), c_FP the cost of rejecting a good. A row
is predicted bad (rejected) when its score is on the risky side of the cutoff, inclusive
(``score >= cutoff`` when higher is riskier, ``score <= cutoff`` for scorecard points).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._ranking import Ranked, rank
from riskmon.metrics._validation import FloatArray, not_available


def _check_costs(cost_fn: Any, cost_fp: Any) -> tuple[float, float]:
    try:
        c_fn, c_fp = float(cost_fn), float(cost_fp)
    except (TypeError, ValueError):
        raise InvalidDataError(
            f"Expected numeric costs, got cost_fn={cost_fn!r}, cost_fp={cost_fp!r}"
        ) from None
    if not (np.isfinite([c_fn, c_fp]).all() and c_fn >= 0 and c_fp >= 0 and c_fn + c_fp > 0):
        raise InvalidDataError(
            "Expected finite non-negative costs, not both zero, "
            f"got cost_fn={cost_fn!r}, cost_fp={cost_fp!r}"
        )
    return c_fn, c_fp


def _expected_cost(r: Ranked, cutoff: float, c_fn: float, c_fp: float, normalized: bool) -> float:
    total = r.total
    if total <= 0:
        return not_available("Expected cost is not available: the data has no rows", stacklevel=4)
    k = r.predicted_bad(cutoff)
    fn = r.total_bads - float(r.bads[:k].sum())
    fp = float(r.goods[:k].sum())
    cost = (c_fn * fn + c_fp * fp) / total
    if not normalized:
        return cost
    p = r.total_bads / total
    worst = p * c_fn + (1 - p) * c_fp
    if worst <= 0:
        return not_available(
            "Normalised expected cost is not available: every row is of the class whose "
            "misclassification costs nothing",
            stacklevel=4,
        )
    return cost / worst


def expected_cost_from_counts(
    table: CountTable,
    *,
    cutoff: float,
    cost_fn: float,
    cost_fp: float,
    higher_is_riskier: bool = True,
    normalized: bool = False,
) -> float:
    """Expected cost of a labeled score table at a cutoff; see :func:`expected_cost`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> expected_cost_from_counts(t, cutoff=0.5, cost_fn=5, cost_fp=1)
    1.25
    """
    c_fn, c_fp = _check_costs(cost_fn, cost_fp)
    return _expected_cost(
        rank(table, higher_is_riskier=higher_is_riskier), cutoff, c_fn, c_fp, normalized
    )


def expected_cost(
    y_true: Any,
    y_score: Any,
    *,
    cutoff: float,
    cost_fn: float,
    cost_fp: float,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
    normalized: bool = False,
) -> float:
    """Cost-sensitive error rate at a cutoff: (c_FN·FN + c_FP·FP) / N, the cost per row.

    With ``normalized=True``, the normalised expected cost NEC = FNR·PC + FPR·(1 − PC),
    with probability cost PC = p·c_FN / (p·c_FN + (1 − p)·c_FP) and p the bad rate; this is
    the cost per row divided by its largest value over all classifiers, p·c_FN + (1−p)·c_FP.

    References
    ----------
    Drummond, C. & Holte, R. C. (2006). Cost curves: an improved method for visualizing
    classifier performance. Machine Learning 65(1), 95–130.

    Examples
    --------
    >>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]
    >>> expected_cost(y, s, cutoff=0.4, cost_fn=5, cost_fp=1)
    0.25
    >>> expected_cost(y, s, cutoff=0.4, cost_fn=5, cost_fp=1, normalized=True)
    0.08333333333333333
    """
    c_fn, c_fp = _check_costs(cost_fn, cost_fp)
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _expected_cost(
        rank(table, higher_is_riskier=higher_is_riskier), cutoff, c_fn, c_fp, normalized
    )


@dataclass(frozen=True)
class CostOptimalCutoff:
    """The cutoff with the lowest expected cost per row, and that cost.

    ``cutoff`` is +inf (−inf for scorecard points) when accepting everyone is cheapest.
    ``float(result)`` gives the cutoff.
    """

    cutoff: float
    expected_cost: float
    fnr: float
    fpr: float

    def __float__(self) -> float:
        return self.cutoff


def _rates(r: Ranked) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(FPR, FNR, cutoff) for "accept all" and then each distinct score as cutoff."""
    fpr = np.r_[0.0, np.cumsum(r.goods)] / r.total_goods
    fnr = 1.0 - np.r_[0.0, np.cumsum(r.bads)] / r.total_bads
    start = np.inf if r.higher_is_riskier else -np.inf
    return fpr, fnr, np.r_[start, r.scores]


def _degenerate(r: Ranked, figure: str) -> bool:
    if r.total_bads <= 0 or r.total_goods <= 0:
        reason = "no bads" if r.total_bads <= 0 else "no goods"
        not_available(f"The {figure} is not available: the data has {reason}", stacklevel=5)
        return True
    return False


def _optimal(r: Ranked, c_fn: float, c_fp: float) -> CostOptimalCutoff:
    nan = float("nan")
    if _degenerate(r, "cost-optimal cutoff"):
        return CostOptimalCutoff(nan, nan, nan, nan)
    fpr, fnr, cutoffs = _rates(r)
    cost = (c_fn * fnr * r.total_bads + c_fp * fpr * r.total_goods) / r.total
    best = int(np.argmin(cost))  # first minimum: the fewest rejections among equal costs
    return CostOptimalCutoff(
        float(cutoffs[best]), float(cost[best]), float(fnr[best]), float(fpr[best])
    )


def cost_optimal_cutoff_from_counts(
    table: CountTable, *, cost_fn: float, cost_fp: float, higher_is_riskier: bool = True
) -> CostOptimalCutoff:
    """Cost-optimal cutoff of a labeled score table; see :func:`cost_optimal_cutoff`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> cost_optimal_cutoff_from_counts(t, cost_fn=5, cost_fp=1).cutoff
    0.4
    """
    c_fn, c_fp = _check_costs(cost_fn, cost_fp)
    return _optimal(rank(table, higher_is_riskier=higher_is_riskier), c_fn, c_fp)


def cost_optimal_cutoff(
    y_true: Any,
    y_score: Any,
    *,
    cost_fn: float,
    cost_fp: float,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
) -> CostOptimalCutoff:
    """The cutoff (a distinct score, inclusive, or "accept all") of least expected cost.

    Minimises (c_FN·FN + c_FP·FP) / N over every distinct score and the cutoff that rejects
    nobody; among equal costs the one rejecting the fewest rows wins.

    Examples
    --------
    >>> r = cost_optimal_cutoff([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], cost_fn=1, cost_fp=5)
    >>> r.cutoff, r.expected_cost
    (0.8, 0.25)
    """
    c_fn, c_fp = _check_costs(cost_fn, cost_fp)
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _optimal(rank(table, higher_is_riskier=higher_is_riskier), c_fn, c_fp)


@dataclass(frozen=True)
class CostCurve:
    """Lower envelope of the normalised-expected-cost lines of every cutoff.

    ``probability_cost`` and ``normalized_expected_cost`` are the corners of the piecewise
    linear envelope, PC from 0 to 1; ``cutoffs[i]`` is the cutoff optimal between corner i
    and corner i+1; ``area`` is the area under the envelope (the expected cost over all
    operating conditions, PC uniform). ``float(result)`` gives the area.
    """

    probability_cost: FloatArray
    normalized_expected_cost: FloatArray
    cutoffs: FloatArray
    area: float

    def __float__(self) -> float:
        return self.area


def _cost_curve(r: Ranked) -> CostCurve:
    nan = float("nan")
    if _degenerate(r, "cost curve"):
        empty = np.zeros(0)
        return CostCurve(empty, empty, empty, nan)
    fpr, fnr, cutoffs = _rates(r)
    tpr = 1.0 - fnr
    # a cutoff's line NEC(PC) = FPR·(1 − PC) + FNR·PC is on the envelope iff its ROC point
    # is a vertex of the ROC convex hull; walk the upper hull left to right
    hull: list[int] = []
    for k in range(fpr.size):
        if hull and fpr[k] == fpr[hull[-1]]:
            hull.pop()  # same FPR, TPR at least as high: the earlier point is dominated
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (fpr[b] - fpr[a]) * (tpr[k] - tpr[a]) - (tpr[b] - tpr[a]) * (fpr[k] - fpr[a])
            if cross < 0:
                break
            hull.pop()
        if not hull or tpr[k] > tpr[hull[-1]]:
            hull.append(k)
    v = np.asarray(hull, dtype=np.int64)
    d_fpr, d_tpr = np.diff(fpr[v]), np.diff(tpr[v])
    corners = d_fpr / (d_fpr + d_tpr)  # where the lines of neighbouring vertices cross
    pc = np.r_[0.0, corners, 1.0]
    nec = np.r_[fpr[v[0]], fpr[v[1:]] * (1 - corners) + fnr[v[1:]] * corners, fnr[v[-1]]]
    area = float(np.sum(np.diff(pc) * (nec[1:] + nec[:-1]) / 2))
    return CostCurve(pc, nec, cutoffs[v], area)


def cost_curve_from_counts(table: CountTable, *, higher_is_riskier: bool = True) -> CostCurve:
    """Cost curve of a labeled score table; see :func:`cost_curve`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 1], [0.5, 0.5])
    >>> cost_curve_from_counts(t).area
    0.25
    """
    return _cost_curve(rank(table, higher_is_riskier=higher_is_riskier))


def cost_curve(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, higher_is_riskier: bool = True
) -> CostCurve:
    """Cost curve: the lower envelope over all cutoffs of NEC(PC) = FNR·PC + FPR·(1 − PC).

    Each cutoff (every distinct score, inclusive, plus "accept all") is a line from
    (0, FPR) to (1, FNR); the envelope is piecewise linear with one piece per vertex of the
    ROC convex hull, so its area is exact. A useless model's curve is min(PC, 1 − PC), of
    area 1/4; a perfect model's is 0.

    References
    ----------
    Drummond, C. & Holte, R. C. (2006). Cost curves: an improved method for visualizing
    classifier performance. Machine Learning 65(1), 95–130.

    Examples
    --------
    >>> c = cost_curve([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> c.probability_cost.tolist(), c.normalized_expected_cost.tolist(), c.area
    ([0.0, 0.5, 1.0], [0.0, 0.25, 0.0], 0.125)
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _cost_curve(rank(table, higher_is_riskier=higher_is_riskier))
