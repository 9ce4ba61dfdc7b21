"""Hosmer–Lemeshow χ² over grades: against scipy.stats.chi2, hand-pooled groups and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import hosmer_lemeshow_test


def chi_square(d, n, p):
    d, n, p = (np.asarray(x, dtype=float) for x in (d, n, p))
    return float(np.sum((d - n * p) ** 2 / (n * p * (1 - p))))


@pytest.mark.parametrize("seed", range(5))
def test_matches_the_formula_and_scipy_chi2(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 15))
    p = np.sort(rng.uniform(0.01, 0.3, k))
    n = rng.integers(500, 5000, k)
    d = rng.binomial(n, p * rng.uniform(0.7, 1.3, k))
    r = hosmer_lemeshow_test(d, n, p)
    expected = chi_square(d, n, p)
    assert r.statistic == pytest.approx(expected, rel=1e-12)
    assert r.pvalue == pytest.approx(stats.chi2.sf(expected, k), rel=1e-10)
    assert r.dof == k
    assert r.groups == tuple((i,) for i in range(k))
    assert r.excluded == ()
    assert float(r) == r.statistic


def test_hand_computed_three_grades():
    # (7 − 5)²/4.75 + 0 + (16 − 20)²/16 = 0.842105... + 1
    r = hosmer_lemeshow_test([7, 10, 16], [100, 100, 100], [0.05, 0.10, 0.20])
    assert r.statistic == pytest.approx(4 / 4.75 + 1)
    assert r.pvalue == pytest.approx(stats.chi2.sf(4 / 4.75 + 1, 3))


def test_short_grades_are_pooled_with_their_neighbours():
    # expected defaults 0.5, 2, 3 | 10 | 1, 30: the first three reach 5 together (5.5), the
    # fourth alone (10), the fifth (1) with the sixth (31)
    d = [1, 3, 2, 12, 0, 33]
    n = [100, 200, 100, 100, 10, 100]
    p = [0.005, 0.01, 0.03, 0.10, 0.10, 0.30]
    r = hosmer_lemeshow_test(d, n, p)
    assert r.groups == ((0, 1, 2), (3,), (4, 5))
    assert r.dof == 3
    # pooled: N 400, D 6, E 5.5 → p̄ 5.5/400; N 110, D 33, E 31 → p̄ 31/110
    expected = chi_square([6, 12, 33], [400, 100, 110], [5.5 / 400, 0.10, 31 / 110])
    assert r.statistic == pytest.approx(expected, rel=1e-12)
    assert r.pvalue == pytest.approx(stats.chi2.sf(expected, 3), rel=1e-10)


def test_a_short_remainder_joins_the_last_group():
    # expected 10, 10, 2: the last grade cannot stand alone and joins the second
    r = hosmer_lemeshow_test([9, 12, 3], [100, 100, 100], [0.10, 0.10, 0.02])
    assert r.groups == ((0,), (1, 2))
    expected = chi_square([9, 15], [100, 200], [0.10, 12 / 200])
    assert r.statistic == pytest.approx(expected, rel=1e-12)


def test_survivors_count_as_well_as_defaults():
    # PD 97 %: 97 expected defaults but only 3 expected survivors in the first grade
    r = hosmer_lemeshow_test([95, 40], [100, 100], [0.97, 0.5])
    assert r.groups == ((0, 1),)
    assert r.dof == 1


def test_refuse_says_which_grades_are_short():
    with pytest.warns(DegenerateDataWarning, match=r"grade\(s\) \[0, 4\] expect fewer than 5"):
        r = hosmer_lemeshow_test(
            [1, 3, 6, 12, 0],
            [100, 200, 100, 100, 10],
            [0.005, 0.03, 0.06, 0.1, 0.1],
            merge="refuse",
        )
    assert math.isnan(r.statistic)
    assert math.isnan(r.pvalue)
    assert r.merge == "refuse"


def test_refuse_tests_grades_that_are_all_large_enough():
    r = hosmer_lemeshow_test([7, 10, 16], [100, 100, 100], [0.05, 0.10, 0.20], merge="refuse")
    assert r.statistic == pytest.approx(4 / 4.75 + 1)


def test_min_expected_zero_tests_every_grade_alone():
    d, n, p = [0, 1, 5], [10, 20, 50], [0.01, 0.02, 0.1]
    r = hosmer_lemeshow_test(d, n, p, min_expected=0)
    assert r.groups == ((0,), (1,), (2,))
    assert r.statistic == pytest.approx(chi_square(d, n, p), rel=1e-12)
    assert r.min_expected == 0


def test_empty_grades_are_excluded_and_said_so():
    # an empty grade's mean PD is NaN (no loans): it is not read
    r = hosmer_lemeshow_test([0, 7, 0, 16], [0, 100, 0, 100], [np.nan, 0.05, 0.1, 0.2])
    assert r.excluded == (0, 2)
    assert r.groups == ((1,), (3,))
    assert r.dof == 2
    assert r.statistic == pytest.approx(chi_square([7, 16], [100, 100], [0.05, 0.2]))


def test_grades_whose_pd_is_0_or_1_are_left_out_and_said_so():
    # their term divides by N·p·(1 − p) = 0; the other grades are tested as if alone
    r = hosmer_lemeshow_test(
        [0, 7, 10, 16, 20], [30, 100, 100, 100, 20], [0.0, 0.05, 0.1, 0.2, 1.0], min_expected=0
    )
    assert r.certain == (0, 4)
    assert r.excluded == ()
    assert r.groups == ((1,), (2,), (3,))
    assert r.statistic == pytest.approx(
        chi_square([7, 10, 16], [100, 100, 100], [0.05, 0.1, 0.2]), rel=1e-12
    )
    assert r.pvalue == pytest.approx(stats.chi2.sf(r.statistic, 3), rel=1e-12)


def test_not_available_when_every_pd_is_0_or_1():
    with pytest.warns(DegenerateDataWarning, match=r"PD of 0 or 1, whose variance N·p·\(1 − p\)"):
        r = hosmer_lemeshow_test([0, 9], [12, 9], [0.0, 1.0])
    assert math.isnan(r.pvalue)
    assert r.certain == (0, 1)


@pytest.mark.parametrize("merge", ["adjacent", "refuse"])
def test_not_available_when_all_grades_together_are_too_small(merge):
    with pytest.warns(DegenerateDataWarning, match="expect fewer than 5"):
        r = hosmer_lemeshow_test([0, 1], [10, 20], [0.01, 0.02], merge=merge)
    assert math.isnan(r.statistic)


def test_not_available_without_obligors():
    with pytest.warns(DegenerateDataWarning, match="no grade holds obligors"):
        r = hosmer_lemeshow_test([0, 0], [0, 0], [0.01, 0.02])
    assert math.isnan(r.pvalue)
    assert r.excluded == (0, 1)


def test_effective_counts_are_accepted():
    d, n, p = [6.4, 12.7], [120.5, 98.2], [0.05, 0.1]
    r = hosmer_lemeshow_test(d, n, p)
    assert r.statistic == pytest.approx(chi_square(d, n, p), rel=1e-12)


def test_calibrated_pds_reject_at_the_nominal_rate():
    # defaults drawn from the PDs themselves: P(p < 5 %) should be about 5 %
    rng = np.random.default_rng(7)
    p = np.array([0.005, 0.01, 0.02, 0.05, 0.1, 0.2])
    n = np.array([4000, 3000, 2000, 1000, 500, 300])
    pvalues = [hosmer_lemeshow_test(rng.binomial(n, p), n, p).pvalue for _ in range(2000)]
    assert 0.035 < np.mean(np.array(pvalues) < 0.05) < 0.065


grades = st.lists(
    st.tuples(st.integers(0, 400), st.floats(0.001, 0.6), st.floats(0, 1)), min_size=1, max_size=12
)


@settings(max_examples=150, deadline=None)
@given(grades, st.floats(0, 10))
def test_groups_are_runs_of_adjacent_grades_that_reach_min_expected(rows, minimum):
    n = np.array([r[0] for r in rows], dtype=float)
    p = np.array([r[1] for r in rows])
    d = np.floor(n * np.array([r[2] for r in rows]))
    total_expected = float(np.dot(n, p))
    reach = min(total_expected, n.sum() - total_expected) - minimum
    assume(abs(reach) > 1e-9)  # not on the edge, where rounding decides
    if reach < 0 or n.sum() == 0:
        with pytest.warns(DegenerateDataWarning):
            hosmer_lemeshow_test(d, n, p, min_expected=minimum)
        return
    r = hosmer_lemeshow_test(d, n, p, min_expected=minimum)
    flat = [k for group in r.groups for k in group]
    assert flat == [k for k in range(len(rows)) if n[k] > 0]
    assert r.excluded == tuple(k for k in range(len(rows)) if n[k] == 0)
    assert r.dof == len(r.groups)
    for group in r.groups:
        e = float(np.dot(n[list(group)], p[list(group)]))
        assert min(e, n[list(group)].sum() - e) >= minimum - 1e-9
    assert r.statistic >= 0
    assert 0 <= r.pvalue <= 1


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (([1, 2], [10, 20], [0.1]), {}, r"Expected 2 rows in 'pd' to match defaults, got 1"),
        (([1], [10, 20], [0.1]), {}, r"Expected 1 rows in 'n' to match defaults, got 2"),
        (([11, 2], [10, 20], [0.1, 0.1]), {}, r"Expected defaults <= n"),
        (([-1, 2], [10, 20], [0.1, 0.1]), {}, r"non-negative counts in 'defaults'"),
        (([1, 2], [10, 20], [0.1, 1.2]), {}, r"probabilities in \[0, 1\] in 'pd', got \[1.2\]"),
        (([1, np.nan], [10, 20], [0.1, 0.1]), {}, r"finite numeric counts in 'defaults'"),
        (([1, 2], [10, 20], [0.1, np.nan]), {}, r"finite numeric probabilities in 'pd'"),
        (([1, 2], [10, 20], [[0.1, 0.1]]), {}, r"Expected a 1-d array for 'pd'"),
        (([1, 2], [10, 20], [0.1, 0.1]), {"merge": "pool"}, r"Expected merge in"),
        (([1, 2], [10, 20], [0.1, 0.1]), {"min_expected": -1}, r"min_expected >= 0, got -1"),
    ],
)
def test_bad_input_names_the_argument(args, options, message):
    with pytest.raises(InvalidDataError, match=message):
        hosmer_lemeshow_test(*args, **options)
