"""Bootstrap confidence intervals: reproducible, stratified, fast path equals row path."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import bootstrap_ci, gini, ks_statistic, roc_auc


def sample(seed: int = 0, n: int = 800):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.25).astype(int)
    s = np.round(rng.normal(size=n) + y, 1)
    return y, s


def auc_by_hand(y, s, sample_weight=None):
    """A metric riskmon does not know: forces the row path."""
    return roc_auc(y, s, sample_weight=sample_weight).auc


def test_same_seed_same_interval_and_different_seed_differs():
    y, s = sample()
    a = bootstrap_ci(roc_auc, y, s, n_resamples=300, random_state=5)
    b = bootstrap_ci(roc_auc, y, s, n_resamples=300, random_state=5)
    c = bootstrap_ci(roc_auc, y, s, n_resamples=300, random_state=6)
    assert a == b
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.estimate == roc_auc(y, s).auc
    assert a.stratified


def test_interval_agrees_with_delong():
    # percentile interval and bootstrap standard error close to DeLong's on 800 rows
    y, s = sample(1)
    delong = roc_auc(y, s)
    boot = bootstrap_ci(roc_auc, y, s, n_resamples=2000, random_state=0)
    assert boot.std_error == pytest.approx(delong.std_error, rel=0.1)
    assert boot.ci_low == pytest.approx(delong.ci_low, abs=0.01)
    assert boot.ci_high == pytest.approx(delong.ci_high, abs=0.01)


@pytest.mark.parametrize("stratify", [True, False])
def test_count_table_path_has_the_row_path_distribution(stratify):
    # the multinomial draw over cells and the row resample differ only in random stream
    y, s = sample(2, 600)
    fast = bootstrap_ci(roc_auc, y, s, n_resamples=3000, random_state=1, stratify=stratify)
    rows = bootstrap_ci(auc_by_hand, y, s, n_resamples=3000, random_state=1, stratify=stratify)
    assert fast.estimate == rows.estimate
    assert fast.std_error == pytest.approx(rows.std_error, rel=0.08)
    assert fast.ci_low == pytest.approx(rows.ci_low, abs=0.006)
    assert fast.ci_high == pytest.approx(rows.ci_high, abs=0.006)


def test_stratified_resamples_keep_the_bad_count():
    y, s = sample(3, 200)
    seen = []

    def bad_count(yy, ss):
        seen.append(int(np.sum(yy)))
        return float(np.mean(ss))

    bootstrap_ci(bad_count, y, s, n_resamples=50)
    assert set(seen) == {int(y.sum())}


def test_perfect_separation_gives_a_point_interval():
    y = np.r_[np.zeros(30), np.ones(10)]
    s = np.r_[np.arange(30.0), 100 + np.arange(10.0)]
    r = bootstrap_ci(ks_statistic, y, s, n_resamples=100)
    assert (r.estimate, r.ci_low, r.ci_high, r.std_error) == (1.0, 1.0, 1.0, 0.0)


def test_partial_keeps_options_and_weights_use_rows():
    y, s = sample(4, 300)
    points = -s  # scorecard: lower is riskier
    r = bootstrap_ci(functools.partial(gini, higher_is_riskier=False), y, points, n_resamples=200)
    assert r.estimate == pytest.approx(gini(y, s).gini)
    w = np.random.default_rng(0).uniform(0.5, 2, y.size)
    rw = bootstrap_ci(
        roc_auc, y, s, sample_weight=w, n_resamples=200, metric_kwargs={"confidence_level": 0.9}
    )
    assert rw.estimate == roc_auc(y, s, sample_weight=w).auc
    assert rw.ci_low < rw.estimate < rw.ci_high


def test_unstratified_resamples_without_bads_are_left_out_with_a_warning():
    y = np.r_[1, 1, np.zeros(8, dtype=int)]
    s = np.arange(10.0)
    with pytest.warns(DegenerateDataWarning, match=r"not defined on \d+ of 200 resamples"):
        r = bootstrap_ci(roc_auc, y, s, n_resamples=200, stratify=False)
    assert 0 < r.n_failed < 200
    assert r.n_failed == pytest.approx(200 * 0.8**10, rel=0.5)  # P(no bad in 10 draws)


def test_one_class_is_not_available():
    with pytest.warns(DegenerateDataWarning) as caught:
        r = bootstrap_ci(roc_auc, [0, 0, 0], [1, 2, 3], n_resamples=10)
    assert np.isnan(r.estimate)
    assert np.isnan(r.ci_low)
    assert any("needs both bads and goods" in str(w.message) for w in caught)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_resamples": 0}, "Expected n_resamples a positive integer"),
        ({"confidence_level": 1.5}, r"Expected confidence_level in \(0, 1\)"),
    ],
)
def test_malformed_options(kwargs, message):
    with pytest.raises(InvalidDataError, match=message):
        bootstrap_ci(roc_auc, [0, 1], [1, 2], **kwargs)
    with pytest.raises(InvalidDataError, match="Expected a callable metric"):
        bootstrap_ci("auc", [0, 1], [1, 2])
