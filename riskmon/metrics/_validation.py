"""Input checks shared by every metric: validate first, say what was expected and received."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.errors import DegenerateDataWarning, InvalidDataError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: how many offending values an error message quotes at most
_MAX_QUOTED = 5
#: how far (relative) effective default counts computed in floating point may exceed n
COUNT_ROUNDING = 1e-12


def _name_of(values: Any, default: str) -> str:
    """The pandas Series name when there is one, else the parameter name."""
    name = getattr(values, "name", None)
    return str(name) if isinstance(name, str) and name else default


def _quote(values: npt.ArrayLike) -> str:
    unique = list(dict.fromkeys(np.asarray(values).tolist()))
    shown = ", ".join(repr(v) for v in unique[:_MAX_QUOTED])
    more = f", ... ({len(unique) - _MAX_QUOTED} more)" if len(unique) > _MAX_QUOTED else ""
    return f"[{shown}{more}]"


def check_labels(y_true: Any, *, name: str = "y_true") -> npt.NDArray[np.bool_]:
    """Labels as a boolean array (True = bad); raise unless every value is 0 or 1."""
    name = _name_of(y_true, name)
    arr = np.asarray(y_true)
    if arr.ndim != 1:
        raise InvalidDataError(f"Expected a 1-d array for {name!r}, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind in "iu":
        bad = arr[(arr != 0) & (arr != 1)]
    elif arr.dtype.kind == "f":
        bad = arr[~((arr == 0) | (arr == 1))]
    else:
        try:
            numeric = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise InvalidDataError(
                f"Expected label values 0 and 1 in {name!r}, got non-numeric values "
                f"{_quote(arr[:50])}"
            ) from None
        return check_labels(numeric, name=name)
    if bad.size:
        raise InvalidDataError(f"Expected label values 0 and 1 in {name!r}, got {_quote(bad)}")
    return np.asarray(arr == 1, dtype=np.bool_)


def check_scores(y_score: Any, *, name: str = "y_score", what: str = "scores") -> FloatArray:
    """Scores (or other ``what``) as float64; raise on non-numeric, NaN or infinite values."""
    name = _name_of(y_score, name)
    arr = np.asarray(y_score)
    if arr.ndim != 1:
        raise InvalidDataError(f"Expected a 1-d array for {name!r}, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise InvalidDataError(
                f"Expected numeric {what} in {name!r}, got dtype {arr.dtype} "
                f"with values like {_quote(arr[:5])}"
            ) from None
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        raise InvalidDataError(
            f"Expected finite numeric {what} in {name!r}, got {_quote(arr[~finite])} "
            f"in {int((~finite).sum())} row(s)"
        )
    return arr


def check_weights(sample_weight: Any, n: int, *, name: str = "sample_weight") -> FloatArray | None:
    """Weights as float64 (None stays None: unweighted); raise on NaN, inf or negatives."""
    if sample_weight is None:
        return None
    name = _name_of(sample_weight, name)
    arr = check_scores(sample_weight, name=name)
    check_same_length(n, arr.shape[0], name)
    negative = arr < 0
    if negative.any():
        raise InvalidDataError(
            f"Expected non-negative weights in {name!r}, got {_quote(arr[negative])}"
        )
    return arr


def check_same_length(n: int, m: int, name: str, *, reference: str = "y_true") -> None:
    """Raise unless an argument has as many rows as ``reference``."""
    if n != m:
        raise InvalidDataError(f"Expected {n} rows in {name!r} to match {reference}, got {m}")


def check_probabilities(values: Any, *, name: str, closed: bool) -> FloatArray:
    """Probabilities (PDs) as a float64 array; raise unless each is in (0, 1) ([0, 1] when
    closed). A scalar becomes an array of one."""
    arr = check_scores(np.atleast_1d(values), name=_name_of(values, name), what="probabilities")
    inside = (arr >= 0) & (arr <= 1) if closed else (arr > 0) & (arr < 1)
    if not inside.all():
        interval = "[0, 1]" if closed else "(0, 1)"
        raise InvalidDataError(
            f"Expected probabilities in {interval} in {name!r}, got {_quote(arr[~inside])}"
        )
    return arr


def check_default_counts(defaults: Any, n: Any) -> tuple[FloatArray, FloatArray]:
    """Defaults D and obligors N (per grade) as float64 arrays; a scalar becomes an array of one.

    Counts may be non-integer (effective counts of weighted data). Raise unless both are finite
    and non-negative with D <= N; D above N by rounding only (``COUNT_ROUNDING``, relative) is
    taken as N.
    """
    d = check_scores(np.atleast_1d(defaults), name="defaults", what="counts")
    total = check_scores(np.atleast_1d(n), name="n", what="counts")
    check_same_length(d.shape[0], total.shape[0], "n", reference="defaults")
    for name, arr in (("defaults", d), ("n", total)):
        negative = arr < 0
        if negative.any():
            raise InvalidDataError(
                f"Expected non-negative counts in {name!r}, got {_quote(arr[negative])}"
            )
    over = d > total * (1 + COUNT_ROUNDING) + COUNT_ROUNDING
    if over.any():
        raise InvalidDataError(
            f"Expected defaults <= n, got defaults {_quote(d[over])} against n "
            f"{_quote(total[over])}"
        )
    return np.minimum(d, total), total


def check_grade_pds(pd: Any, n: FloatArray, *, closed: bool = False) -> FloatArray:
    """The PD of each grade of ``n`` obligors (a scalar becomes an array of one), each in
    (0, 1) ([0, 1] when ``closed``). An empty grade's PD is not read — the mean PD of no loans
    may well be NaN — and is NaN here."""
    arr = np.atleast_1d(np.asarray(pd))
    if arr.ndim != 1:
        raise InvalidDataError(f"Expected a 1-d array for 'pd', got shape {arr.shape}")
    check_same_length(n.shape[0], arr.shape[0], "pd", reference="defaults")
    held = n > 0
    checked = np.full(n.shape[0], np.nan)
    checked[held] = check_probabilities(arr[held], name="pd", closed=closed)
    return checked


def check_fraction(value: float, name: str, *, closed: bool = False) -> float:
    """Raise unless ``0 < value < 1`` (``0 <= value <= 1`` when closed)."""
    ok = 0 <= value <= 1 if closed else 0 < value < 1
    if not ok or not np.isfinite(value):
        interval = "[0, 1]" if closed else "(0, 1)"
        raise InvalidDataError(f"Expected {name} in {interval}, got {value!r}")
    return float(value)


def not_available(reason: str, *, stacklevel: int = 3) -> float:
    """Warn that a figure is undefined on this data, and return NaN for it."""
    warnings.warn(reason, DegenerateDataWarning, stacklevel=stacklevel)
    return float("nan")
