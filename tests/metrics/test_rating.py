"""Rating-system figures against hand-computed values, pandas.crosstab, scipy.stats and loops."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    herfindahl_index,
    herfindahl_test,
    matrix_weighted_bandwidth,
    migration_matrix,
    migration_stability_test,
)

TOL = 1e-12

#: counts per grade: whole counts or summed weights, 2 to 20 grades
grade_counts = st.integers(2, 20).flatmap(
    lambda k: st.one_of(
        st.lists(st.integers(0, 10_000), min_size=k, max_size=k),
        st.lists(st.floats(0, 1e6), min_size=k, max_size=k),
    )
)


def square_counts(low: int, high: int = 7, *, least: int = 0) -> st.SearchStrategy[np.ndarray]:
    """K×K count matrices, K in [low, high], counts from ``least`` to 60."""
    return st.integers(low, high).flatmap(
        lambda k: st.lists(
            st.lists(st.integers(least, 60), min_size=k, max_size=k), min_size=k, max_size=k
        ).map(lambda rows: np.array(rows, dtype=float))
    )


# --------------------------------------------------------------------------- references
def reference_cv_hi(counts):
    """CV and HI as the ECB writes them, term by term."""
    counts = np.asarray(counts, dtype=float)
    k = counts.size
    shares = counts / counts.sum()
    cv = math.sqrt(k * sum((r - 1 / k) ** 2 for r in shares))
    return cv, 1 + math.log((cv**2 + 1) / k) / math.log(k)


def reference_bandwidth(counts):
    """Upper and lower MWB by loops over 1-based grades."""
    k = len(counts)
    up = up_bound = low = low_bound = 0.0
    for i in range(1, k + 1):
        reach = max(abs(i - k), abs(i - 1))
        for j in range(1, k + 1):
            n_ij = counts[i - 1][j - 1]
            if j > i:
                up += abs(i - j) * n_ij
                up_bound += reach * n_ij
            elif j < i:
                low += abs(i - j) * n_ij
                low_bound += reach * n_ij
    return (up / up_bound if up_bound else 0.0), (low / low_bound if low_bound else 0.0)


def reference_stability(counts):
    """z per cell by loops, NaN where not tested or not defined, and how many were undefined."""
    k = len(counts)
    z = np.full((k, k), np.nan)
    undefined = tested = 0
    for i in range(k):
        total = sum(counts[i])
        for j in range(k):
            if j >= i + 2:
                near = j - 1
            elif j <= i - 2:
                near = j + 1
            else:
                continue
            tested += 1
            if total == 0:
                undefined += 1
                continue
            p, q = counts[i][j] / total, counts[i][near] / total
            variance = (p * (1 - p) + q * (1 - q) + 2 * p * q) / total
            if variance == 0:
                undefined += 1
                continue
            z[i, j] = (q - p) / math.sqrt(variance)
    return z, undefined, tested


def reference_matrix(grade_from, grade_to, k, weights=None):
    """pandas.crosstab of the grades, rows and columns 1..k."""
    start = pd.Series(grade_from, name="from")
    end = pd.Series(grade_to, name="to")
    if weights is None:
        table = pd.crosstab(start, end)
    else:
        table = pd.crosstab(start, end, values=pd.Series(weights), aggfunc="sum")
    grades = range(1, k + 1)
    return table.reindex(index=grades, columns=grades).fillna(0).to_numpy(dtype=float)


# --------------------------------------------------------------------------- Herfindahl
@pytest.mark.parametrize("k", [2, 3, 7, 20])
def test_herfindahl_index_ends(k):
    assert herfindahl_index(np.full(k, 13)) == 0.0
    assert herfindahl_index(np.full(k, 0.37)) == pytest.approx(0.0, abs=TOL)
    for grade in (0, k - 1):
        one = np.zeros(k)
        one[grade] = 250
        assert herfindahl_index(one) == pytest.approx(1.0, rel=TOL)


def test_herfindahl_index_by_hand():
    # R = (0.5, 0.3, 0.2), 1/K = 1/3: Σ (R − 1/3)² = 1/36 + 1/900 + 4/225 = 0.046667,
    # CV² = 3 · 0.046667 = 0.14, HI = 1 + ln(1.14 / 3) / ln 3 = 1 − 0.967517/1.098612 = 0.119267
    assert herfindahl_index([50, 30, 20]) == pytest.approx(0.1192670642, rel=1e-9)
    # counts and shares give the same figure
    assert herfindahl_index([0.5, 0.3, 0.2]) == pytest.approx(0.1192670642, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(grade_counts)
def test_herfindahl_index_matches_the_formula(counts):
    assume(sum(counts) > 0)
    _, expected = reference_cv_hi(counts)
    hi = herfindahl_index(counts)
    assert hi == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # 1 + ln(Σ R²)/ln K: the same number through CV² + 1 = K·Σ R²
    shares = np.asarray(counts, dtype=float) / sum(counts)
    assert hi == pytest.approx(1 + np.log(np.sum(shares**2)) / np.log(len(counts)), abs=1e-9)
    assert -1e-12 <= hi <= 1 + 1e-12


def test_herfindahl_index_of_no_obligors_is_not_available():
    with pytest.warns(DegenerateDataWarning, match="'counts' holds no obligors"):
        assert math.isnan(herfindahl_index([0, 0, 0]))


def test_herfindahl_test_by_hand():
    # CV² now = 0.14 (above); initially R = (0.4, 0.35, 0.25): 3·(1/225 + 1/3600 + 1/144)
    # = 0.035. z = √2·(0.374166 − 0.187083) / √(0.14·0.64) = 0.264575/0.299333 = 0.883883
    r = herfindahl_test([50, 30, 20], [40, 35, 25])
    assert r.cv == pytest.approx(math.sqrt(0.14), rel=1e-12)
    assert r.cv_initial == pytest.approx(math.sqrt(0.035), rel=1e-12)
    assert r.statistic == pytest.approx(0.8838834765, rel=1e-9)
    assert r.pvalue == pytest.approx(stats.norm.sf(0.8838834765), rel=1e-8)
    assert r.hi == pytest.approx(herfindahl_index([50, 30, 20]), rel=TOL)
    assert r.hi_initial == pytest.approx(herfindahl_index([40, 35, 25]), rel=TOL)
    assert float(r) == r.statistic


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 15).flatmap(lambda k: st.tuples(*[st.integers(0, 5_000)] * (2 * k))))
def test_herfindahl_test_matches_the_formula_and_scipy(values):
    k = len(values) // 2
    now, initial = values[:k], values[k:]
    assume(sum(now) > 0 and sum(initial) > 0)
    cv, hi = reference_cv_hi(now)
    cv_initial, hi_initial = reference_cv_hi(initial)
    assume(cv > 1e-6)
    z = math.sqrt(k - 1) * (cv - cv_initial) / math.sqrt(cv**2 * (0.5 + cv**2))
    r = herfindahl_test(now, initial)
    assert r.statistic == pytest.approx(z, rel=1e-9, abs=1e-9)
    assert r.pvalue == pytest.approx(stats.norm.sf(z), rel=1e-8, abs=1e-12)
    assert (r.cv, r.cv_initial) == pytest.approx((cv, cv_initial), rel=1e-9, abs=1e-12)
    assert (r.hi, r.hi_initial) == pytest.approx((hi, hi_initial), rel=1e-9, abs=1e-12)


def test_herfindahl_test_direction():
    # more concentrated than initially: small p; less concentrated: p near 1
    spread, even = [20, 15, 12, 10, 10, 8, 8, 7, 5, 5], [10] * 9 + [11]
    assert herfindahl_test(spread, even).pvalue < 0.001
    assert herfindahl_test(even, spread).pvalue > 0.999
    assert herfindahl_test([40, 35, 25], [40, 35, 25]).statistic == 0


@pytest.mark.parametrize("now", [[10, 10, 10], [0.1, 0.1, 0.1]])
def test_herfindahl_test_of_equal_shares_is_not_available(now):
    with pytest.warns(DegenerateDataWarning, match="current CV is 0"):
        r = herfindahl_test(now, [50, 30, 20])
    assert math.isnan(r.statistic)
    assert math.isnan(r.pvalue)
    assert r.cv == 0
    assert r.hi == 0
    assert r.cv_initial == pytest.approx(math.sqrt(0.14))


@pytest.mark.parametrize(
    ("now", "initial", "where"),
    [
        ([0, 0], [1, 2], "'counts'"),
        ([1, 2], [0, 0], "'initial_counts'"),
        ([0, 0], [0, 0], "'counts' and 'initial_counts'"),
    ],
)
def test_herfindahl_test_without_obligors_is_not_available(now, initial, where):
    with pytest.warns(DegenerateDataWarning, match=f"no obligors in {where}$"):
        r = herfindahl_test(now, initial)
    assert all(math.isnan(v) for v in dataclasses.astuple(r))


# --------------------------------------------------------------------------- migration matrix
migrations = st.integers(1, 80).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 6), min_size=n, max_size=n),
        st.lists(st.integers(1, 6), min_size=n, max_size=n),
        st.lists(st.one_of(st.just(0.0), st.floats(0.01, 100)), min_size=n, max_size=n),
        st.integers(0, 3),
    )
)


@settings(max_examples=150, deadline=None)
@given(migrations)
def test_migration_matrix_matches_crosstab(data):
    start, end, _, extra = data
    k = max(*start, *end)
    m = migration_matrix(start, end)
    np.testing.assert_array_equal(m, reference_matrix(start, end, k))
    assert m.dtype == np.float64
    assert m.sum() == len(start)
    wider = migration_matrix(np.array(start), pd.Series(end), n_grades=k + extra)
    np.testing.assert_array_equal(wider, reference_matrix(start, end, k + extra))


@settings(max_examples=150, deadline=None)
@given(migrations)
def test_weighted_migration_matrix_matches_crosstab_and_drops_zero_weights(data):
    start, end, weights, extra = data
    n_grades = max(*start, *end) + extra
    m = migration_matrix(start, end, sample_weight=weights, n_grades=n_grades)
    kept = [i for i, w in enumerate(weights) if w > 0]
    expected = np.zeros((n_grades, n_grades))
    if kept:
        rows = ([start[i] for i in kept], [end[i] for i in kept])
        expected = reference_matrix(*rows, n_grades, [weights[i] for i in kept])
    np.testing.assert_allclose(m, expected, rtol=TOL, atol=0)
    assert m.sum() == pytest.approx(sum(weights), rel=TOL)
    if kept:
        k = max(max(start[i], end[i]) for i in kept)
        assert migration_matrix(start, end, sample_weight=weights).shape == (k, k)


def test_migration_matrix_by_hand():
    m = migration_matrix([1, 1, 2, 3, 3, 3], [1, 3, 2, 1, 3, 3], sample_weight=[2, 1, 1, 1, 1, 0])
    assert np.asarray(m).tolist() == [[2, 0, 1], [0, 1, 0], [1, 0, 1]]
    # the zero-weight row is dropped before K is read: its grade 4 does not widen the matrix
    m = migration_matrix([1, 2, 4], [2, 1, 4], sample_weight=[1.5, 2.5, 0.0])
    assert m.tolist() == [[0, 1.5], [2.5, 0]]
    # whole-number floats (as pandas reads an integer column) are grades
    assert migration_matrix([1.0, 2.0], [2.0, 2.0]).tolist() == [[0, 1], [0, 1]]
    # no rows at all: K zero counts when K is given
    assert migration_matrix([], [], n_grades=2).tolist() == [[0, 0], [0, 0]]


# --------------------------------------------------------------------------- bandwidth
def test_bandwidth_of_a_diagonal_matrix_is_zero():
    assert matrix_weighted_bandwidth(np.eye(5)) == (0.0, 0.0)
    assert matrix_weighted_bandwidth(np.diag([3.0, 0.0, 7.5])) == (0.0, 0.0)


def test_bandwidth_by_hand():
    counts = [[10, 3, 1], [2, 20, 4], [0, 5, 30]]
    # r_i = max(|i − 3|, |i − 1|) = (2, 1, 2)
    # upper: (1·3 + 2·1 + 1·4) / (2·(3 + 1) + 1·4) = 9/12 = 0.75
    # lower: (1·2 + 2·0 + 1·5) / (1·2 + 2·(0 + 5)) = 7/12
    upper, lower = matrix_weighted_bandwidth(counts)
    assert upper == pytest.approx(0.75, rel=TOL)
    assert lower == pytest.approx(7 / 12, rel=TOL)
    # everyone in grade 1 moves to grade 3: 2·5 / (2·5) = 1; nobody moves up
    assert matrix_weighted_bandwidth([[0, 0, 5], [0, 0, 0], [0, 0, 0]]) == (1.0, 0.0)
    # one side only: 2 downgrades from grade 2 to 3, 1·2 / (1·2) = 1; no upgrades
    counts = pd.DataFrame([[4, 0, 0], [0, 4, 2], [0, 0, 9]])
    assert matrix_weighted_bandwidth(counts) == pytest.approx((1.0, 0.0), rel=TOL)


@settings(max_examples=200, deadline=None)
@given(square_counts(2))
def test_bandwidth_matches_loops(counts):
    assume(counts.sum() > 0)
    upper, lower = matrix_weighted_bandwidth(counts)
    expected = reference_bandwidth(counts.tolist())
    assert (upper, lower) == pytest.approx(expected, rel=1e-12, abs=0)
    assert 0 <= upper <= 1
    assert 0 <= lower <= 1
    # on the reversed scale (grade i becomes K + 1 − i) downgrades become upgrades
    flipped = matrix_weighted_bandwidth(counts[::-1, ::-1])
    assert flipped == pytest.approx((lower, upper), rel=1e-12)


def test_bandwidth_without_obligors_is_not_available():
    with pytest.warns(DegenerateDataWarning, match="'counts' holds no obligors"):
        upper, lower = matrix_weighted_bandwidth(np.zeros((3, 3)))
    assert math.isnan(upper)
    assert math.isnan(lower)


# --------------------------------------------------------------------------- stability
STABLE = [[60, 25, 10, 5], [8, 70, 15, 7], [4, 10, 80, 6], [1, 3, 16, 80]]


def test_stability_by_hand():
    r = migration_stability_test(STABLE)
    # (1, 3): p = 0.10, its neighbour (1, 2) 0.25, N = 100:
    # variance = (0.1·0.9 + 0.25·0.75 + 2·0.1·0.25) / 100 = 0.3275/100,
    # z = 0.15 / √0.003275 = 0.15 / 0.0572276 = 2.621112
    assert r.statistic[0, 2] == pytest.approx(2.6211121700, rel=1e-9)
    assert r.pvalue[0, 2] == pytest.approx(stats.norm.sf(2.6211121700), rel=1e-8)
    # (4, 2), below the diagonal: p = 0.03, neighbour (4, 3) 0.16:
    # variance = (0.03·0.97 + 0.16·0.84 + 2·0.03·0.16) / 100 = 0.1731/100,
    # z = 0.13 / √0.001731 = 0.13 / 0.0416053 = 3.124603
    assert r.statistic[3, 1] == pytest.approx(3.1246028055, rel=1e-9)
    # cells within one grade of the diagonal are not tested
    for i in range(4):
        for j in range(max(0, i - 1), min(4, i + 2)):
            assert math.isnan(r.statistic[i, j])
            assert math.isnan(r.pvalue[i, j])
    assert r.n_from.tolist() == [100, 100, 100, 100]


def test_stability_direction():
    # shares falling away from the diagonal give small p; rising ones give p near 1
    falling = migration_stability_test([[800, 150, 50], [50, 900, 50], [60, 140, 800]])
    assert falling.pvalue[0, 2] < 0.001
    assert falling.pvalue[2, 0] < 0.001
    rising = migration_stability_test([[800, 50, 150], [50, 900, 50], [140, 60, 800]])
    assert rising.pvalue[0, 2] > 0.999
    assert rising.pvalue[2, 0] > 0.999


@settings(max_examples=150, deadline=None)
@given(square_counts(3, least=1))
def test_stability_matches_loops_and_scipy(counts):
    expected, undefined, _ = reference_stability(counts.tolist())
    assert undefined == 0
    r = migration_stability_test(counts)
    np.testing.assert_allclose(r.statistic, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.pvalue, stats.norm.sf(expected), rtol=1e-8, atol=1e-15)
    np.testing.assert_array_equal(r.n_from, counts.sum(axis=1))


@settings(max_examples=100, deadline=None)
@given(square_counts(3))
def test_stability_with_empty_cells_warns_once(counts):
    expected, undefined, tested = reference_stability(counts.tolist())
    if undefined:
        with pytest.warns(DegenerateDataWarning) as record:
            r = migration_stability_test(counts)
        assert len(record) == 1
        assert f"in {undefined} of {tested} cells" in str(record[0].message)
    else:
        r = migration_stability_test(counts)
    np.testing.assert_allclose(r.statistic, expected, rtol=1e-9, atol=1e-12)


def test_stability_of_an_empty_grade_and_a_whole_row_cell():
    # six cells are tested: (1, 3) and (1, 4) are empty like their neighbours; grade 2 holds
    # nobody, so (2, 4) has no shares; (4, 1) holds all of grade 4 and its neighbour (4, 2)
    # nothing, and (4, 2) is empty like (4, 3): variance 0. Only (3, 1) is defined:
    # p = 1/4 against its empty neighbour (3, 2): z = −0.25 / √(0.25·0.75 / 4) = −1.154701
    counts = [[5, 0, 0, 0], [0, 0, 0, 0], [1, 0, 3, 0], [4, 0, 0, 0]]
    with pytest.warns(DegenerateDataWarning, match="in 5 of 6 cells"):
        r = migration_stability_test(counts)
    assert r.statistic[2, 0] == pytest.approx(-2 / math.sqrt(3), rel=1e-12)
    assert np.isnan(np.delete(r.statistic.ravel(), 8)).all()
    assert np.isnan(np.delete(r.pvalue.ravel(), 8)).all()
    assert r.n_from.tolist() == [5, 0, 4, 4]


def test_results_are_read_only():
    r = migration_stability_test(STABLE)
    with pytest.raises(ValueError, match="read-only"):
        r.statistic[0, 2] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.pvalue = r.statistic


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: herfindahl_index([5]), r"Expected at least 2 grades in 'counts', got 1"),
        (lambda: herfindahl_index([[1, 2], [3, 4]]), r"1-d array for 'counts', got shape \(2, 2\)"),
        (lambda: herfindahl_index([1, -2, 3]), r"non-negative counts in 'counts', got \[-2.0\]"),
        (lambda: herfindahl_index([1, np.nan]), r"finite numeric counts in 'counts'"),
        (lambda: herfindahl_index(["a", "b"]), r"numeric counts in 'counts'"),
        (
            lambda: herfindahl_test([1, 2, 3], [1, 2]),
            r"Expected 3 rows in 'initial_counts' to match counts, got 2",
        ),
        (lambda: herfindahl_test([1, 2], [1, -1]), r"non-negative counts in 'initial_counts'"),
        (lambda: herfindahl_test([1, 2], [3]), r"at least 2 grades in 'initial_counts'"),
        (
            lambda: matrix_weighted_bandwidth([[1, 2, 3], [4, 5, 6]]),
            r"square K×K matrix for 'counts', got shape \(2, 3\)",
        ),
        (lambda: matrix_weighted_bandwidth([1, 2]), r"square K×K matrix for 'counts'"),
        (lambda: matrix_weighted_bandwidth([[1]]), r"at least 2 grades in 'counts', got 1"),
        (lambda: matrix_weighted_bandwidth([[1, -1], [0, 1]]), r"non-negative counts in 'counts'"),
        (
            lambda: migration_stability_test([[1, 2], [3, 4]]),
            r"at least 3 grades in 'counts', got 2",
        ),
        (lambda: migration_stability_test(np.ones((3, 4))), r"square K×K matrix for 'counts'"),
        (
            lambda: migration_stability_test([[1, 0, np.inf], [0, 1, 0], [0, 0, 1]]),
            r"finite numeric counts in 'counts'",
        ),
    ],
)
def test_bad_counts_name_the_argument(call, message):
    with pytest.raises(InvalidDataError, match=message):
        call()


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (([1, 2.5], [1, 2]), {}, r"integer grades in 'grade_from', got \[2.5\]"),
        (([1, 0], [1, 2]), {}, r"grades from 1 \(the best\) to 1000 in 'grade_from', got \[0\]"),
        (([1, 2], [-1, 2]), {}, r"grades from 1 \(the best\) to 1000 in 'grade_to', got \[-1\]"),
        (([1, 2], [1, None]), {}, r"grade in every row of 'grade_to', got 1 missing value\(s\)"),
        (([1, np.nan], [1, 2]), {}, r"grade in every row of 'grade_from'.*NaN and None"),
        (
            (pd.Series([1, pd.NA], dtype=object), [1, 2]),
            {},
            r"grade in every row of 'grade_from'",
        ),
        (([1, np.inf], [1, 2]), {}, r"integer grades in 'grade_from', got \[inf\]"),
        ((["a", "b"], [1, 2]), {}, r"integer grades in 'grade_from', got dtype <U1"),
        (([True, False], [1, 2]), {}, r"integer grades in 'grade_from', got dtype bool"),
        ((np.array(["x", 1], dtype=object), [1, 2]), {}, r"non-numeric values"),
        (([[1, 2]], [1, 2]), {}, r"1-d array for 'grade_from', got shape \(1, 2\)"),
        (([1, 2], [1, 2, 3]), {}, r"Expected 2 rows in 'grade_to' to match grade_from, got 3"),
        (([1, 2], [1, 2]), {"sample_weight": [1, -1]}, r"non-negative weights in 'sample_weight'"),
        (([1, 2], [1, 2]), {"sample_weight": [1, np.inf]}, r"finite numeric .* 'sample_weight'"),
        (([1, 2], [1, 2]), {"sample_weight": [1]}, r"Expected 2 rows in 'sample_weight'"),
        (([1, 2], [1, 3]), {"n_grades": 2}, r"to n_grades=2 in 'grade_to', got \[3\]"),
        (([1, 2], [1, 2]), {"n_grades": 0}, r"Expected n_grades from 1 to 1000, got 0"),
        (([1, 2], [1, 2]), {"n_grades": 2.5}, r"Expected n_grades from 1 to 1000, got 2.5"),
        (([1, 2], [1, 2]), {"n_grades": True}, r"Expected n_grades from 1 to 1000, got True"),
        (([1, 2], [1, 2]), {"sample_weight": [0, 0]}, r"Expected n_grades when no row has a"),
        (([], []), {}, r"Expected n_grades when no row has a positive weight"),
        (([1, 1001], [1, 1]), {}, r"to 1000 in 'grade_from', got \[1001\]"),
    ],
)
def test_bad_grades_name_the_argument(args, options, message):
    with pytest.raises(InvalidDataError, match=message):
        migration_matrix(*args, **options)


def test_docstring_examples_run():
    mod = importlib.import_module("riskmon.metrics._rating")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
