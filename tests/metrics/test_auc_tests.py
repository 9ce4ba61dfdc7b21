"""The ECB AUC test and DeLong's paired test, against a brute-force DeLong (1988)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import roc_auc_score

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    CountTable,
    auc_test,
    auc_test_from_counts,
    delong_test,
    delong_test_from_counts,
)

from . import samples


def structural_components(y, s):
    """DeLong's V10 (one per bad) and V01 (one per good) by comparing every pair, O(B·G)."""
    bad, good = s[y == 1], s[y == 0]
    psi = (bad[:, None] > good[None, :]) + 0.5 * (bad[:, None] == good[None, :])
    return psi.mean(axis=1), psi.mean(axis=0)


def delong_brute_force(y, a, b, level=0.95):
    """DeLong, DeLong & Clarke-Pearson (1988): AUCs, S = S10/n + S01/m from the covariance
    matrices of the structural components, z and the interval of AUC_a − AUC_b."""
    v10 = np.array([structural_components(y, s)[0] for s in (a, b)])
    v01 = np.array([structural_components(y, s)[1] for s in (a, b)])
    aucs = v10.mean(axis=1)
    s = np.cov(v10) / v10.shape[1] + np.cov(v01) / v01.shape[1]
    contrast = np.array([1.0, -1.0])
    se = math.sqrt(contrast @ s @ contrast)
    diff = aucs[0] - aucs[1]
    z = diff / se
    half = stats.norm.ppf(0.5 + level / 2) * se
    return aucs, diff, se, z, 2 * stats.norm.sf(abs(z)), (diff - half, diff + half)


def two_scores(seed, n, *, decimals=1, same_power=False):
    """Labels and two correlated, tied scores of the same loans."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    common = rng.normal(size=n)
    a = np.round(common + 0.9 * y + 0.5 * rng.normal(size=n), decimals)
    shift = 0.9 if same_power else 0.5
    b = np.round(common + shift * y + 0.5 * rng.normal(size=n), decimals)
    return y, a, b


# --------------------------------------------------------------------------- ECB AUC test
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("initial_auc_se", [None, 0.02])
def test_auc_test_matches_brute_force_delong(seed, initial_auc_se):
    y, s, _ = samples.tied_sample(seed, 400, bad_rate=0.3, shift=0.8)
    v10, v01 = structural_components(y, s)
    auc = v10.mean()
    se = math.sqrt(v10.var(ddof=1) / v10.size + v01.var(ddof=1) / v01.size)
    denominator = math.sqrt(se**2 + (initial_auc_se or 0) ** 2)
    statistic = (0.78 - auc) / denominator
    r = auc_test(y, s, initial_auc=0.78, initial_auc_se=initial_auc_se)
    assert r.auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert r.std_error == pytest.approx(se, rel=1e-10)
    assert r.statistic == pytest.approx(statistic, rel=1e-9)
    assert r.pvalue == pytest.approx(stats.norm.sf(statistic), rel=1e-9)
    assert (r.initial_auc, r.initial_auc_se) == (0.78, initial_auc_se)
    assert float(r) == r.statistic


def test_auc_test_hand_computed():
    # AUC 0.875, DeLong variance (0.25²/1 ... ) = 1/32 (see roc_auc); S = 0.025 / √(1/32)
    r = auc_test([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], initial_auc=0.9)
    assert r.auc == 0.875
    assert r.statistic == pytest.approx(0.025 * math.sqrt(32))
    assert r.pvalue == pytest.approx(stats.norm.sf(0.025 * math.sqrt(32)))


def test_auc_test_from_counts_and_orientation_agree_with_the_arrays():
    y, s, w = samples.tied_sample(3, 600, bad_rate=0.2, shift=0.6, weighted=True)
    table = CountTable.from_scores(y, s, sample_weight=w)
    by_rows = auc_test(y, s, initial_auc=0.75, sample_weight=w)
    assert auc_test_from_counts(table, initial_auc=0.75) == by_rows
    points = auc_test(y, -s, initial_auc=0.75, sample_weight=w, higher_is_riskier=False)
    assert points.statistic == pytest.approx(by_rows.statistic, rel=1e-12)


def test_a_fallen_auc_is_significant_and_a_risen_one_is_not():
    y, s, _ = samples.tied_sample(1, 3000, bad_rate=0.3, shift=0.5, decimals=3)
    auc = auc_test(y, s, initial_auc=0.5).auc
    assert auc_test(y, s, initial_auc=auc + 0.1).pvalue < 1e-6
    assert auc_test(y, s, initial_auc=auc - 0.1).pvalue > 1 - 1e-6


def test_auc_test_not_available_when_the_auc_is_not():
    with pytest.warns(DegenerateDataWarning, match="no bads"):
        r = auc_test([0, 0, 0], [0.1, 0.2, 0.3], initial_auc=0.7)
    assert math.isnan(r.statistic)
    assert math.isnan(r.pvalue)


def test_auc_test_not_available_with_a_zero_standard_error():
    with pytest.warns(DegenerateDataWarning, match="standard error is 0"):
        r = auc_test([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9], initial_auc=0.8)
    assert r.auc == 1.0
    assert math.isnan(r.pvalue)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"initial_auc": 1.2}, r"Expected initial_auc in \[0, 1\], got 1.2"),
        ({"initial_auc": 0.7, "initial_auc_se": -0.1}, r"initial_auc_se >= 0, got -0.1"),
        ({"initial_auc": 0.7, "initial_auc_se": float("nan")}, r"initial_auc_se >= 0, got nan"),
    ],
)
def test_auc_test_bad_options_are_named(options, message):
    with pytest.raises(InvalidDataError, match=message):
        auc_test([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], **options)


# --------------------------------------------------------------------------- DeLong paired
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("decimals", [0, 1, 3])
def test_delong_matches_brute_force(seed, decimals):
    y, a, b = two_scores(seed, [60, 300, 900][seed % 3], decimals=decimals)
    aucs, diff, se, z, pvalue, interval = delong_brute_force(y, a, b, level=0.9)
    r = delong_test(y, a, b, confidence_level=0.9)
    assert (r.auc_a, r.auc_b) == pytest.approx(
        (roc_auc_score(y, a), roc_auc_score(y, b)), abs=1e-12
    )
    assert (r.auc_a, r.auc_b) == pytest.approx(tuple(aucs), abs=1e-12)
    assert r.difference == pytest.approx(diff, abs=1e-12)
    assert r.std_error == pytest.approx(se, rel=1e-9)
    assert r.statistic == pytest.approx(z, rel=1e-9)
    assert r.pvalue == pytest.approx(pvalue, rel=1e-9)
    assert r.interval == pytest.approx(interval, rel=1e-9)
    assert r.confidence_level == 0.9
    assert float(r) == r.statistic


def assert_same(r, s):
    """The same figures up to rounding (the two forms add the same counts in other orders)."""
    for name in ("statistic", "pvalue", "difference", "std_error", "auc_a", "auc_b"):
        expected = pytest.approx(getattr(s, name), rel=1e-12, abs=1e-15, nan_ok=True)
        assert getattr(r, name) == expected, name
    assert r.interval == pytest.approx(s.interval, rel=1e-12, abs=1e-15, nan_ok=True)


def joint_table(y, a, b):
    """goods[i, j], bads[i, j] over the distinct values of a (rows) and of b (columns)."""
    ua, ub = np.unique(a), np.unique(b)
    goods = np.zeros((ua.size, ub.size))
    bads = np.zeros((ua.size, ub.size))
    np.add.at(goods, (np.searchsorted(ua, a[y == 0]), np.searchsorted(ub, b[y == 0])), 1)
    np.add.at(bads, (np.searchsorted(ua, a[y == 1]), np.searchsorted(ub, b[y == 1])), 1)
    return goods, bads


@pytest.mark.parametrize("seed", range(4))
def test_delong_from_the_joint_table_of_distinct_values_equals_the_arrays(seed):
    y, a, b = two_scores(seed, 800, decimals=1)
    assert_same(delong_test_from_counts(*joint_table(y, a, b)), delong_test(y, a, b))


def test_delong_on_binned_scores_treats_a_bin_as_a_tie():
    y, a, b = two_scores(8, 1000, decimals=4)
    bin_a = np.digitize(a, np.quantile(a, [0.2, 0.4, 0.6, 0.8]))
    bin_b = np.digitize(b, np.quantile(b, [0.25, 0.5, 0.75]))
    goods = np.zeros((5, 4))
    bads = np.zeros((5, 4))
    np.add.at(goods, (bin_a[y == 0], bin_b[y == 0]), 1)
    np.add.at(bads, (bin_a[y == 1], bin_b[y == 1]), 1)
    _, diff, se, z, _, _ = delong_brute_force(y, bin_a.astype(float), bin_b.astype(float))
    r = delong_test_from_counts(goods, bads)
    assert (r.difference, r.std_error, r.statistic) == pytest.approx((diff, se, z), rel=1e-9)


def test_delong_hand_computed_two_by_two():
    # score a: safe bin 4 goods 1 bad, risky bin 1 good 3 bads →
    #   AUC_a = (3·4 + ½·3·1 + ½·1·4) / 20 = 0.775; score b: (3·3 + ½·3·2 + ½·1·3) / 20 = 0.675
    r = delong_test_from_counts([[3, 1], [0, 1]], [[0, 1], [1, 2]])
    assert (r.auc_a, r.auc_b) == pytest.approx((0.775, 0.675))
    y = np.r_[np.zeros(5), np.ones(4)].astype(int)
    a = np.r_[0, 0, 0, 0, 1, 0, 1, 1, 1]
    b = np.r_[0, 0, 0, 1, 1, 1, 0, 1, 1]
    # the same loans as rows: goods (a, b) = (0,0)×3, (0,1), (1,1); bads (0,1), (1,0), (1,1)×2
    assert_same(delong_test(y, a, b), r)
    _, diff, se, _, _, _ = delong_brute_force(y, a.astype(float), b.astype(float))
    assert (r.difference, r.std_error) == pytest.approx((diff, se), rel=1e-12)


def test_delong_is_symmetric_and_orientation_free():
    y, a, b = two_scores(2, 500)
    ab, ba = delong_test(y, a, b), delong_test(y, b, a)
    assert ba.statistic == pytest.approx(-ab.statistic, rel=1e-12)
    assert ba.pvalue == pytest.approx(ab.pvalue, rel=1e-12)
    points = delong_test(y, -a, -b, higher_is_riskier=False)
    assert points.statistic == pytest.approx(ab.statistic, rel=1e-12)


def test_delong_rejects_at_the_nominal_rate_for_equally_good_scores():
    pvalues = [
        delong_test(*two_scores(seed, 300, decimals=3, same_power=True)).pvalue
        for seed in range(1500)
    ]
    assert 0.035 < np.mean(np.array(pvalues) < 0.05) < 0.065


def test_delong_of_scores_that_rank_alike_is_not_available():
    y, a, _ = two_scores(4, 200)
    with pytest.warns(DegenerateDataWarning, match="no variance"):
        r = delong_test(y, a, np.exp(a))  # the same order
    assert r.difference == 0
    assert math.isnan(r.statistic)
    assert math.isnan(r.pvalue)


def test_delong_without_bads_or_with_one_of_each():
    with pytest.warns(DegenerateDataWarning, match="no bads"):
        r = delong_test([0, 0, 0], [1, 2, 3], [3, 2, 1])
    assert math.isnan(r.auc_a)
    with pytest.warns(DegenerateDataWarning, match="at least two bads and two goods"):
        r = delong_test([0, 1, 0], [1, 2, 3], [3, 2, 1])
    assert r.auc_a == 0.5
    assert math.isnan(r.statistic)
    assert all(math.isnan(bound) for bound in r.interval)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 4), st.integers(0, 4)), min_size=4, max_size=60
    )
)
def test_delong_rows_and_joint_counts_agree(rows):
    y = np.array([r[0] for r in rows])
    a = np.array([r[1] for r in rows], dtype=float)
    b = np.array([r[2] for r in rows], dtype=float)
    goods = np.zeros((5, 5))
    bads = np.zeros((5, 5))
    np.add.at(goods, (a[y == 0].astype(int), b[y == 0].astype(int)), 1)
    np.add.at(bads, (a[y == 1].astype(int), b[y == 1].astype(int)), 1)
    with warnings.catch_warnings():  # scores may rank alike, or a table hold one bad
        warnings.simplefilter("ignore", DegenerateDataWarning)
        assert_same(delong_test_from_counts(goods, bads), delong_test(y, a, b))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: delong_test([0, 1], [0.1, 0.2], [0.3]), r"Expected 2 rows in 'y_score_b'"),
        (
            lambda: delong_test([0, 1], [0.1, np.nan], [0.3, 0.1]),
            r"finite numeric scores in 'y_score_a'",
        ),
        (lambda: delong_test([0, 3], [0.1, 0.2], [0.3, 0.1]), r"label values 0 and 1 in 'y_true'"),
        (lambda: delong_test_from_counts([1, 2], [1, 2]), r"Expected a 2-d array for 'goods'"),
        (lambda: delong_test_from_counts([[1, 2]], [[1], [2]]), r"Expected bads of shape \(1, 2\)"),
        (lambda: delong_test_from_counts([[1, -2]], [[1, 2]]), r"non-negative counts in 'goods'"),
        (
            lambda: delong_test_from_counts([[1, 2]], [[np.nan, 2]]),
            r"finite numeric counts in 'bads'",
        ),
        (
            lambda: delong_test([0, 1, 0, 1], [1, 2, 3, 4], [4, 3, 2, 1], confidence_level=1),
            r"Expected confidence_level in \(0, 1\), got 1",
        ),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(InvalidDataError, match=message):
        call()
