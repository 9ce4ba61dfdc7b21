"""Invariants of PSI and IV, checked on generated data."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.metrics import (
    Binning,
    CountTable,
    fit_binning,
    information_value,
    information_value_from_counts,
    population_stability_index,
)

# small integer-valued floats (many ties) with missing values
values = st.lists(
    st.one_of(st.integers(-5, 5).map(float), st.none()),
    min_size=1,
    max_size=60,
)
categories = st.lists(st.sampled_from(["a", "b", "c", "d", None]), min_size=1, max_size=60)
n_bins = st.integers(1, 8)


def _as_array(xs):
    return np.array([np.nan if v is None else v for v in xs], dtype=float)


@given(values, n_bins)
def test_psi_of_a_sample_against_itself_is_zero(xs, k):
    r = population_stability_index(xs, xs, n_bins=k)
    assert float(r) == 0.0
    assert not r.table["smoothed"].any()


@given(values, values, n_bins)
def test_psi_is_non_negative_and_finite(e, a, k):
    r = population_stability_index(e, a, n_bins=k)
    assert float(r) >= 0
    assert math.isfinite(float(r))


@given(categories, categories)
def test_categorical_psi_is_non_negative_and_finite(e, a):
    r = population_stability_index(e, a)
    assert float(r) >= 0
    assert math.isfinite(float(r))


@given(values, values, st.randoms(use_true_random=False))
def test_psi_does_not_depend_on_row_order(e, a, rnd):
    binning = fit_binning(e)
    e2, a2 = list(e), list(a)
    rnd.shuffle(e2)
    rnd.shuffle(a2)
    r1 = population_stability_index(e, a, binning=binning)
    r2 = population_stability_index(e2, a2, binning=binning)
    assert math.isclose(float(r1), float(r2), rel_tol=1e-12, abs_tol=1e-15)


@given(
    values,
    values,
    st.integers(0, 2**32 - 1),
    st.floats(1e-3, 1e3, allow_nan=False),
    st.floats(1e-3, 1e3, allow_nan=False),
)
def test_psi_is_invariant_to_scaling_all_weights(e, a, seed, ce, ca):
    rng = np.random.default_rng(seed)
    we, wa = rng.uniform(0.1, 2.0, len(e)), rng.uniform(0.1, 2.0, len(a))
    # bins fixed up front: scaled weights could move a weighted quantile by rounding
    binning = fit_binning(e)
    r1 = population_stability_index(e, a, binning=binning, expected_weight=we, actual_weight=wa)
    r2 = population_stability_index(
        e, a, binning=binning, expected_weight=we * ce, actual_weight=wa * ca
    )
    assert math.isclose(float(r1), float(r2), rel_tol=1e-9, abs_tol=1e-12)


@given(values, values)
def test_psi_is_symmetric_when_no_smoothing_applies(e, a):
    binning = fit_binning(e + a)
    forward = population_stability_index(e, a, binning=binning)
    backward = population_stability_index(a, e, binning=binning)
    if not forward.table["smoothed"].any():
        assert not backward.table["smoothed"].any()
        assert math.isclose(float(forward), float(backward), rel_tol=1e-12, abs_tol=1e-15)


@given(values, values, n_bins)
def test_psi_table_version_equals_raw_version(e, a, k):
    binning = fit_binning(e, n_bins=k)
    rows_e = [(int(i), None, 1, None) for i in binning.assign(e)]
    rows_a = [(int(i), None, 1, None) for i in binning.assign(a)]
    te = CountTable.from_rows(rows_e, binning=binning, labeled=False)
    ta = CountTable.from_rows(rows_a, binning=binning, labeled=False)
    raw = population_stability_index(e, a, n_bins=k)
    assert float(raw) == float(population_stability_index(te, ta))


labeled = st.lists(
    st.tuples(st.one_of(st.integers(0, 6).map(float), st.none()), st.integers(0, 1)),
    min_size=2,
    max_size=60,
).filter(lambda rows: len({y for _, y in rows}) == 2)


@given(labeled, n_bins)
def test_iv_is_non_negative_and_table_version_agrees(rows, k):
    x = [v for v, _ in rows]
    y = [label for _, label in rows]
    r = information_value(x, y, n_bins=k)
    assert float(r) >= 0
    assert math.isfinite(float(r))
    binning = fit_binning(x, n_bins=k)
    table = CountTable.from_bins(binning.assign(x), binning, y)
    assert float(r) == float(information_value_from_counts(table))


@settings(max_examples=50)
@given(labeled, st.integers(0, 2**32 - 1))
def test_iv_is_invariant_to_row_order_and_weight_scale(rows, seed):
    rng = np.random.default_rng(seed)
    x = _as_array([v for v, _ in rows])
    y = np.array([label for _, label in rows])
    w = rng.uniform(0.1, 3.0, len(rows))
    binning = Binning("numeric", edges=(1.0, 3.0, 5.0))
    order = rng.permutation(len(rows))
    r1 = information_value(x, y, binning=binning, sample_weight=w)
    r2 = information_value(x[order], y[order], binning=binning, sample_weight=w[order] * 37.0)
    assert math.isclose(float(r1), float(r2), rel_tol=1e-9, abs_tol=1e-12)
