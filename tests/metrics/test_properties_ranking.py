"""Invariants of the ranking figures (hypothesis), and the docstring examples."""

from __future__ import annotations

import doctest
import importlib
import warnings
from dataclasses import astuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.errors import DegenerateDataWarning
from riskmon.metrics import (
    CountTable,
    average_precision,
    gini,
    ks_statistic,
    ks_statistic_from_counts,
    lift_table,
    lift_table_from_counts,
    roc_auc,
    roc_auc_from_counts,
)

TOL = 1e-10


@st.composite
def labeled_scores(draw, *, weighted=False):
    """At least one bad and one good, scores on a coarse grid so ties are frequent."""
    n = draw(st.integers(min_value=2, max_value=60))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    y[0], y[1] = 0, 1
    s = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    w = None
    if weighted:
        w = np.asarray(draw(st.lists(st.integers(1, 20), min_size=n, max_size=n)), float) / 4
    return np.asarray(y), np.asarray(s, dtype=float), w


def figures(y, s, w=None, *, higher_is_riskier=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # DeLong with one bad
        ks = ks_statistic(y, s, sample_weight=w, higher_is_riskier=higher_is_riskier)
        auc = roc_auc(y, s, sample_weight=w, higher_is_riskier=higher_is_riskier)
    return ks.statistic, auc.auc


@settings(max_examples=150, deadline=None)
@given(data=labeled_scores(weighted=True), seed=st.integers(0, 2**32 - 1))
def test_row_order_does_not_matter(data, seed):
    y, s, w = data
    order = np.random.default_rng(seed).permutation(y.size)
    before, after = figures(y, s, w), figures(y[order], s[order], w[order])
    assert before == pytest.approx(after, abs=TOL)


@settings(max_examples=150, deadline=None)
@given(data=labeled_scores(weighted=True))
def test_strictly_increasing_transform_does_not_matter(data):
    y, s, w = data
    transformed = np.exp(s / 3) * 1000 + 7
    assert figures(y, s, w) == pytest.approx(figures(y, transformed, w), abs=TOL)
    assert average_precision(y, s, sample_weight=w) == pytest.approx(
        average_precision(y, transformed, sample_weight=w), abs=TOL
    )


@settings(max_examples=150, deadline=None)
@given(data=labeled_scores(weighted=True), factor=st.sampled_from([0.001, 0.5, 3.0, 1e6]))
def test_scaling_all_weights_does_not_matter(data, factor):
    y, s, w = data
    assert figures(y, s, w) == pytest.approx(figures(y, s, w * factor), abs=TOL)


@settings(max_examples=150, deadline=None)
@given(data=labeled_scores(weighted=True))
def test_flipping_direction_gives_one_minus_auc_and_same_ks(data):
    y, s, w = data
    ks_up, auc_up = figures(y, s, w)
    ks_down, auc_down = figures(y, s, w, higher_is_riskier=False)
    assert auc_down == pytest.approx(1 - auc_up, abs=TOL)
    assert ks_down == pytest.approx(ks_up, abs=TOL)
    # negating the score and the direction together changes nothing
    assert figures(y, -s, w, higher_is_riskier=False) == pytest.approx((ks_up, auc_up), abs=TOL)


@settings(max_examples=100, deadline=None)
@given(data=labeled_scores(weighted=True), value=st.floats(-1e6, 1e6))
def test_all_tied_gives_ks_zero_and_auc_half(data, value):
    y, _, w = data
    ks, auc = figures(y, np.full(y.size, value), w)
    assert ks == 0.0
    assert auc == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        assert gini(y, np.full(y.size, value), sample_weight=w).gini == 0.0


@settings(max_examples=100, deadline=None)
@given(data=labeled_scores(weighted=True))
def test_perfect_separation_gives_ks_one_and_auc_one(data):
    y, s, w = data
    separated = s + 100 * y  # every bad above every good
    assert figures(y, separated, w) == (1.0, 1.0)


@settings(max_examples=150, deadline=None)
@given(data=labeled_scores())
def test_from_counts_on_group_by_rows_equals_array_function(data):
    y, s, _ = data
    # the rows a GROUP BY score, label query would return, in a shuffled order
    keys, counts = np.unique(np.c_[s, y], axis=0, return_counts=True)
    rows = [(k[0], int(k[1]), int(c), None) for k, c in zip(keys, counts, strict=True)][::-1]
    table = CountTable.from_rows(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        # assert_equal treats NaN (an undefined DeLong error) as equal to NaN
        np.testing.assert_equal(
            astuple(ks_statistic_from_counts(table)), astuple(ks_statistic(y, s))
        )
        np.testing.assert_equal(astuple(roc_auc_from_counts(table)), astuple(roc_auc(y, s)))
        assert lift_table_from_counts(table, n_groups=4).equals(lift_table(y, s, n_groups=4))


MODULES = [
    "_ranking",
    "_discrimination",
    "_curves",
    "_lift",
    "_cutoff",
    "_costs",
    "_regression",
    "_bootstrap",
]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"riskmon.metrics.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if module != "_ranking":
        assert result.attempted > 0
