"""MAE, MSE, RMSE, RMSLE, MAPE against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    regression_metrics,
    root_mean_squared_error,
    root_mean_squared_log_error,
)

TOL = 1e-10


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_match_sklearn(seed, weighted):
    rng = np.random.default_rng(seed)
    y = rng.uniform(0.01, 1.0, 300)  # LGD-like, no zeros
    p = np.clip(y + rng.normal(scale=0.2, size=300), 0, 1)
    w = rng.uniform(0.5, 2.0, 300) if weighted else None
    got = regression_metrics(y, p, sample_weight=w)
    expected = {
        "mae": skm.mean_absolute_error(y, p, sample_weight=w),
        "mse": skm.mean_squared_error(y, p, sample_weight=w),
        "rmse": skm.root_mean_squared_error(y, p, sample_weight=w),
        "rmsle": skm.root_mean_squared_log_error(y, p, sample_weight=w),
        "mape": 100 * skm.mean_absolute_percentage_error(y, p, sample_weight=w),
    }
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert abs(got[name] - value) < TOL, name
    assert mean_absolute_error(y, p, sample_weight=w) == got["mae"]
    assert mean_squared_error(y, p, sample_weight=w) == got["mse"]
    assert root_mean_squared_error(y, p, sample_weight=w) == got["rmse"]
    assert root_mean_squared_log_error(y, p, sample_weight=w) == got["rmsle"]
    assert mean_absolute_percentage_error(y, p, sample_weight=w) == got["mape"]


def test_golden_values():
    # errors 0.1, 0, 0.3 -> MAE 0.4/3, MSE 0.1/3; |e|/|y| = 0.2, 0, 0.3 -> MAPE 50/3 %
    y, p = [0.5, 0.5, 1.0], [0.4, 0.5, 0.7]
    got = regression_metrics(y, p)
    assert got["mae"] == pytest.approx(0.4 / 3)
    assert got["mse"] == pytest.approx(0.1 / 3)
    assert got["rmse"] == pytest.approx(np.sqrt(0.1 / 3))
    assert got["mape"] == pytest.approx(50 / 3)
    # weights 1, 1, 2: MAE = (0.1 + 0 + 0.6) / 4
    assert mean_absolute_error(y, p, sample_weight=[1, 1, 2]) == pytest.approx(0.175)


def test_mape_with_zero_target_raises_and_can_be_left_out():
    with pytest.raises(InvalidDataError, match=r"non-zero targets.*got 0 in 1 row"):
        regression_metrics([0.0, 0.5], [0.1, 0.5])
    got = regression_metrics([0.0, 0.5], [0.1, 0.5], metrics=("mae", "rmsle"))
    assert got["mae"] == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("y", "p", "name"), [([-1.0, 0.5], [0, 0], "y_true"), ([0, 0], [0.1, -2], "y_pred")]
)
def test_rmsle_domain(y, p, name):
    with pytest.raises(InvalidDataError, match=rf"Expected values > -1 in '{name}' for RMSLE"):
        root_mean_squared_log_error(y, p)


def test_empty_and_zero_weight_are_not_available():
    with pytest.warns(DegenerateDataWarning, match="MAE is not available: the data has no rows"):
        assert np.isnan(mean_absolute_error([], []))
    with pytest.warns(DegenerateDataWarning, match="zero total weight"):
        assert np.isnan(mean_squared_error([1.0], [2.0], sample_weight=[0.0]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mean_absolute_error([1, 2], [1]), "Expected 2 rows in 'y_pred'"),
        (lambda: mean_absolute_error([1, np.nan], [1, 2]), "finite numeric scores in 'y_true'"),
        (lambda: regression_metrics([1], [1], metrics=("r2",)), "Expected metrics among"),
        (lambda: regression_metrics([1], [1], metrics="mae"), "Expected metrics among"),
        (lambda: mean_absolute_error([1], [1], sample_weight=[-1]), "non-negative weights"),
    ],
)
def test_malformed(call, message):
    with pytest.raises(InvalidDataError, match=message):
        call()
