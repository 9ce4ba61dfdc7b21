"""LGD/CCF/EAD back-testing: the ECB t-test and generalised AUC against scipy, a jackknife and
the worked examples of FORMULAS.md."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy import stats

from riskmon.metrics import (
    DegenerateDataWarning,
    InvalidDataError,
    _backtest,
    _backtest_table,
    _gauc,
    backtest_t_test,
    backtest_t_test_from_sums,
    ecb_lgd_segment,
    generalised_auc,
    generalised_auc_test,
    loss_shortfall,
    mean_absolute_deviation,
)

ESTIMATED = [0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65]
REALISED = [0.10, 0.40, 0.25, 0.55, 0.35, 0.70, 0.45, 0.50, 0.90, 0.60]
TABLE = [[30, 12, 6, 2], [10, 25, 15, 5], [3, 8, 20, 14]]


def test_the_examples_run() -> None:
    assert doctest.testmod(_backtest, raise_on_error=True).failed == 0
    assert doctest.testmod(_gauc, raise_on_error=True).failed == 0
    assert doctest.testmod(_backtest_table, raise_on_error=True).failed == 0


def test_t_test_reproduces_the_worked_example() -> None:
    r = backtest_t_test(REALISED, ESTIMATED)
    assert r.n == 10
    assert r.dof == 9
    assert r.mean_difference == pytest.approx(0.055, abs=1e-12)
    assert r.variance == pytest.approx(0.02302778, abs=1e-8)
    assert r.statistic == pytest.approx(1.146137, abs=1e-6)
    assert r.pvalue == pytest.approx(0.140649, abs=1e-6)
    two = backtest_t_test(REALISED, ESTIMATED, alternative="two-sided")
    assert two.pvalue == pytest.approx(0.281297, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_t_test_is_scipys_one_sample_t_test(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    e = rng.random(n)
    r = np.clip(e + rng.normal(0.02 * (seed - 2), 0.2, n), -0.2, 1.3)
    ours = backtest_t_test(r, e, alternative=alternative)  # type: ignore[arg-type]
    theirs = stats.ttest_1samp(r - e, 0.0, alternative=alternative)  # type: ignore[arg-type]
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-9)
    assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15)
    assert ours.dof == theirs.df
    d = r - e
    from_sums = backtest_t_test_from_sums(
        n,
        float(d.sum()),
        float((d * d).sum()),
        alternative=alternative,  # type: ignore[arg-type]
    )
    assert from_sums.statistic == pytest.approx(theirs.statistic, rel=1e-7)
    assert from_sums.variance == pytest.approx(float(np.var(d, ddof=1)), rel=1e-9)


def test_t_test_degenerate_data_is_not_available() -> None:
    with pytest.warns(DegenerateDataWarning, match="at least 2"):
        one = backtest_t_test([0.4], [0.3])
    assert np.isnan(one.statistic)
    assert np.isnan(one.pvalue)
    assert one.n == 1
    with pytest.warns(DegenerateDataWarning, match="the same"):
        same = backtest_t_test([0.4, 0.5], [0.3, 0.4])
    assert np.isnan(same.pvalue)
    assert same.mean_difference == pytest.approx(0.1)
    with pytest.warns(DegenerateDataWarning):
        empty = backtest_t_test_from_sums(0, 0.0, 0.0)
    assert np.isnan(empty.mean_difference)


def test_t_test_bad_input_names_what() -> None:
    with pytest.raises(InvalidDataError, match="'realised'"):
        backtest_t_test([0.1, np.nan], [0.1, 0.2])
    with pytest.raises(InvalidDataError, match="'estimated'"):
        backtest_t_test([0.1, 0.2], ["a", "b"])
    with pytest.raises(InvalidDataError, match="alternative"):
        backtest_t_test(REALISED, ESTIMATED, alternative="less")  # type: ignore[arg-type]


def test_generalised_auc_reproduces_the_worked_example() -> None:
    r = generalised_auc(TABLE)
    assert (r.concordant, r.discordant, r.n) == (9704.0, 1978.0, 150.0)
    assert r.somers_d == pytest.approx(0.516789, abs=1e-6)
    assert r.gauc == pytest.approx(0.758395, abs=1e-6)
    assert r.se == pytest.approx(0.030890, abs=1e-6)
    t = generalised_auc_test(TABLE, 0.70)
    assert t.statistic == pytest.approx(-1.890381, abs=1e-6)
    assert t.pvalue == pytest.approx(0.970646, abs=1e-6)


def _brute_force(a: np.ndarray) -> tuple[float, float]:
    """P and Q by looping over every pair of cells."""
    p = q = 0.0
    for i, j in np.ndindex(a.shape):
        for k, m in np.ndindex(a.shape):
            s = np.sign(k - i) * np.sign(m - j)
            p += a[i, j] * a[k, m] * (s > 0)
            q += a[i, j] * a[k, m] * (s < 0)
    return p, q


@pytest.mark.parametrize("seed", range(8))
def test_generalised_auc_is_scipys_somers_d(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 12, size=(int(rng.integers(2, 7)), int(rng.integers(2, 8))))
    a[0, 0] += 1
    a[-1, -1] += 1
    r = generalised_auc(a)
    assert r.somers_d == pytest.approx(stats.somersd(a).statistic, rel=1e-12, abs=1e-12)
    assert (r.concordant, r.discordant) == pytest.approx(_brute_force(a.astype(float)))


def _jackknife_se(a: np.ndarray) -> float:
    """The jackknife standard error of the gAUC: leave one facility out at a time (every
    facility of a cell gives the same estimate)."""
    n = a.sum()
    cells, estimates = [], []
    for i, j in zip(*np.nonzero(a), strict=True):
        less = a.astype(float).copy()
        less[i, j] -= 1
        cells.append(a[i, j])
        estimates.append(generalised_auc(less).gauc)
    w, g = np.asarray(cells, float), np.asarray(estimates)
    mean = (w * g).sum() / n
    return float(np.sqrt((n - 1) / n * (w * (g - mean) ** 2).sum()))


@pytest.mark.parametrize("seed", range(3))
def test_generalised_auc_se_agrees_with_a_jackknife(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # a large sample of facilities, estimated in 5 grades, realised in 6 classes
    grade = rng.integers(0, 5, 3000)
    realised = np.clip(grade + rng.normal(0, 1.5, grade.size), 0, 5).round().astype(int)
    a = np.zeros((5, 6))
    np.add.at(a, (grade, realised), 1)
    assert generalised_auc(a).se == pytest.approx(_jackknife_se(a), rel=0.02)
    # and on the worked example's small table, loosely
    assert generalised_auc(TABLE).se == pytest.approx(_jackknife_se(np.asarray(TABLE)), rel=0.05)


def test_generalised_auc_degenerate_and_bad_tables() -> None:
    with pytest.warns(DegenerateDataWarning, match="two estimated classes"):
        one_row = generalised_auc([[3, 4, 5], [0, 0, 0]])
    assert np.isnan(one_row.gauc)
    assert np.isnan(one_row.se)
    with pytest.raises(InvalidDataError, match="2-d"):
        generalised_auc([1, 2, 3])
    with pytest.raises(InvalidDataError, match="non-negative"):
        generalised_auc([[1, -2], [3, 4]])
    with pytest.raises(InvalidDataError, match="initial_gauc"):
        generalised_auc_test(TABLE, 1.5)


def test_ecb_segments_and_where_the_edges_go() -> None:
    values = [-0.3, 0.0, 0.049999, 0.05, 0.1, 0.15, 0.2, 0.5, 0.8999, 0.9, 0.99, 1.0, 2.0]
    assert ecb_lgd_segment(values).tolist() == [1, 1, 1, 2, 3, 3, 4, 7, 10, 11, 11, 12, 12]
    with pytest.raises(InvalidDataError, match="'values'"):
        ecb_lgd_segment([0.1, np.nan])


def test_loss_shortfall_and_mad_reproduce_the_worked_example() -> None:
    ead, e, r = [100, 200, 100, 100], [0.2, 0.4, 0.6, 0.8], [0.1, 0.5, 0.4, 0.9]
    assert loss_shortfall(ead, e, r) == pytest.approx(0.0, abs=1e-12)
    assert mean_absolute_deviation(ead, e, r) == pytest.approx(0.12, abs=1e-12)
    rng = np.random.default_rng(5)
    ead2, e2, r2 = rng.gamma(2, 100, 50), rng.random(50), rng.random(50)
    assert loss_shortfall(ead2, e2, r2) == pytest.approx(
        1 - np.average(e2, weights=ead2) / np.average(r2, weights=ead2)
    )
    assert mean_absolute_deviation(ead2, e2, r2) == pytest.approx(
        np.average(np.abs(r2 - e2), weights=ead2)
    )
    with pytest.raises(InvalidDataError, match="'ead'"):
        loss_shortfall([-1, 2], [0.1, 0.2], [0.1, 0.2])
    with pytest.warns(DegenerateDataWarning):
        assert np.isnan(loss_shortfall([1, 2], [0.1, 0.2], [0.0, 0.0]))
