"""Jeffreys and binomial tests of a grade's PD against scipy.stats and independent integrals."""

from __future__ import annotations

import doctest
import importlib
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import binomial_test, jeffreys_test

TOL = 1e-12

#: (D, N, PD): small and large grades, no defaults, all defaults, PDs from 0.03 % to 40 %
GRADES = [
    (7, 200, 0.025),
    (0, 50, 0.01),
    (50, 50, 0.3),
    (3, 1000, 0.0003),
    (120, 10_000, 0.01),
    (45, 100, 0.4),
    (1, 1, 0.5),
]


# --------------------------------------------------------------------------- Jeffreys
def test_jeffreys_reproduces_the_ecb_example():
    # ECB instructions §2.5.3.1: N = 200, D = 7, PD = 2.5 % gives 0.1779
    r = jeffreys_test(7, 200, 0.025)
    assert round(r.pvalue, 4) == 0.1779
    assert r.statistic == 0.035
    assert float(r) == 0.035


@pytest.mark.parametrize(("d", "n", "pd"), [*GRADES, (2.4, 17.3, 0.08), (0.0, 0.5, 0.2)])
def test_jeffreys_matches_the_beta_law(d, n, pd):
    posterior = stats.beta(d + 0.5, n - d + 0.5)
    r = jeffreys_test(d, n, pd, confidence_level=0.9)
    assert r.pvalue == pytest.approx(posterior.cdf(pd), rel=TOL, abs=1e-300)
    assert r.pvalue_over == pytest.approx(posterior.sf(pd), rel=TOL, abs=1e-300)
    assert r.interval == pytest.approx((posterior.ppf(0.05), posterior.ppf(0.95)), rel=1e-10)
    assert r.confidence_level == 0.9
    assert (r.defaults, r.n, r.pd) == (d, n, pd)


def test_jeffreys_pvalue_falls_as_defaults_rise_and_directions_add_to_one():
    pvalues = [jeffreys_test(d, 200, 0.025).pvalue for d in range(0, 20)]
    assert all(a > b for a, b in itertools.pairwise(pvalues))
    r = jeffreys_test(12, 200, 0.025)
    assert r.pvalue + r.pvalue_over == pytest.approx(1, abs=TOL)
    assert r.pvalue < 0.01  # 12 defaults where 5 are expected: the PD is too low


@settings(max_examples=150, deadline=None)
@given(
    st.floats(0.5, 1e5),
    st.floats(0, 1),
    st.floats(1e-4, 0.5),
)
def test_jeffreys_interval_brackets_the_posterior_median(n, share, pd):
    d = share * n
    r = jeffreys_test(d, n, pd)
    median = stats.beta.median(d + 0.5, n - d + 0.5)
    assert r.interval[0] <= median <= r.interval[1]
    # the p-value is the posterior probability of a default rate at or below the PD
    if abs(pd - median) > 1e-9:
        assert (r.pvalue < 0.5) == (pd < median)


@pytest.mark.parametrize("pd", [0.02, np.nan])  # the mean PD of no loans is NaN
def test_jeffreys_of_an_empty_grade_is_not_available(pd):
    with pytest.warns(DegenerateDataWarning, match="no obligors"):
        r = jeffreys_test(0, 0, pd)
    assert math.isnan(r.pvalue)
    assert math.isnan(r.statistic)


def test_effective_counts_may_exceed_n_by_rounding_only():
    n = 200 / 3
    r = jeffreys_test(n * (1 + 1e-15), n, 0.02)
    assert r.defaults == n
    with pytest.raises(InvalidDataError, match="Expected defaults <= n"):
        jeffreys_test(n * 1.001, n, 0.02)


# --------------------------------------------------------------------------- binomial
@pytest.mark.parametrize(("d", "n", "pd"), GRADES)
def test_binomial_matches_scipy_on_whole_counts(d, n, pd):
    r = binomial_test(d, n, pd)
    assert r.pvalue == pytest.approx(stats.binom.sf(d - 1, n, pd), rel=1e-11, abs=1e-300)
    assert r.pvalue_over == pytest.approx(stats.binom.cdf(d, n, pd), rel=1e-11, abs=1e-300)
    assert r.statistic == d
    assert r.expected == pytest.approx(n * pd)


@pytest.mark.parametrize(("n", "pd"), [(200, 0.025), (10_000, 0.01), (50, 0.3), (20, 0.001)])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.001])
def test_binomial_critical_value_matches_scipy(n, pd, alpha):
    r = binomial_test(0, n, pd, alpha=alpha)
    # binom.isf(α) is the smallest k with P(X > k) <= α, so P(X >= k + 1) <= α
    assert r.critical_value == stats.binom.isf(alpha, n, pd) + 1
    assert stats.binom.sf(r.critical_value - 1, n, pd) <= alpha
    assert stats.binom.sf(r.critical_value - 2, n, pd) > alpha


def test_binomial_critical_value_beyond_the_grade_when_nothing_is_significant():
    # P(X >= 5) = 0.5**5 = 0.031 > 0.01 for 5 obligors with PD 50 %: no count is significant
    assert binomial_test(0, 5, 0.5).critical_value == 6


@pytest.mark.parametrize(("d", "n"), [(2.5, 40.0), (0.3, 10.7), (9.9, 10.0), (3.0, 12.25)])
def test_binomial_on_effective_counts_is_the_incomplete_beta_extension(d, n):
    pd = 0.08
    r = binomial_test(d, n, pd)
    # P(X >= x) = P(Beta(x, N − x + 1) <= p): the order-statistic form of the binomial tail
    assert r.pvalue == pytest.approx(stats.beta.cdf(pd, d, n - d + 1), rel=1e-11)
    # P(X <= x) = 1 − P(X >= x + 1)
    assert r.pvalue_over == pytest.approx(stats.beta.sf(pd, d + 1, n - d), rel=1e-11)


def test_binomial_extension_lies_between_the_whole_counts():
    whole = [binomial_test(d, 60, 0.05).pvalue for d in (3, 4)]
    between = [binomial_test(d, 60, 0.05).pvalue for d in (3.25, 3.5, 3.75)]
    assert whole[0] > between[0] > between[1] > between[2] > whole[1]
    assert binomial_test(4 - 1e-9, 60, 0.05).pvalue == pytest.approx(whole[1], rel=1e-6)


# --------------------------------------------------------------------------- correlated
def vasicek_pd(pd, rho, z):
    return stats.norm.cdf((stats.norm.ppf(pd) - np.sqrt(rho) * z) / np.sqrt(1 - rho))


def hermite_tail(d, n, pd, rho, nodes=300):
    """P(X >= d) under the one-factor model by Gauss–Hermite quadrature (probabilists')."""
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    return float(np.dot(w, stats.binom.sf(d - 1, n, vasicek_pd(pd, rho, z))) / np.sqrt(2 * np.pi))


@pytest.mark.parametrize(
    ("d", "n", "pd", "rho"),
    [
        (7, 200, 0.025, 0.05),
        (10, 200, 0.025, 0.2),
        (2, 30, 0.1, 0.12),
        (0, 40, 0.05, 0.3),
        (25, 25, 0.2, 0.24),
        (3, 500, 0.002, 0.15),
    ],
)
def test_correlated_binomial_matches_gauss_hermite(d, n, pd, rho):
    r = binomial_test(d, n, pd, correlation=rho)
    assert r.pvalue == pytest.approx(hermite_tail(d, n, pd, rho), rel=1e-8, abs=1e-14)
    assert r.pvalue_over == pytest.approx(1 - hermite_tail(d + 1, n, pd, rho), rel=1e-8, abs=1e-14)
    assert r.correlation == rho


@pytest.mark.parametrize(
    ("d", "n", "pd", "rho"),
    [(130, 10_000, 0.01, 0.01), (40, 100_000, 0.0003, 0.002), (900, 50_000, 0.015, 0.12)],
)
def test_correlated_binomial_matches_monte_carlo_on_large_grades(d, n, pd, rho):
    # the systematic factor drawn, the binomial law given it exact: mean and standard error
    z = np.random.default_rng(20240611).standard_normal(400_000)
    conditional = stats.binom.sf(d - 1, n, vasicek_pd(pd, rho, z))
    mean, se = conditional.mean(), conditional.std(ddof=1) / np.sqrt(z.size)
    assert abs(binomial_test(d, n, pd, correlation=rho).pvalue - mean) < 4 * se + 1e-12


def test_correlated_binomial_tends_to_the_binomial_as_correlation_vanishes():
    for d in (0, 3, 7, 12, 30):
        plain = binomial_test(d, 200, 0.025)
        almost = binomial_test(d, 200, 0.025, correlation=1e-10)
        assert almost.pvalue == pytest.approx(plain.pvalue, rel=1e-6, abs=1e-15)
        assert almost.pvalue_over == pytest.approx(plain.pvalue_over, rel=1e-6, abs=1e-15)
        assert almost.critical_value == plain.critical_value


def test_correlation_makes_many_defaults_less_surprising():
    # above the mean (5 expected) P(X >= D) grows with ρ; well below it P(X >= D) shrinks
    for d in (8, 12, 20):
        pvalues = [binomial_test(d, 200, 0.025, correlation=rho).pvalue for rho in (0, 0.05, 0.2)]
        assert pvalues[0] < pvalues[1] < pvalues[2]
    assert (
        binomial_test(2, 200, 0.025, correlation=0.2).pvalue < binomial_test(2, 200, 0.025).pvalue
    )
    crit = [binomial_test(0, 200, 0.025, correlation=rho).critical_value for rho in (0, 0.05, 0.2)]
    assert crit[0] < crit[1] < crit[2]


@pytest.mark.parametrize("rho", [0.05, 0.2])
def test_correlated_critical_value_is_where_the_tail_crosses_alpha(rho):
    n, pd, alpha = 200, 0.025, 0.01
    crit = binomial_test(0, n, pd, correlation=rho, alpha=alpha).critical_value
    assert hermite_tail(crit, n, pd, rho) <= alpha < hermite_tail(crit - 1, n, pd, rho)


@pytest.mark.parametrize(
    ("n", "pd", "rho", "alpha"),
    [
        (1, 0.4, 0.12, 0.01),
        (10.5, 0.1, 0.24, 0.05),
        (200, 0.025, 0.05, 0.01),
        (4321.7, 0.003, 0.9, 0.001),  # the guess far from the answer: searched outwards
        (20_000, 0.999, 0.03, 0.5),
        (250_000, 1e-6, 1e-6, 0.01),
    ],
)
def test_correlated_critical_value_is_the_bisection_of_the_exact_tails(
    n, pd, rho, alpha, monkeypatch
):
    from riskmon.metrics import _mixed_binomial

    exact, calls = _mixed_binomial.tail, []

    def tail(*args, **kwargs):
        calls.append(args)
        return exact(*args, **kwargs)

    monkeypatch.setattr(_mixed_binomial, "tail", tail)

    def bisected():  # the search over the exact tails alone, halving (0, n + 1]
        safe, significant = 0, int(np.ceil(n + 1))
        while significant - safe > 1:
            mid = (safe + significant) // 2
            if tail(mid, n, pd, rho, upper=True) <= alpha:
                significant = mid
            else:
                safe = mid
        return significant

    found = _mixed_binomial.critical_count(n, pd, rho, alpha)
    searched = len(calls)
    assert found == bisected()
    halving = len(calls) - searched
    # no more exact tails than the halving takes, but where the Gauss–Hermite guess is poor (ρ
    # near 1): then at most the doubling steps and a halving of their last one
    assert searched <= halving if rho < 0.5 else searched <= 2 * halving + 1


def test_correlated_far_tail_keeps_relative_accuracy():
    # 500 defaults where 300 are expected, ρ = 1e-4: P(X >= 500) ≈ 5.4e-20; the integral on a
    # fine grid of z (the tails beyond |z| = 12 hold nothing here) gives the same to 1e-8
    d, n, pd, rho = 500, 100_000, 0.003, 1e-4
    z = np.linspace(-12, 12, 400_001)
    integrand = stats.binom.sf(d - 1, n, vasicek_pd(pd, rho, z)) * stats.norm.pdf(z)
    expected = np.trapezoid(integrand, z)
    assert binomial_test(d, n, pd, correlation=rho).pvalue == pytest.approx(expected, rel=1e-8)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(1, 5_000),
    st.floats(0, 1),
    st.floats(1e-3, 0.3),
    st.sampled_from([0.0, 0.03, 0.15]),
)
def test_binomial_directions_overlap_and_fall_with_defaults(n, share, pd, rho):
    d = share * n
    r = binomial_test(d, n, pd, correlation=rho)
    # P(X >= D) + P(X <= D) >= 1 (both hold X = D)
    assert r.pvalue + r.pvalue_over >= 1 - 1e-9
    more = binomial_test(min(d + 0.5, n), n, pd, correlation=rho)
    assert more.pvalue <= r.pvalue + 1e-12
    assert more.pvalue_over >= r.pvalue_over - 1e-12


@pytest.mark.parametrize("pd", [0.02, np.nan])
def test_binomial_of_an_empty_grade_is_not_available(pd):
    with pytest.warns(DegenerateDataWarning, match="no obligors"):
        r = binomial_test(0, 0, pd)
    assert math.isnan(r.pvalue)
    assert math.isnan(r.pvalue_over)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("test", [jeffreys_test, binomial_test])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((8, 7, 0.1), r"Expected defaults <= n, got defaults \[8.0\] against n \[7.0\]"),
        ((-1, 7, 0.1), r"Expected non-negative counts in 'defaults', got \[-1.0\]"),
        ((1, -7, 0.1), r"Expected non-negative counts in 'n'"),
        ((np.nan, 7, 0.1), r"Expected finite numeric counts in 'defaults'"),
        ((1, np.inf, 0.1), r"Expected finite numeric counts in 'n'"),
        ((1, 7, np.nan), r"Expected finite numeric probabilities in 'pd'"),
        (([1, 2], 7, 0.1), r"Expected a single number for 'defaults', got shape \(2,\)"),
        ((1, "seven", 0.1), r"Expected numeric counts in 'n'"),
    ],
)
def test_bad_input_names_the_argument(test, args, message):
    with pytest.raises(InvalidDataError, match=message):
        test(*args)


@pytest.mark.parametrize(
    ("test", "args", "message"),
    [
        # the Jeffreys p-value is defined at a PD of 0 or 1 (the Beta CDF's ends), not beyond
        (jeffreys_test, (1, 7, 1.2), r"Expected probabilities in \[0, 1\] in 'pd', got \[1.2\]"),
        (binomial_test, (1, 7, -0.1), r"Expected probabilities in \[0, 1\] in 'pd', got \[-0.1\]"),
        (binomial_test, (1, 7, 1.2), r"Expected probabilities in \[0, 1\] in 'pd', got \[1.2\]"),
    ],
)
def test_a_pd_outside_the_tests_domain_is_refused(test, args, message):
    with pytest.raises(InvalidDataError, match=message):
        test(*args)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"correlation": 1.0}, r"Expected correlation in \[0, 1\), got 1.0"),
        ({"correlation": -0.1}, r"Expected correlation in \[0, 1\), got -0.1"),
        ({"correlation": float("nan")}, r"Expected correlation in \[0, 1\), got nan"),
        ({"alpha": 0.0}, r"Expected alpha in \(0, 1\), got 0.0"),
    ],
)
def test_bad_binomial_options_are_named(options, message):
    with pytest.raises(InvalidDataError, match=message):
        binomial_test(1, 10, 0.1, **options)


def test_bad_confidence_level_is_named():
    with pytest.raises(InvalidDataError, match=r"Expected confidence_level in \(0, 1\), got 1.5"):
        jeffreys_test(1, 10, 0.1, confidence_level=1.5)


@pytest.mark.parametrize("module", ["_calibration", "_hosmer_lemeshow", "_brier", "_auc_tests"])
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"riskmon.metrics.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0


@pytest.mark.parametrize(("d", "n", "pd"), [(5, 5, 1.0), (0, 5, 1.0), (0, 7, 0.0), (3, 7, 0.0)])
def test_jeffreys_is_defined_at_a_pd_of_exactly_0_or_1(d: int, n: int, pd: float) -> None:
    """The Beta CDF at the ends of its support, as scipy computes it (issue: a PD of 1.00 on
    7.6 % of a car-loan book failed every run)."""
    r = jeffreys_test(d, n, pd)
    law = stats.beta(d + 0.5, n - d + 0.5)
    assert r.pvalue == law.cdf(pd)
    assert r.pvalue_over == law.sf(pd)


@pytest.mark.parametrize("rho", [0.0, 0.12])
@pytest.mark.parametrize(
    ("d", "n", "pd"), [(0, 7, 0.0), (3, 7, 0.0), (7, 7, 1.0), (0, 7, 1.0), (6, 7, 1.0)]
)
def test_binomial_is_defined_at_a_pd_of_exactly_0_or_1(d: int, n: int, pd: float, rho: float):
    """X is N·PD for certain, whatever the correlation: the p-values scipy's exact test gives,
    and the critical count is the first count the law cannot reach above N·PD."""
    r = binomial_test(d, n, pd, correlation=rho)
    assert r.pvalue == stats.binomtest(d, n, pd, alternative="greater").pvalue
    assert r.pvalue_over == stats.binomtest(d, n, pd, alternative="less").pvalue
    # P(X >= k) is 1 up to N·PD and 0 beyond it
    assert r.critical_value == round(n * pd) + 1
    assert r.expected == n * pd


_COUNTS = st.one_of(
    st.integers(-2, 60),
    st.floats(-1.0, 60.0),
    st.sampled_from([0, 0.0, -0.0, 1e-300, math.inf, math.nan]),
)
_PDS = st.one_of(
    st.floats(-0.5, 1.5),
    st.sampled_from([0.0, 1.0, -0.0, 5e-324, 1 - 1e-16, 1, 0, math.nan]),
)


@settings(max_examples=400, deadline=None)
@given(d=_COUNTS, n=_COUNTS, pd=_PDS, closed=st.booleans())
def test_a_grade_of_plain_numbers_is_read_as_the_full_checks_read_it(
    d: float, n: float, pd: float, closed: bool
) -> None:
    """The grade of Python numbers read without numpy (``_plain_grade``) is the one the full
    checks give, bit for bit; what it does not read itself the full checks read (or refuse)."""
    module = importlib.import_module("riskmon.metrics._calibration")
    plain = module._plain_grade(d, n, pd, closed=closed)
    try:
        full = module._grade(np.float64(d), np.float64(n), np.float64(pd), closed=closed)
    except InvalidDataError:
        assert plain is None
        return
    if plain is None:  # left to the full checks: a count above N by rounding only
        assert d > n
        return

    def bits(values: tuple[float, float, float]) -> list[str]:
        return ["nan" if math.isnan(v) else v.hex() for v in values]

    assert bits(plain) == bits(full)


def test_a_grade_of_numbers_no_double_holds_is_left_to_the_full_checks() -> None:
    module = importlib.import_module("riskmon.metrics._calibration")
    assert module._plain_grade(10**400, 10**401, 0.5, closed=True) is None
    assert module._plain_grade(np.float64(1), 2.0, 0.5, closed=True) is None  # not a plain float
    assert module._plain_grade(True, 2, 0.5, closed=True) is None
    assert module._plain_grade(1, 2, 0.5, closed=True) == (1.0, 2.0, 0.5)
