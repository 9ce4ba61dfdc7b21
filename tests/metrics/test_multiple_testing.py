"""Benjamini–Hochberg adjusted p-values against scipy.stats, the paper and their definition."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import false_discovery_control

from riskmon.errors import InvalidDataError
from riskmon.metrics import benjamini_hochberg

#: Benjamini and Hochberg (1995), section 4: the 15 p-values of the thrombolysis study
PAPER = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240]
PAPER += [0.4262, 0.5719, 0.6528, 0.7590, 1.0]

#: p-values, with ties, zeros and ones likely
p_values = st.lists(
    st.one_of(
        st.floats(min_value=0.0, max_value=1.0),
        st.sampled_from([0.0, 1.0, 0.05, 0.5]),
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(p_values)
def test_equal_scipy_to_the_bit(ps: list[float]) -> None:
    got = benjamini_hochberg(ps)
    want = false_discovery_control(ps, method="bh") if len(ps) > 1 else np.asarray(ps, float)
    assert got.tolist() == np.asarray(want, dtype=np.float64).tolist()


@settings(max_examples=200, deadline=None)
@given(p_values)
def test_the_adjusted_p_values_are_their_definition(ps: list[float]) -> None:
    """min over j >= k of p₍ⱼ₎·m/j, at most 1, for the k-th smallest, computed by loops."""
    got = benjamini_hochberg(ps)
    m = len(ps)
    ranked = sorted(ps)
    for p, q in zip(ps, got, strict=True):
        k = ranked.index(p) + 1  # a tie's first rank: the minimum over j >= k is the same
        want = min(min(ranked[j - 1] * m / j for j in range(k, m + 1)), 1.0)
        assert q == pytest.approx(want, rel=1e-15, abs=0.0)
        assert q >= p


def test_the_papers_example_rejects_its_four_smallest_at_five_percent() -> None:
    adjusted = benjamini_hochberg(PAPER)
    assert (adjusted < 0.05).tolist() == [True] * 4 + [False] * 11


@pytest.mark.parametrize(
    ("ps", "message"),
    [([0.1, 1.5], r"\[0, 1\].*1\.5"), ([0.1, float("nan")], "nan"), ([[0.1, 0.2]], "shape")],
)
def test_what_is_not_p_values_is_refused_naming_it(ps: object, message: str) -> None:
    with pytest.raises(InvalidDataError, match=message):
        benjamini_hochberg(ps)


def test_the_examples_in_the_docstring_hold() -> None:
    module = importlib.import_module("riskmon.metrics._multiple_testing")
    failed, tried = doctest.testmod(module)
    assert (failed, tried) == (0, 1)
