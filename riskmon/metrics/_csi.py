"""The CSI table: each characteristic's stability, baseline against current, in one frame."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics._bin_fit import DEFAULT_N_BINS, Method
from riskmon.metrics._binning import Binning, Kind
from riskmon.metrics._divergence import DEFAULT_SMOOTHING
from riskmon.metrics._stability import (
    DEFAULT_ALPHA,
    PSIResult,
    population_stability_index,
)
from riskmon.metrics._validation import not_available

if TYPE_CHECKING:
    import pandas as pd


def characteristic_stability_table(
    expected_frame: pd.DataFrame,
    actual_frame: pd.DataFrame,
    *,
    characteristics: Sequence[str] | None = None,
    binnings: Mapping[str, Binning] | None = None,
    kinds: Mapping[str, Kind] | None = None,
    method: Method = "quantile",
    n_bins: int = DEFAULT_N_BINS,
    min_level_share: float | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    alpha: float = DEFAULT_ALPHA,
    expected_weight: str | None = None,
    actual_weight: str | None = None,
) -> pd.DataFrame:
    """CSI of every characteristic: the PSI of each column, worst first.

    CSI_x = Σ (a_i − e_i)·ln(a_i / e_i) over the baseline bins of characteristic x; see
    :func:`population_stability_index` for bands, smoothing and the noise threshold.

    Parameters
    ----------
    expected_frame, actual_frame : pandas.DataFrame
        Baseline and current rows, one column per characteristic.
    characteristics : sequence of str, optional
        Columns to compare; default every column of ``expected_frame`` but the weights.
    binnings : mapping of column to Binning, optional
        Frozen bins per column; the others are fitted on ``expected_frame``.
    kinds : mapping of column to "numeric"/"categorical", optional
        Overrides dtype inference for fitted columns.
    method, n_bins, min_level_share, smoothing, alpha
        As :func:`population_stability_index`, for every column.
    expected_weight, actual_weight : str, optional
        Name of a weight column in each frame.

    Returns
    -------
    pandas.DataFrame
        One row per characteristic, by decreasing CSI (not available last): ``characteristic``,
        ``csi``, ``band``, ``critical_value``, ``exceeds_noise``, ``n_bins`` (bins with rows in
        either sample), ``n_bins_requested``, ``n_expected``, ``n_actual``, ``smoothing``,
        ``smoothed_bins``, ``alpha``, ``notes``. A degenerate column warns, naming the column.

    Examples
    --------
    >>> base = pd.DataFrame({"age": [25, 35, 45, 55], "region": ["N", "N", "S", "S"]})
    >>> now = pd.DataFrame({"age": [24, 34, 46, 56], "region": ["N", "S", "S", "S"]})
    >>> characteristic_stability_table(base, now, n_bins=2)[["characteristic", "csi", "band"]]
      characteristic       csi     band
    0         region  0.274653  shifted
    1            age  0.000000   stable
    """
    import pandas as pd

    names = _checked_names(
        expected_frame, actual_frame, characteristics, expected_weight, actual_weight
    )
    w_e = None if expected_weight is None else expected_frame[expected_weight]
    w_a = None if actual_weight is None else actual_frame[actual_weight]
    binnings = binnings or {}
    kinds = kinds or {}
    rows = []
    for name in names:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DegenerateDataWarning)
            r = population_stability_index(
                expected_frame[name],
                actual_frame[name],
                binning=binnings.get(name),
                kind=kinds.get(name),
                method=method,
                n_bins=n_bins,
                min_level_share=min_level_share,
                smoothing=smoothing,
                alpha=alpha,
                expected_weight=w_e,
                actual_weight=w_a,
            )
        rows.append(_row(name, r, caught))
    table = pd.DataFrame(
        rows,
        columns=[
            "characteristic",
            "csi",
            "band",
            "critical_value",
            "exceeds_noise",
            "n_bins",
            "n_bins_requested",
            "n_expected",
            "n_actual",
            "smoothing",
            "smoothed_bins",
            "alpha",
            "notes",
        ],
    )
    table["n_bins_requested"] = table["n_bins_requested"].astype("Int64")
    table = table.sort_values("csi", ascending=False, na_position="last", kind="stable")
    return table.reset_index(drop=True)


def _checked_names(
    expected_frame: pd.DataFrame,
    actual_frame: pd.DataFrame,
    characteristics: Sequence[str] | None,
    expected_weight: str | None,
    actual_weight: str | None,
) -> list[str]:
    """The characteristics to compare, each checked to be a column of both frames."""
    import pandas as pd

    frames = (("expected_frame", expected_frame), ("actual_frame", actual_frame))
    for name, frame in frames:
        if not isinstance(frame, pd.DataFrame):
            raise InvalidDataError(
                f"Expected a pandas DataFrame for {name}, got {type(frame).__name__}"
            )
    weights = {expected_weight, actual_weight} - {None}
    names = (
        list(characteristics)
        if characteristics is not None
        else [str(c) for c in expected_frame.columns if c not in weights]
    )
    for label, frame in frames:
        absent = [c for c in names if c not in frame.columns]
        if absent:
            raise InvalidDataError(
                f"Expected columns {absent!r} in {label}, got {list(frame.columns)!r}"
            )
    return names


def _row(name: str, r: PSIResult, caught: Sequence[warnings.WarningMessage]) -> dict[str, object]:
    """One characteristic's line; its degenerate-data warnings re-raised naming it, in its
    notes too; other warnings passed on."""
    reasons = [str(w.message) for w in caught if issubclass(w.category, DegenerateDataWarning)]
    for other in caught:
        if not issubclass(other.category, DegenerateDataWarning):
            warnings.warn(other.message, other.category, stacklevel=3)
    for reason in reasons:
        not_available(f"{name!r}: {reason}", stacklevel=3)
    return {
        "characteristic": name,
        "csi": r.value,
        "band": r.band,
        "critical_value": r.critical_value,
        "exceeds_noise": r.exceeds_noise,
        "n_bins": r.n_bins,
        "n_bins_requested": r.n_bins_requested,
        "n_expected": r.n_expected,
        "n_actual": r.n_actual,
        "smoothing": r.smoothing,
        "smoothed_bins": int(np.sum(r.per_bin["smoothed"])),
        "alpha": r.alpha,
        "notes": "; ".join(reasons + list(r.notes)),
    }
