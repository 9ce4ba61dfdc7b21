"""Error figures of regression models (LGD, EAD): MAE, MSE, RMSE, RMSLE, MAPE.

All are (optionally weighted) means over rows: mean_w(x) = Σ w·x / Σ w.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import (
    FloatArray,
    check_same_length,
    check_scores,
    check_weights,
    not_available,
)

#: MAPE is reported in percent
PERCENT = 100.0
#: RMSLE takes ln(1 + y), defined for y > LOG1P_DOMAIN_MIN
LOG1P_DOMAIN_MIN = -1.0

_Inputs = tuple[FloatArray, FloatArray, "FloatArray | None"]


def _inputs(y_true: Any, y_pred: Any, sample_weight: Any) -> _Inputs:
    y = check_scores(y_true, name="y_true")
    p = check_scores(y_pred, name="y_pred")
    check_same_length(y.shape[0], p.shape[0], "y_pred")
    return y, p, check_weights(sample_weight, y.shape[0])


def _mean(values: FloatArray, w: FloatArray | None, figure: str) -> float:
    total = values.size if w is None else float(w.sum())
    if total <= 0:
        reason = "no rows" if values.size == 0 else "zero total weight"
        return not_available(f"{figure} is not available: the data has {reason}", stacklevel=5)
    return float(values.mean() if w is None else np.dot(w, values) / total)


def _mae(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    return _mean(np.abs(y - p), w, "MAE")


def _mse(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    return _mean((y - p) ** 2, w, "MSE")


def _rmse(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    return float(np.sqrt(_mean((y - p) ** 2, w, "RMSE")))


def _rmsle(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    for name, values in (("y_true", y), ("y_pred", p)):
        low = values <= LOG1P_DOMAIN_MIN
        if low.any():
            raise InvalidDataError(
                f"Expected values > {LOG1P_DOMAIN_MIN:g} in {name!r} for RMSLE, got "
                f"{values[low][:5].tolist()!r} in {int(low.sum())} row(s)"
            )
    return float(np.sqrt(_mean((np.log1p(y) - np.log1p(p)) ** 2, w, "RMSLE")))


def _mape(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    zero = y == 0
    if zero.any():
        raise InvalidDataError(
            f"Expected non-zero targets in 'y_true' for MAPE, got 0 in {int(zero.sum())} "
            "row(s); MAPE is undefined there (leave 'mape' out of metrics=)"
        )
    return PERCENT * _mean(np.abs(y - p) / np.abs(y), w, "MAPE")


_FIGURES: dict[str, Callable[[FloatArray, FloatArray, FloatArray | None], float]] = {
    "mae": _mae,
    "mse": _mse,
    "rmse": _rmse,
    "rmsle": _rmsle,
    "mape": _mape,
}


def mean_absolute_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """MAE = mean_w |y − ŷ|.

    Examples
    --------
    >>> mean_absolute_error([0.2, 0.5, 1.0], [0.1, 0.5, 0.7])
    0.13333333333333333
    """
    return _mae(*_inputs(y_true, y_pred, sample_weight))


def mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """MSE = mean_w (y − ŷ)².

    Examples
    --------
    >>> round(mean_squared_error([0.2, 0.5, 1.0], [0.1, 0.5, 0.7]), 12)
    0.033333333333
    """
    return _mse(*_inputs(y_true, y_pred, sample_weight))


def root_mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """RMSE = √MSE.

    Examples
    --------
    >>> root_mean_squared_error([0.0, 1.0], [1.0, 0.0])
    1.0
    """
    return _rmse(*_inputs(y_true, y_pred, sample_weight))


def root_mean_squared_log_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """RMSLE = √mean_w (ln(1 + y) − ln(1 + ŷ))²; raises unless every y, ŷ > −1.

    Examples
    --------
    >>> root_mean_squared_log_error([0.0, 0.0], [np.e - 1, np.e - 1])
    1.0
    """
    return _rmsle(*_inputs(y_true, y_pred, sample_weight))


def mean_absolute_percentage_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """MAPE = 100·mean_w |y − ŷ| / |y|, in percent; raises when some y = 0.

    Examples
    --------
    >>> mean_absolute_percentage_error([0.5, 1.0], [0.25, 1.5])
    50.0
    """
    return _mape(*_inputs(y_true, y_pred, sample_weight))


def regression_metrics(
    y_true: Any,
    y_pred: Any,
    *,
    sample_weight: Any = None,
    metrics: Sequence[str] = tuple(_FIGURES),
) -> dict[str, float]:
    """MAE, MSE, RMSE, RMSLE and MAPE of a regression model (e.g. LGD or EAD), by name.

    MAE = mean_w |y − ŷ|; MSE = mean_w (y − ŷ)²; RMSE = √MSE;
    RMSLE = √mean_w (ln(1 + y) − ln(1 + ŷ))² (needs y, ŷ > −1);
    MAPE = 100·mean_w |y − ŷ| / |y| (undefined when some y = 0), where
    mean_w(x) = Σ w·x / Σ w (w = 1 when unweighted).

    A figure undefined on these values (RMSLE with a value <= −1, MAPE with a zero target)
    raises :class:`~riskmon.errors.InvalidDataError`; choose the figures with ``metrics``
    (LGD targets are often exactly 0, so MAPE is then left out). No rows or zero total
    weight gives NaN with a warning.

    References
    ----------
    Hyndman, R. J. & Koehler, A. B. (2006). Another look at measures of forecast accuracy.
    International Journal of Forecasting 22(4).

    Examples
    --------
    >>> m = regression_metrics([0.0, 0.5, 1.0], [0.1, 0.5, 0.7], metrics=("mae", "rmse"))
    >>> {k: round(v, 6) for k, v in m.items()}
    {'mae': 0.133333, 'rmse': 0.182574}
    """
    unknown = [m for m in metrics if m not in _FIGURES]
    if unknown or isinstance(metrics, str):
        raise InvalidDataError(f"Expected metrics among {sorted(_FIGURES)!r}, got {metrics!r}")
    y, p, w = _inputs(y_true, y_pred, sample_weight)
    return {name: _FIGURES[name](y, p, w) for name in metrics}
