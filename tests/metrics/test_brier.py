"""Brier score and Spiegelhalter's test: against scikit-learn, the textbook form of z, and the
moment (sums) forms against the row forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import brier_score_loss

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    CalibrationSums,
    brier_score,
    brier_score_from_sums,
    spiegelhalter_test,
    spiegelhalter_test_from_sums,
)


def sample(seed, n=2000, *, weighted=False, bias=1.0):
    rng = np.random.default_rng(seed)
    p = rng.beta(1, 12, n)
    y = (rng.random(n) < np.clip(bias * p, 0, 1)).astype(int)
    w = rng.uniform(0.2, 4.0, n) if weighted else None
    return y, p, w


def spiegelhalter_textbook(y, p):
    """Z = (Brier − mean p(1 − p)) / √(Σ p(1 − p)(1 − 2p)² / N²), unweighted."""
    n = y.size
    brier = np.mean((y - p) ** 2)
    z = (brier - np.mean(p * (1 - p))) / np.sqrt(np.sum(p * (1 - p) * (1 - 2 * p) ** 2) / n**2)
    return z, 2 * stats.norm.sf(abs(z))


# --------------------------------------------------------------------------- Brier
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_brier_matches_sklearn(seed, weighted):
    y, p, w = sample(seed, weighted=weighted)
    assert brier_score(y, p, sample_weight=w) == pytest.approx(
        brier_score_loss(y, p, sample_weight=w), rel=1e-12
    )


def test_brier_hand_computed():
    # (0.1² + 0.4² + 0.6² + 0.2²) / 4 = 0.57 / 4
    assert brier_score([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8]) == pytest.approx(0.1425)
    # weights 1, 1, 2, 0: (0.01 + 0.16 + 2·0.36) / 4
    w = [1, 1, 2, 0]
    assert brier_score([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8], sample_weight=w) == pytest.approx(
        0.89 / 4
    )
    assert brier_score([0, 1], [0.0, 1.0]) == 0.0


# --------------------------------------------------------------------------- Spiegelhalter
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bias", [1.0, 1.3])
def test_spiegelhalter_matches_the_textbook_form(seed, bias):
    y, p, _ = sample(seed, bias=bias)
    z, pvalue = spiegelhalter_textbook(y, p)
    r = spiegelhalter_test(y, p)
    assert r.statistic == pytest.approx(z, rel=1e-10)
    assert r.pvalue == pytest.approx(pvalue, rel=1e-10)
    assert r.brier == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert float(r) == r.statistic


def test_spiegelhalter_hand_computed():
    # Σ(y − p)(1 − 2p) = −0.08 − 0.08 + 0.12 − 0.12 = −0.16;
    # Σ(1 − 2p)² p(1 − p) = 0.0576 + 0.0096 + 0.0096 + 0.0576 = 0.1344
    r = spiegelhalter_test([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    z = -0.16 / math.sqrt(0.1344)
    assert r.statistic == pytest.approx(z, rel=1e-12)
    assert r.pvalue == pytest.approx(math.erfc(abs(z) / math.sqrt(2)), rel=1e-12)


def test_weighted_spiegelhalter_follows_its_definition():
    # z = Σw(y − p)(1 − 2p) / √Σw²(1 − 2p)²p(1 − p); unit weights are no weights
    y, p, w = sample(3, n=500, weighted=True)
    numerator = np.sum(w * (y - p) * (1 - 2 * p))
    denominator = math.sqrt(np.sum(w**2 * (1 - 2 * p) ** 2 * p * (1 - p)))
    r = spiegelhalter_test(y, p, sample_weight=w)
    assert r.statistic == pytest.approx(numerator / denominator, rel=1e-12)
    assert spiegelhalter_test(y, p, sample_weight=np.ones(y.size)) == spiegelhalter_test(y, p)


def test_spiegelhalter_rejects_at_the_nominal_rate_under_calibrated_pds():
    rng = np.random.default_rng(11)
    p = rng.beta(1, 8, (3000, 400))
    y = (rng.random(p.shape) < p).astype(int)
    rejected = [spiegelhalter_test(y[i], p[i]).pvalue < 0.05 for i in range(p.shape[0])]
    assert 0.04 < np.mean(rejected) < 0.06


def test_spiegelhalter_finds_pds_that_are_too_low():
    y, p, _ = sample(5, n=20_000, bias=1.4)
    assert spiegelhalter_test(y, p).pvalue < 1e-6


@pytest.mark.parametrize("p_value", [0.0, 0.5, 1.0])
def test_spiegelhalter_not_available_without_variance(p_value):
    y, p = [0, 1, 1], [p_value] * 3
    with pytest.warns(DegenerateDataWarning, match="no variance"):
        r = spiegelhalter_test(y, p)
    assert math.isnan(r.statistic)
    assert math.isnan(r.pvalue)
    with pytest.warns(DegenerateDataWarning, match="no variance"):
        r = spiegelhalter_test_from_sums(CalibrationSums.from_arrays(y, p))
    assert math.isnan(r.statistic)


def test_no_weight_is_not_available():
    with pytest.warns(DegenerateDataWarning, match="no rows of positive weight"):
        assert math.isnan(brier_score([0, 1], [0.1, 0.2], sample_weight=[0, 0]))
    with pytest.warns(DegenerateDataWarning, match="no rows of positive weight"):
        assert math.isnan(brier_score([], []))


# --------------------------------------------------------------------------- sums
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_sums_forms_equal_the_row_forms(seed, weighted):
    y, p, w = sample(seed, weighted=weighted, bias=1.15)
    sums = CalibrationSums.from_arrays(y, p, sample_weight=w)
    assert sums.weighted == weighted
    assert brier_score_from_sums(sums) == pytest.approx(
        brier_score(y, p, sample_weight=w), rel=1e-12
    )
    # from sums Spiegelhalter's test is the unweighted one
    by_sums = spiegelhalter_test_from_sums(sums)
    by_rows = spiegelhalter_test(y, p)
    assert by_sums.statistic == pytest.approx(by_rows.statistic, rel=1e-9)
    assert by_sums.pvalue == pytest.approx(by_rows.pvalue, rel=1e-9)
    assert by_sums.brier == pytest.approx(by_rows.brier, rel=1e-12)


def test_sums_of_cells_add_up_to_the_sums_of_all_rows():
    y, p, w = sample(9, weighted=True)
    cell = np.random.default_rng(9).integers(0, 7, y.size)
    cells = [
        CalibrationSums.from_arrays(y[cell == c], p[cell == c], sample_weight=w[cell == c])
        for c in range(7)
    ]
    whole = CalibrationSums.from_arrays(y, p, sample_weight=w)
    for added in (sum(cells), cells[0] + cells[1] + sum(cells[2:])):
        assert isinstance(added, CalibrationSums)
        for name in whole.__dataclass_fields__:
            assert getattr(added, name) == pytest.approx(getattr(whole, name), rel=1e-12)


def test_sums_are_the_documented_moments():
    y, p = np.array([0, 1, 1, 0]), np.array([0.1, 0.2, 0.5, 0.9])
    s = CalibrationSums.from_arrays(y, p)
    assert (s.n, s.y) == (4.0, 2.0)
    assert s.p == pytest.approx(1.7)
    assert s.p2 == pytest.approx(0.01 + 0.04 + 0.25 + 0.81)
    assert s.p3 == pytest.approx(0.001 + 0.008 + 0.125 + 0.729)
    assert s.p4 == pytest.approx(0.0001 + 0.0016 + 0.0625 + 0.6561)
    assert s.yp == pytest.approx(0.7)
    assert (s.w, s.wy, s.wp2, s.wyp) == (None, None, None, None)
    # weights 2, 3 and 0: the zero-weight row is left out of every sum
    s = CalibrationSums.from_arrays([1, 0, 1], [0.5, 0.2, 0.3], sample_weight=[2, 3, 0])
    assert (s.n, s.y, s.p, s.yp) == (2.0, 1.0, 0.7, 0.5)
    assert (s.w, s.wy, s.wyp) == (5.0, 2.0, 1.0)
    assert s.wp2 == pytest.approx(2 * 0.25 + 3 * 0.04)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.floats(0, 1), st.floats(0.01, 10)), min_size=2, max_size=80
    ),
    st.integers(1, 5),
)
def test_sums_split_anywhere_give_the_same_figures(rows, parts):
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    cuts = np.array_split(np.arange(y.size), parts)
    total = sum(CalibrationSums.from_arrays(y[c], p[c], sample_weight=w[c]) for c in cuts)
    assert brier_score_from_sums(total) == pytest.approx(
        brier_score(y, p, sample_weight=w), rel=1e-9, abs=1e-12
    )


def test_weighted_and_unweighted_sums_do_not_add():
    weighted = CalibrationSums.from_arrays([0, 1], [0.2, 0.6], sample_weight=[1, 2])
    with pytest.raises(InvalidDataError, match="both weighted or both unweighted"):
        weighted + CalibrationSums.from_arrays([1], [0.5])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: brier_score([0, 1], [0.1, 1.2]),
            r"probabilities in \[0, 1\] in 'y_pd', got \[1.2\]",
        ),
        (lambda: brier_score([0, 1], [0.1, np.nan]), r"finite numeric probabilities in 'y_pd'"),
        (lambda: brier_score([0, 2], [0.1, 0.2]), r"label values 0 and 1 in 'y_true', got \[2\]"),
        (lambda: spiegelhalter_test([0, 1], [0.1]), r"Expected 2 rows in 'y_pd' to match y_true"),
        (
            lambda: spiegelhalter_test([0, 1], [0.1, 0.2], sample_weight=[1, -1]),
            r"non-negative weights in 'sample_weight'",
        ),
        (
            lambda: CalibrationSums(2, 1, 0.3, 0.05, -0.001, 0.0001, 0.2),
            r"finite non-negative sum in 'p3', got -0.001",
        ),
        (
            lambda: CalibrationSums(2, 1, float("nan"), 0.05, 0.01, 0.0001, 0.2),
            r"finite non-negative sum in 'p', got nan",
        ),
        (
            lambda: CalibrationSums(2, 1, 0.3, 0.05, 0.01, 0.0001, 0.2, w=3.0),
            r"Expected all of the weighted sums \['w', 'wy', 'wp2', 'wyp'\] or none, got \['w'\]",
        ),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(InvalidDataError, match=message):
        call()
