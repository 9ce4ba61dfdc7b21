"""Expected performance from PDs: the worked examples of FORMULAS.md, brute force over all
pairs and outcomes, and a Monte-Carlo simulation of Bernoulli outcomes."""

from __future__ import annotations

import doctest
import importlib
import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    EXACT_MAX_LOANS,
    defaults_interval,
    expected_performance,
    expected_performance_from_sums,
    poisson_binomial_pmf,
)

LOAN_LEVEL = [0.02, 0.05, 0.08, 0.10, 0.20, 0.40]


def pair_weights(p: np.ndarray) -> np.ndarray:
    """C[i, j] = 1 when loan i is riskier than j, ½ when tied, 0 on the diagonal."""
    c = (p[:, None] > p[None, :]).astype(float) + 0.5 * (p[:, None] == p[None, :])
    np.fill_diagonal(c, 0.0)
    return c


def brute_auc(p: np.ndarray, *, with_self: bool = False) -> float:
    """Σ_{i≠j} p_i(1 − p_j)·C_ij / Σ_{i≠j} p_i(1 − p_j), by a double loop."""
    num = den = 0.0
    for i, j in itertools.product(range(len(p)), repeat=2):
        if i == j and not with_self:
            continue
        weight = p[i] * (1 - p[j])
        num += weight * (1.0 if p[i] > p[j] else 0.5 if p[i] == p[j] else 0.0)
        den += weight
    return num / den


def test_worked_example_of_bins() -> None:
    r = expected_performance_from_sums([500, 300, 200], [5.0, 9.0, 20.0], [0.05, 0.27, 2.0])
    assert r.default_rate == pytest.approx(0.034, abs=1e-6)
    assert r.defaults_variance == pytest.approx(31.68, abs=1e-6)
    assert r.auc == pytest.approx(0.746858, abs=1e-6)
    assert r.ks == pytest.approx(0.401900, abs=1e-6)
    assert r.gini == pytest.approx(2 * 0.746858 - 1, abs=2e-6)
    # the same loans at loan level: equal PDs tied, as the bins tie them
    loans = np.repeat([0.01, 0.03, 0.10], [500, 300, 200])
    same = expected_performance(loans)
    assert same.auc == pytest.approx(r.auc, abs=1e-12)
    assert same.ks == pytest.approx(r.ks, abs=1e-12)


def test_worked_example_of_loans_and_cbpe() -> None:
    p = np.array(LOAN_LEVEL)
    assert expected_performance(p).auc == pytest.approx(0.816270, abs=1e-6)
    assert brute_auc(p) == pytest.approx(0.816270, abs=1e-6)
    # counting i = j as CBPE does gives FORMULAS.md's other figure: not what riskmon computes
    assert brute_auc(p, with_self=True) == pytest.approx(0.770702, abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_against_brute_force_over_all_pairs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(1, 12, size=40), 2)  # rounded: ties within and across
    r = expected_performance(p)
    assert r.auc == pytest.approx(brute_auc(p), abs=1e-12)
    assert r.defaults == pytest.approx(p.sum())
    assert r.defaults_variance == pytest.approx((p * (1 - p)).sum())
    # bins of sorted loans: the pairs within a bin tied
    order = np.sort(p)
    groups = np.array_split(np.arange(40), 6)
    tied = np.concatenate([np.full(len(g), 1000.0 + k) for k, g in enumerate(groups)])
    binned = expected_performance_from_sums(
        [len(g) for g in groups],
        [order[g].sum() for g in groups],
        [(order[g] ** 2).sum() for g in groups],
    )
    num = (order[:, None] * (1 - order[None, :]) * pair_weights(tied)).sum()
    den = order.sum() * (1 - order).sum() - (order * (1 - order)).sum()
    assert binned.auc == pytest.approx(num / den, abs=1e-12)
    # KS of the expected counts: the largest gap of the cumulative shares at a bin's edge
    d = np.array([order[g].sum() for g in groups])
    g_ = np.array([len(g) for g in groups]) - d
    gaps = np.abs(np.cumsum(d) / d.sum() - np.cumsum(g_) / g_.sum())
    assert binned.ks == pytest.approx(gaps.max(), abs=1e-12)


def test_pmf_against_every_outcome() -> None:
    p = np.array([0.1, 0.1, 0.3, 0.5, 0.7, 0.05, 0.05, 0.9])
    values, counts = np.unique(p, return_counts=True)
    pmf = poisson_binomial_pmf(counts, values)
    brute = np.zeros(len(p) + 1)
    for outcome in itertools.product((0, 1), repeat=len(p)):
        y = np.array(outcome)
        brute[y.sum()] += np.prod(np.where(y == 1, p, 1 - p))
    np.testing.assert_allclose(pmf, brute, atol=1e-14)


def test_monte_carlo_of_bernoulli_outcomes() -> None:
    rng = np.random.default_rng(28)
    p = np.round(rng.beta(1.2, 15, size=60), 3)
    r = expected_performance(p)
    sims = 20_000
    y = (rng.random((sims, p.size)) < p).astype(float)
    c = pair_weights(p)
    u = np.einsum("si,ij,sj->s", y, c, 1 - y)  # Mann-Whitney U of each simulated book
    bg = y.sum(axis=1) * (1 - y).sum(axis=1)
    # E[U] / E[B·G] by the ratio of the simulated sums, with its delta-method error
    ratio = u.sum() / bg.sum()
    error = math.sqrt(np.var(u - ratio * bg) * sims) / bg.sum()
    assert abs(r.auc - ratio) < 4 * error, (r.auc, ratio, error)
    # each simulated AUC is sklearn's on its outcomes (ties ½): the U above is the AUC's
    k = int(np.flatnonzero((y.sum(axis=1) > 0) & (y.sum(axis=1) < p.size))[0])
    assert u[k] / bg[k] == pytest.approx(roc_auc_score(y[k], p))
    d = y.sum(axis=1)
    assert abs(d.mean() - r.defaults) < 4 * math.sqrt(r.defaults_variance / sims)
    assert d.var() == pytest.approx(r.defaults_variance, rel=0.05)
    low, high = r.interval
    assert r.interval_method == "exact"
    assert ((d >= low) & (d <= high)).mean() >= 0.95


def test_interval_switches_to_normal_beyond_the_exact_limit() -> None:
    small = defaults_interval([EXACT_MAX_LOANS], [0.02])
    assert small[1] == "exact"
    (low, high), method = defaults_interval([EXACT_MAX_LOANS + 1], [0.02])
    assert method == "normal"
    mean, sd = (EXACT_MAX_LOANS + 1) * 0.02, math.sqrt((EXACT_MAX_LOANS + 1) * 0.02 * 0.98)
    assert low == pytest.approx(mean - 1.959964 * sd, abs=1e-5)
    assert high == pytest.approx(mean + 1.959964 * sd, abs=1e-5)
    # at the limit the exact and normal intervals are close
    assert small[0][0] == pytest.approx(low, abs=2)
    assert small[0][1] == pytest.approx(high, abs=2)


def test_degenerate_and_bad_input() -> None:
    with pytest.warns(DegenerateDataWarning, match="no \\(default, survivor\\) pair"):
        r = expected_performance([0.0, 0.0, 0.0])
    assert math.isnan(r.auc)
    assert r.defaults == 0
    assert r.interval == (0.0, 0.0)
    with pytest.raises(InvalidDataError, match="probabilities in \\[0, 1\\] in 'pd'"):
        expected_performance([0.1, 1.5])
    with pytest.raises(InvalidDataError, match="pd_sq_sum <= pd_sum <= n"):
        expected_performance_from_sums([10], [11.0], [1.0])
    with pytest.raises(InvalidDataError, match="one length"):
        expected_performance_from_sums([10, 5], [1.0], [0.1])
    with pytest.raises(InvalidDataError, match="at least one loan"):
        expected_performance_from_sums([0], [0.0], [0.0])


@pytest.mark.parametrize("module", ["riskmon.metrics._expected", "riskmon.metrics._vintages"])
def test_docstring_examples(module: str) -> None:
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_the_poisson_binomial_pmf_convolves_scipys_binomial_pmfs_exactly():
    # the binomial pmf is evaluated as scipy.stats.binom.pmf evaluates it, to the bit, PDs of
    # exactly 0 and 1 included
    from scipy.stats import binom

    rng = np.random.default_rng(3)
    counts = np.r_[rng.integers(0, 40, 12), 5, 7]
    pds = np.r_[rng.random(12), 0.0, 1.0]
    expected = np.ones(1)
    for count, p in zip(counts, pds, strict=True):
        if count > 0:
            expected = np.convolve(expected, binom.pmf(np.arange(count + 1), count, p))
    assert np.array_equal(poisson_binomial_pmf(counts, pds), expected)
