"""Expected cost, cost-optimal cutoff and the Drummond–Holte cost curve."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    CountTable,
    confusion_metrics,
    cost_curve,
    cost_curve_from_counts,
    cost_optimal_cutoff,
    cost_optimal_cutoff_from_counts,
    expected_cost,
    expected_cost_from_counts,
)

from . import samples

TOL = 1e-10


#: labels, heavily tied scores that separate somewhat, and optional weights
tied_sample = partial(samples.tied_sample, bad_rate=0.2, shift=1.2)


@pytest.mark.parametrize("weighted", [False, True])
def test_expected_cost_from_its_definition(weighted):
    y, s, w = tied_sample(0, 500, weighted=weighted)
    weights = np.ones(y.size) if w is None else w
    for cutoff in (-0.5, 0.3, 1.1):
        rejected = s >= cutoff
        fn = weights[(y == 1) & ~rejected].sum()
        fp = weights[(y == 0) & rejected].sum()
        cost = expected_cost(y, s, cutoff=cutoff, cost_fn=5.0, cost_fp=1.0, sample_weight=w)
        assert cost == pytest.approx((5 * fn + fp) / weights.sum(), abs=TOL)
        # normalised: FNR·PC + FPR·(1 − PC)
        m = confusion_metrics(y, s, cutoff=cutoff, sample_weight=w)
        p = weights[y == 1].sum() / weights.sum()
        pc = p * 5 / (p * 5 + (1 - p) * 1)
        nec = expected_cost(
            y, s, cutoff=cutoff, cost_fn=5.0, cost_fp=1.0, sample_weight=w, normalized=True
        )
        assert nec == pytest.approx(m.fnr * pc + m.fpr * (1 - pc), abs=TOL)


def test_expected_cost_golden():
    # cutoff 0.5 rejects only the 0.8 bad: FN = 1 (the 0.4 bad), FP = 0 -> 5·1/4
    y, s = [0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]
    assert expected_cost(y, s, cutoff=0.5, cost_fn=5, cost_fp=1) == 1.25
    table = CountTable.from_scores(y, s)
    assert expected_cost_from_counts(table, cutoff=0.5, cost_fn=5, cost_fp=1) == 1.25


def test_cost_optimal_cutoff_is_the_brute_force_minimum():
    y, s, w = tied_sample(1, 400, weighted=True)
    best = cost_optimal_cutoff(y, s, cost_fn=4.0, cost_fp=1.0, sample_weight=w)
    candidates = np.r_[np.inf, np.unique(s)]
    costs = [
        expected_cost(y, s, cutoff=c, cost_fn=4.0, cost_fp=1.0, sample_weight=w) for c in candidates
    ]
    assert best.expected_cost == pytest.approx(min(costs), abs=TOL)
    assert best.expected_cost == pytest.approx(
        expected_cost(y, s, cutoff=best.cutoff, cost_fn=4.0, cost_fp=1.0, sample_weight=w),
        abs=TOL,
    )
    table = CountTable.from_scores(y, s, sample_weight=w)
    assert cost_optimal_cutoff_from_counts(table, cost_fn=4.0, cost_fp=1.0) == best


def test_accepting_everyone_can_be_optimal():
    # missed bads are cheap and every reject takes a good along: accepting all is best
    r = cost_optimal_cutoff([0, 0, 1, 1], [0.1, 0.8, 0.4, 0.8], cost_fn=0.1, cost_fp=10)
    assert r.cutoff == np.inf
    assert r.expected_cost == pytest.approx(0.1 * 2 / 4)
    points = cost_optimal_cutoff(
        [0, 0, 1, 1], [700, 500, 600, 500], cost_fn=0.1, cost_fp=10, higher_is_riskier=False
    )
    assert points.cutoff == -np.inf


@pytest.mark.parametrize("weighted", [False, True])
def test_cost_curve_is_the_lower_envelope_of_all_cutoff_lines(weighted):
    y, s, w = tied_sample(2, 600, weighted=weighted)
    weights = np.ones(y.size) if w is None else w
    curve = cost_curve(y, s, sample_weight=w)
    # brute force: every cutoff's line, and "accept all" (FPR 0, FNR 1)
    fpr = [0.0]
    fnr = [1.0]
    for c in np.unique(s):
        rejected = s >= c
        fpr.append(weights[(y == 0) & rejected].sum() / weights[y == 0].sum())
        fnr.append(weights[(y == 1) & ~rejected].sum() / weights[y == 1].sum())
    grid = np.linspace(0, 1, 2001)
    lines = np.asarray(fpr)[:, None] * (1 - grid) + np.asarray(fnr)[:, None] * grid
    envelope = lines.min(axis=0)
    on_curve = np.interp(grid, curve.probability_cost, curve.normalized_expected_cost)
    np.testing.assert_allclose(on_curve, envelope, atol=TOL)
    # the area is exact: compare with the envelope integrated on its own corners plus a grid
    both = np.union1d(grid, curve.probability_cost)
    dense = (np.asarray(fpr)[:, None] * (1 - both) + np.asarray(fnr)[:, None] * both).min(0)
    assert curve.area == pytest.approx(np.trapezoid(dense, both), abs=1e-9)
    assert np.all(np.diff(curve.probability_cost) > 0)
    assert curve.cutoffs.size == curve.probability_cost.size - 1


def test_cost_curve_golden_extremes():
    # all tied: only "accept all" (0, 1) and "reject all" (1, 0): min(PC, 1 − PC), area 1/4
    tied = cost_curve([0, 1, 0, 1], [3, 3, 3, 3])
    assert tied.probability_cost.tolist() == [0.0, 0.5, 1.0]
    assert tied.normalized_expected_cost.tolist() == [0.0, 0.5, 0.0]
    assert float(tied) == 0.25
    # perfect separation: one cutoff with FPR = FNR = 0, the curve is 0 everywhere
    perfect = cost_curve([0, 0, 1, 1], [1, 2, 3, 4])
    assert perfect.area == 0.0
    assert perfect.cutoffs.tolist() == [3.0]
    table = CountTable.from_scores([0, 0, 1, 1], [1, 2, 3, 4])
    assert cost_curve_from_counts(table).area == 0.0


def test_degenerate_and_malformed():
    with pytest.warns(DegenerateDataWarning, match="cost curve is not available.*no bads"):
        assert np.isnan(cost_curve([0, 0], [1, 2]).area)
    with pytest.warns(DegenerateDataWarning, match="cost-optimal cutoff.*no goods"):
        assert np.isnan(cost_optimal_cutoff([1, 1], [1, 2], cost_fn=1, cost_fp=1).cutoff)
    with pytest.warns(DegenerateDataWarning, match="no rows"):
        assert np.isnan(expected_cost([], [], cutoff=1, cost_fn=1, cost_fp=1))
    with pytest.raises(InvalidDataError, match="Expected finite non-negative costs"):
        expected_cost([0, 1], [1, 2], cutoff=1, cost_fn=-1, cost_fp=1)
    with pytest.raises(InvalidDataError, match="not both zero"):
        expected_cost([0, 1], [1, 2], cutoff=1, cost_fn=0, cost_fp=0)
