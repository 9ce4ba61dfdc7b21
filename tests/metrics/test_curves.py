"""ROC, KS, CAP and precision–recall curves, average precision and break-even point."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import sklearn.metrics as skm

from riskmon.errors import DegenerateDataWarning
from riskmon.metrics import (
    CountTable,
    average_precision,
    average_precision_from_counts,
    break_even_point,
    break_even_point_from_counts,
    cap_curve,
    gini,
    ks_curve,
    ks_statistic,
    precision_recall_curve,
    precision_recall_curve_from_counts,
    roc_curve,
    roc_curve_from_counts,
)

from . import samples

TOL = 1e-10


#: labels, heavily tied scores that separate somewhat, and optional weights
tied_sample = partial(samples.tied_sample, bad_rate=0.25, shift=1.0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("weighted", [False, True])
def test_roc_curve_matches_sklearn(seed, weighted):
    y, s, w = tied_sample(seed, 700, weighted=weighted)
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w)
    ref_fpr, ref_tpr, ref_thr = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr, rtol=0, atol=TOL)
    np.testing.assert_allclose(tpr, ref_tpr, rtol=0, atol=TOL)
    np.testing.assert_array_equal(thr, ref_thr)


def test_roc_curve_for_scorecard_points_reads_in_points():
    y, s, _ = tied_sample(1, 300)
    fpr, tpr, thr = roc_curve(y, -s, higher_is_riskier=False)
    ref_fpr, ref_tpr, ref_thr = skm.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr, atol=TOL)
    np.testing.assert_allclose(tpr, ref_tpr, atol=TOL)
    np.testing.assert_array_equal(thr, -ref_thr)  # starts at -inf: nothing predicted bad


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("weighted", [False, True])
def test_precision_recall_and_average_precision_match_sklearn(seed, weighted):
    y, s, w = tied_sample(seed, 900, weighted=weighted)
    p, r, t = precision_recall_curve(y, s, sample_weight=w)
    ref_p, ref_r, ref_t = skm.precision_recall_curve(y, s, sample_weight=w)
    np.testing.assert_allclose(p, ref_p, rtol=0, atol=TOL)
    np.testing.assert_allclose(r, ref_r, rtol=0, atol=TOL)
    np.testing.assert_array_equal(t, ref_t)
    expected = skm.average_precision_score(y, s, sample_weight=w)
    assert abs(average_precision(y, s, sample_weight=w) - expected) < TOL


def test_average_precision_golden():
    # riskiest first: 0.8 (bad) P=1, R=1/2; 0.4 tie (bad+good) P=2/3, R=1; 0.1 no gain.
    # AP = 1/2·1 + 1/2·2/3 = 5/6
    assert average_precision([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]) == pytest.approx(5 / 6)


def test_ks_curve_gap_is_ks_and_cdfs_end_at_one():
    y, s, w = tied_sample(4, 500, weighted=True)
    thr, f_good, f_bad = ks_curve(y, s, sample_weight=w)
    assert np.all(np.diff(thr) > 0)
    assert f_good[-1] == pytest.approx(1.0)
    assert f_bad[-1] == pytest.approx(1.0)
    ks = ks_statistic(y, s, sample_weight=w)
    assert np.max(np.abs(f_good - f_bad)) == pytest.approx(ks.statistic, abs=TOL)
    assert thr[np.argmax(np.abs(f_good - f_bad))] == ks.score


@pytest.mark.parametrize("weighted", [False, True])
def test_accuracy_ratio_from_cap_curve_equals_gini(weighted):
    y, s, w = tied_sample(7, 800, weighted=weighted)
    population, captured, _ = cap_curve(y, s, sample_weight=w)
    area = np.sum(np.diff(population) * (captured[1:] + captured[:-1]) / 2)
    weights = np.ones_like(s) if w is None else w
    p = weights[y == 1].sum() / weights.sum()
    accuracy_ratio = (area - 0.5) / ((1 - p) / 2)
    assert accuracy_ratio == pytest.approx(float(gini(y, s, sample_weight=w)), abs=TOL)


def test_cap_curve_golden():
    # riskiest first: 0.8 (1 bad), 0.4 (1 bad, 1 good), 0.1 (1 good) of 4 rows
    population, captured, thr = cap_curve([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    assert population.tolist() == [0.0, 0.25, 0.75, 1.0]
    assert captured.tolist() == [0.0, 0.5, 1.0, 1.0]
    assert thr.tolist() == [np.inf, 0.8, 0.4, 0.1]


def test_break_even_point_golden_and_definition():
    # 2 bads; riskiest first: 0.8 bad, 0.4 {bad, good}. Predicted weight 2 falls in the
    # middle of the tie group (1 -> 3 rows, TP 1 -> 2): TP(2) = 1.5, BEP = 1.5/2 = 0.75
    assert break_even_point([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]) == 0.75
    # without ties precision = recall at k = B rows exactly
    y, s, _ = tied_sample(2, 400)
    s = s + np.random.default_rng(0).random(s.size) * 1e-3  # break ties
    order = np.argsort(-s)
    b = int(y.sum())
    assert break_even_point(y, s) == pytest.approx(y[order[:b]].sum() / b, abs=TOL)


def test_from_counts_twins_agree():
    y, s, w = tied_sample(9, 300, weighted=True)
    table = CountTable.from_scores(y, s, sample_weight=w)
    for left, right in zip(
        roc_curve_from_counts(table), roc_curve(y, s, sample_weight=w), strict=True
    ):
        np.testing.assert_array_equal(left, right)
    for left, right in zip(
        precision_recall_curve_from_counts(table),
        precision_recall_curve(y, s, sample_weight=w),
        strict=True,
    ):
        np.testing.assert_array_equal(left, right)
    assert average_precision_from_counts(table) == average_precision(y, s, sample_weight=w)
    assert break_even_point_from_counts(table) == break_even_point(y, s, sample_weight=w)


def test_no_bads_or_no_goods_warn():
    with pytest.warns(DegenerateDataWarning, match="true positive rate.*no bads"):
        fpr, tpr, _ = roc_curve([0, 0, 0], [1, 2, 3])
    assert np.isnan(tpr).all()
    assert fpr.tolist() == [0.0, 1 / 3, 2 / 3, 1.0]
    with pytest.warns(DegenerateDataWarning, match="false positive rate.*no goods"):
        roc_curve([1, 1], [1, 2])
    with pytest.warns(DegenerateDataWarning, match="Average precision.*no bads"):
        assert np.isnan(average_precision([0, 0], [1, 2]))
    with pytest.warns(DegenerateDataWarning, match="break-even.*no bads"):
        assert np.isnan(break_even_point([0, 0], [1, 2]))
