"""A continuous target's moments per cell, summed by the database and by the streaming reader.

The moments (:data:`~riskmon.metrics.TARGET_MOMENTS`, and with a weight column
:data:`~riskmon.metrics.WEIGHTED_TARGET_MOMENTS`) are taken over the loans whose target y is
realised (not NULL), against the prediction ŝ (the request's score): n_y, Σy, Σy², Σŝ, Σŝ²,
Σŝ·y, Σ|y − ŝ|, Σ(y − ŝ)², the count and sum of a second prediction û (the estimate without
its downturn component; ŝ when there is none), then Σw, Σw·y, Σw·y², Σw·ŝ, Σw·ŝ², Σw·ŝ·y, Σw²,
Σw·|y − ŝ|, Σw·(y − ŝ)². Both ways of summing them live here, side
by side, so that they read the same rows the same way: a NULL target makes the row add nothing
(it still counts in the cell's rows), and a NULL prediction adds nothing to its sums.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import ColumnElement, Double, case, cast, func, null

from riskmon.collect.request import ColumnDataError
from riskmon.errors import InvalidDataError
from riskmon.metrics import TARGET_MOMENTS, WEIGHTED_TARGET_MOMENTS, numeric_values

#: how many offending values an error quotes
_QUOTED = 5


def moment_names(*, weighted: bool) -> list[str]:
    """The moments' column names in a statement's rows, in :data:`TARGET_MOMENTS` order (then
    :data:`WEIGHTED_TARGET_MOMENTS`'), prefixed apart from the counts and the PD sums."""
    names = [*TARGET_MOMENTS, *(WEIGHTED_TARGET_MOMENTS if weighted else ())]
    return [f"m_{name}" for name in names]


def moment_measures(
    target: ColumnElement[Any],
    prediction: ColumnElement[Any],
    weight: ColumnElement[Any] | None,
    *,
    summed: bool,
    downturn: ColumnElement[Any] | None = None,
) -> list[ColumnElement[Any]]:
    """The moments of a cell as aggregates over its rows (``target``, ``prediction`` and
    ``downturn``, the second prediction, as doubles); NULLs where ``summed`` is false (a
    statement whose rows are not summed, in a ``UNION ALL`` with one whose rows are)."""
    names = moment_names(weighted=weight is not None)
    if not summed:
        return [cast(null(), Double).label(name) for name in names]
    y, s = target, prediction
    realised = y.is_not(None)

    def when_realised(value: ColumnElement[Any]) -> ColumnElement[Any]:
        return case((realised, value))  # NULL, which SUM skips, where y is NULL

    out: list[ColumnElement[Any]] = [func.count(y), func.sum(y), func.sum(y * y)]
    out += [func.sum(when_realised(s)), func.sum(when_realised(s * s)), func.sum(s * y)]
    d = y - s  # NULL where either is
    out += [func.sum(func.abs(d)), func.sum(d * d)]
    u = prediction if downturn is None else downturn
    out += [func.count(when_realised(u)), func.sum(when_realised(u))]
    if weight is not None:
        w = weight
        out += [func.sum(when_realised(w)), func.sum(w * y), func.sum(w * y * y)]
        out += [func.sum(when_realised(w * s)), func.sum(when_realised(w * s * s))]
        out += [func.sum(w * s * y), func.sum(when_realised(w * w))]
        out += [func.sum(w * func.abs(d)), func.sum(w * d * d)]
    return [expression.label(name) for expression, name in zip(out, names, strict=True)]


def as_doubles(values: Any) -> npt.NDArray[np.float64]:
    """``values`` as doubles, NaN for NULL and for anything that is not a number, as
    ``pandas.to_numeric(errors="coerce")`` gives them: floats, integers and None (what a driver
    returns) without importing pandas, about 70 MB of a process
    (:func:`~riskmon.metrics.numeric_values`), anything else through pandas."""
    try:
        return numeric_values(values)
    except InvalidDataError:  # text among them: NaN, as pandas coerces it
        import pandas as pd

        coerced: npt.NDArray[np.float64] = pd.to_numeric(
            pd.Series(values), errors="coerce"
        ).to_numpy(np.float64, na_value=np.nan)
        return coerced


def numeric_target(values: npt.NDArray[Any], column: str) -> tuple[int, npt.NDArray[np.float64]]:
    """How many of a chunk's target values are NaN or infinite (not NULL), and the values as
    doubles (NaN where NULL); a :class:`~riskmon.collect.tables.ColumnDataError` naming
    ``column`` where one is text."""
    text = [v for v in values.tolist() if isinstance(v, (str, bytes))]
    if text:
        raise ColumnDataError(
            column,
            f"Expected numeric target values, got {text[:_QUOTED]!r} ({len(text)} row(s) with "
            "text)",
        )
    numbers = as_doubles(values)
    given = np.fromiter((v is not None for v in values.tolist()), bool, len(values))
    return int((given & ~np.isfinite(numbers)).sum()), numbers


def moment_terms(
    target: npt.NDArray[np.float64],
    prediction: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64] | None,
    downturn: npt.NDArray[np.float64] | None = None,
) -> list[npt.NDArray[np.float64]]:
    """What each loan adds to each moment (:func:`moment_names`' order): nothing where its
    target is NULL (NaN), nothing to a prediction's sums where that prediction is NULL."""
    realised = ~np.isnan(target)
    second = prediction if downturn is None else downturn
    has_u = realised & ~np.isnan(second)
    y = np.where(realised, target, 0.0)
    s = np.where(realised, np.nan_to_num(prediction, nan=0.0), 0.0)
    # a product too large for a double becomes inf, refused naming its columns once summed
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.where(realised & ~np.isnan(prediction), y - s, 0.0)
        terms = [realised.astype(np.float64), y, y * y, s, s * s, s * y, np.abs(d), d * d]
        terms += [has_u.astype(np.float64), np.where(has_u, second, 0.0)]
        if weights is not None:
            w = np.where(realised, weights, 0.0)
            terms += [w, w * y, w * y * y, w * s, w * s * s, w * s * y, w * w]
            terms += [w * np.abs(d), w * d * d]
    return terms
