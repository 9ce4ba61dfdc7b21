"""KS, AUC (with DeLong), Gini against scipy/sklearn and hand-computed values."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    CountTable,
    auc_test,
    gini,
    gini_from_counts,
    ks_statistic,
    ks_statistic_from_counts,
    roc_auc,
    roc_auc_from_counts,
)
from riskmon.metrics._discrimination import placements

from . import samples

TOL = 1e-10


#: labels, heavily tied scores that separate somewhat, and optional weights
tied_sample = partial(samples.tied_sample, bad_rate=0.3, shift=0.8, max_weight=5.0)


def delong_direct(y, s):
    """DeLong's standard error straight from its definition, O(B·G) (test-only reference)."""
    bad, good = s[y == 1], s[y == 0]
    psi = (bad[:, None] > good[None, :]) + 0.5 * (bad[:, None] == good[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), np.sqrt(v10.var(ddof=1) / bad.size + v01.var(ddof=1) / good.size)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("decimals", [0, 1, 3])
def test_ks_matches_scipy_statistic_pvalue_and_location(seed, decimals):
    y, s, _ = tied_sample(seed, [40, 300, 2500][seed % 3], decimals=decimals)
    ref = stats.ks_2samp(s[y == 1], s[y == 0])
    r = ks_statistic(y, s)
    assert abs(r.statistic - ref.statistic) < TOL
    assert abs(r.p_value - ref.pvalue) < TOL
    assert r.p_value_method == "exact"
    # the location is the same whenever the maximum is reached at a single threshold
    gaps = np.abs(
        np.searchsorted(np.sort(s[y == 1]), np.unique(s), side="right") / (y == 1).sum()
        - np.searchsorted(np.sort(s[y == 0]), np.unique(s), side="right") / (y == 0).sum()
    )
    if np.sum(np.isclose(gaps, gaps.max(), rtol=0, atol=1e-12)) == 1:
        assert r.score == ref.statistic_location
    assert r.p_value_conservative == (np.unique(s).size < s.size)


@pytest.mark.parametrize(
    ("n", "bad_rate", "shift"), [(12_000, 0.1, 0.05), (15_000, 0.8, 0.0), (30_000, 0.5, 0.1)]
)
def test_ks_asymptotic_pvalue_beyond_exact_limit(n, bad_rate, shift):
    rng = np.random.default_rng(n)
    y = (rng.random(n) < bad_rate).astype(int)
    s = rng.normal(size=n) + shift * y
    ref = stats.ks_2samp(s[y == 1], s[y == 0])
    r = ks_statistic(y, s)
    assert r.p_value_method == "asymptotic"
    assert abs(r.statistic - ref.statistic) < TOL
    assert abs(r.p_value - ref.pvalue) < TOL
    assert not r.p_value_conservative


def test_ks_exact_pvalue_for_unequal_and_equal_sizes():
    # unequal sizes use the rectangular lattice; equal sizes the square one in scipy
    for n_bad, n_good in [(7, 7), (5, 11), (50, 50), (120, 77), (1, 3)]:
        s = np.r_[np.arange(n_bad) * 0.37, np.arange(n_good) * 0.29 + 0.05]
        y = np.r_[np.ones(n_bad), np.zeros(n_good)]
        ref = stats.ks_2samp(s[y == 1], s[y == 0])
        r = ks_statistic(y, s)
        assert abs(r.p_value - ref.pvalue) < TOL, (n_bad, n_good)


def test_ks_weighted_equals_duplicated_rows_statistic():
    # integer weights give the same CDFs as duplicating rows; only n and m differ
    y, s, _ = tied_sample(3, 400)
    w = np.random.default_rng(0).integers(1, 4, y.size)
    weighted = ks_statistic(y, s, sample_weight=w)
    ref = stats.ks_2samp(np.repeat(s[y == 1], w[y == 1]), np.repeat(s[y == 0], w[y == 0]))
    assert abs(weighted.statistic - ref.statistic) < TOL
    # n and m are row counts, so the p-value is that of the unweighted sample sizes
    assert (weighted.n_bads, weighted.n_goods) == ((y == 1).sum(), (y == 0).sum())
    n, m = weighted.n_bads, weighted.n_goods
    assert weighted.critical_value == pytest.approx(1.358 * np.sqrt((n + m) / (n * m)))


def test_ks_golden_small_table():
    # bads at 0.4, 0.8; goods at 0.1, 0.4. F_good(0.1) = 1/2, F_bad(0.1) = 0 -> gap 1/2;
    # at 0.4 both CDFs move: F_good = 1, F_bad = 1/2 -> gap 1/2; first maximum at 0.1.
    # Exact p (n = m = 2, d = 1/2): of the C(4,2) = 6 interleavings, P(D >= 1/2) = 1.
    r = ks_statistic([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    assert (float(r), r.score, r.p_value) == (0.5, 0.1, 1.0)
    assert r.critical_value == pytest.approx(1.358)  # √((2+2)/(2·2)) = 1


def test_ks_scorecard_direction_reports_original_score():
    # points: lower is riskier. Bads at 500, 520; goods at 600, 650, 700.
    # Perfect separation; the cut is between 520 and 600: safe side is points >= 600.
    r = ks_statistic([1, 1, 0, 0, 0], [500, 520, 600, 650, 700], higher_is_riskier=False)
    assert r.statistic == 1.0
    assert r.score == 600.0
    same = ks_statistic([1, 1, 0, 0, 0], [500, 520, 600, 650, 700])
    assert same.statistic == 1.0
    assert same.score == 520.0


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("weighted", [False, True])
def test_auc_matches_sklearn(seed, weighted):
    y, s, w = tied_sample(seed, [30, 500, 5000, 20_000][seed % 4], weighted=weighted)
    expected = roc_auc_score(y, s, sample_weight=w)
    assert abs(roc_auc(y, s, sample_weight=w).auc - expected) < TOL
    assert abs(float(gini(y, s, sample_weight=w)) - (2 * expected - 1)) < TOL
    flipped = roc_auc(y, s, sample_weight=w, higher_is_riskier=False).auc
    assert abs(flipped - (1 - expected)) < TOL


@pytest.mark.parametrize("seed", range(10))
def test_delong_matches_direct_pairwise_computation(seed):
    y, s, _ = tied_sample(seed, 20 + 15 * seed, decimals=seed % 3)
    auc, se = delong_direct(y, s)
    r = roc_auc(y, s)
    assert abs(r.auc - auc) < TOL
    assert abs(r.std_error - se) < TOL
    z = stats.norm.ppf(0.975)
    assert r.ci_low == pytest.approx(max(0.0, auc - z * se), abs=TOL)
    assert r.ci_high == pytest.approx(min(1.0, auc + z * se), abs=TOL)
    g = gini(y, s, confidence_level=0.9)
    z90 = stats.norm.ppf(0.95)
    assert g.std_error == pytest.approx(2 * se, abs=TOL)
    assert g.ci_low == pytest.approx(2 * max(0.0, auc - z90 * se) - 1, abs=TOL)


def test_auc_golden_small_table():
    # pairs (bad, good): (0.4, 0.1) win, (0.4, 0.4) tie, (0.8, 0.1) win, (0.8, 0.4) win
    # AUC = (1 + 1/2 + 1 + 1) / 4 = 0.875. Placements: bads 0.75, 1; goods 1, 0.75;
    # S10 = S01 = 2·0.125² / 1 = 0.03125; s² = 0.03125/2 + 0.03125/2 -> s = √0.03125.
    r = roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    assert r.auc == 0.875
    assert r.std_error == pytest.approx(np.sqrt(0.03125), abs=1e-15)
    assert r.ci_high == 1.0  # clipped
    assert gini([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]).gini == 0.75


def test_weighted_delong_reduces_to_unweighted_with_unit_weights_and_scales():
    y, s, _ = tied_sample(11, 300)
    plain = roc_auc(y, s)
    ones = roc_auc(y, s, sample_weight=np.full(y.size, 7.0))
    assert ones.auc == pytest.approx(plain.auc, abs=TOL)
    assert ones.std_error == pytest.approx(plain.std_error, abs=TOL)


def test_from_counts_twins_on_group_by_rows():
    # rows of a GROUP BY score, label query: (score, label, row_count, weight_sum)
    rows = [(0.1, 0, 3, None), (0.4, 0, 1, None), (0.4, 1, 2, None), (0.8, 1, 2, None)]
    table = CountTable.from_rows(rows)
    y = [0, 0, 0, 0, 1, 1, 1, 1]
    s = [0.1, 0.1, 0.1, 0.4, 0.4, 0.4, 0.8, 0.8]
    assert ks_statistic_from_counts(table) == ks_statistic(y, s)
    assert roc_auc_from_counts(table) == roc_auc(y, s)
    assert gini_from_counts(table) == gini(y, s)


@pytest.mark.parametrize("function", [ks_statistic, roc_auc, gini])
@pytest.mark.parametrize(("y", "reason"), [([0, 0, 0], "no bads"), ([1, 1, 1], "no goods")])
def test_one_class_is_not_available(function, y, reason):
    with pytest.warns(DegenerateDataWarning, match=reason):
        result = function(y, [0.1, 0.2, 0.3])
    assert np.isnan(float(result))


def test_single_bad_gives_auc_but_no_delong_error():
    with pytest.warns(DegenerateDataWarning, match="at least two bads and two goods"):
        r = roc_auc([1, 0, 0], [0.9, 0.1, 0.2])
    assert r.auc == 1.0
    assert np.isnan(r.std_error)
    assert np.isnan(r.ci_low)


def test_zero_weight_bads_are_not_available():
    with pytest.warns(DegenerateDataWarning, match="no bads"):
        r = ks_statistic([0, 1, 0], [0.1, 0.5, 0.2], sample_weight=[1.0, 0.0, 2.0])
    assert np.isnan(r.statistic)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"y_true": [0, 2, 1], "y_score": [1, 2, 3]}, r"Expected label values 0 and 1.*\[2\]"),
        ({"y_true": [0, 1, 1], "y_score": [1, np.nan, 3]}, "Expected finite numeric scores"),
        ({"y_true": [0, 1, 1], "y_score": ["a", "b", "c"]}, "Expected numeric scores"),
        ({"y_true": [0, 1], "y_score": [1, 2, 3]}, "Expected 2 rows in 'y_score'"),
        (
            {"y_true": [0, 1, 1], "y_score": [1, 2, 3], "sample_weight": [1, -1, 1]},
            r"Expected non-negative weights.*-1",
        ),
    ],
)
@pytest.mark.parametrize("function", [ks_statistic, roc_auc, gini])
def test_malformed_input_raises(function, kwargs, message):
    kwargs = dict(kwargs)
    y, s = kwargs.pop("y_true"), kwargs.pop("y_score")
    with pytest.raises(InvalidDataError, match=message):
        function(y, s, **kwargs)


def test_confidence_level_must_be_a_fraction():
    with pytest.raises(InvalidDataError, match=r"Expected confidence_level in \(0, 1\), got 95"):
        roc_auc([0, 1], [0.1, 0.2], confidence_level=95)


def test_unlabeled_table_is_rejected():
    table = CountTable.from_values([0.1, 0.2])
    with pytest.raises(InvalidDataError, match="Expected a labeled count table"):
        roc_auc_from_counts(table)


@pytest.mark.parametrize("n", [141.0, 500.0, 20_000.0, 2_500_000.0])
@pytest.mark.parametrize("d", [1e-4, 0.004, 0.01, 0.02, 0.05, 0.1, 0.3, 0.49, 0.5, 0.7])
def test_kstwo_from_scipy_special_is_scipy_stats_to_the_bit(n, d):
    from riskmon.metrics._ks_pvalue import _kstwo_sf_special

    mine = _kstwo_sf_special(n, d)
    if mine is not None:  # the cases left to scipy.stats are computed by it
        assert mine == float(stats.kstwo.sf(d, n))


def test_a_weighted_perfect_ranking_has_an_auc_of_exactly_one() -> None:
    """Summing the goods' weights in another order than their total rounds the bad's
    placement to 1 + 2.2e-16 with these weights; the AUC is 1, and an initial AUC of it is
    accepted by the ECB test (a baseline segment with one bad ranked first failed runs)."""
    weights = [66.75, 1357.14, 494.73, 1261.26, 238.56, 1594.35, 2909.3, 487.79, 308.8]
    weights += [1310.09, 1979.4, 2468.29, 443.03, 1692.19, 509.64, 216.54, 1649.35, 314.42]
    weights += [249.97, 1301.91, 1108.44, 905.88, 970.72, 433.41, 1395.38, 1834.07]
    labels = [0] * 25 + [1]
    scores = np.arange(26, dtype=float)
    goods = np.array([0.0, *weights[:25][::-1]])  # riskiest first: the bad, then the goods
    bads = np.array([1.0] + [0.0] * 25)
    v10, _ = placements(goods, bads, float(goods.sum()), 1.0)
    assert v10[0] > 1.0  # the rounding this guards against
    with pytest.warns(DegenerateDataWarning):  # one bad: no standard error
        auc = roc_auc(labels, scores, sample_weight=weights)
    with pytest.warns(DegenerateDataWarning):
        accuracy = gini(labels, scores, sample_weight=weights)
    assert auc.auc == 1.0
    assert accuracy.gini == 1.0
    test = auc_test([1, 1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.2, 0.1], initial_auc=auc.auc)
    assert 0.0 < test.pvalue < 1.0


@pytest.mark.parametrize(
    ("n_bad", "n_good", "shift"),
    [(3, 400, 0.5), (90, 2_000, 0.3), (120, 2_000, 2.5), (700, 900, 1.5), (1_500, 1_400, 0.05)],
)
def test_both_exact_ks_pvalue_ways_are_scipys(n_bad, n_good, shift):
    # row by row (samples of very different sizes) and anti-diagonal by anti-diagonal (about
    # the same size) give scipy's exact p-value, tiny ones (1e-100 and below) included
    from riskmon.metrics._ks_pvalue import _by_diagonals, _by_rows

    rng = np.random.default_rng(n_bad)
    bads, goods = rng.normal(shift, size=n_bad), rng.normal(size=n_good)
    ref = stats.ks_2samp(bads, goods, method="exact")
    for way in (_by_rows, _by_diagonals):
        p = way(n_bad, n_good, ref.statistic)
        assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300), (way.__name__, ref.pvalue)
