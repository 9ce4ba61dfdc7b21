"""Compute: figures from count tables, as records ready for the metric store.

Pure functions of :class:`~riskmon.metrics.CountTable`\\ s. A figure that is not defined on the
data (no bads in a cohort, an empty window) is kept as ``value=None`` with the reason riskmon's
metric functions gave, never as 0; every figure carries the parameters that produced it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from riskmon.errors import DegenerateDataWarning
from riskmon.metrics import (
    CountTable,
    grid_auc_error_bound,
    grid_ks_error_bound,
    information_value_from_counts,
    ks_statistic_from_counts,
    lift_table_from_counts,
    population_stability_index_from_counts,
    roc_auc_from_counts,
    woe_table_from_counts,
)
from riskmon.records import BinRecord, FigureRecord

#: pseudo-count for zero cells in WOE/IV and PSI/CSI (see riskmon.metrics); stored with figures
DEFAULT_SMOOTHING = 0.5
#: confidence level of the AUC and Gini intervals
CONFIDENCE_LEVEL = 0.95


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def measured(compute: Callable[[], Any]) -> tuple[Any, str | None]:
    """Run ``compute``: its result (None when the figure is undefined) and the reasons of any
    DegenerateDataWarning it raised — why it is undefined, or what part of it is (a standard
    error that needs more bads)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateDataWarning)
        result = compute()
    reasons = [str(w.message) for w in caught if issubclass(w.category, DegenerateDataWarning)]
    for other in (w for w in caught if not issubclass(w.category, DegenerateDataWarning)):
        warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    reason = "; ".join(reasons) or None
    scalar = hasattr(result, "__float__")
    if result is None or (scalar and math.isnan(float(result))):
        return None, reason or "not defined on this data"
    return result, reason


def _as_note(params: dict[str, Any], reason: str | None) -> None:
    """Keep a defined figure's warning as a note in its parameters (its reason stays empty)."""
    if reason:
        params["note"] = reason


def ranking_figures(
    scores: CountTable,
    *,
    higher_is_riskier: bool,
    population: str,
    segment: str = "",
    grid: CountTable | None = None,
) -> list[FigureRecord]:
    """KS, AUC, Gini, bad rate and counts of a labeled score table.

    ``grid`` is the score's grid table when ``scores`` was built from one; the largest error the
    grid can cause is then stored with KS and AUC.
    """

    def fig(
        name: str,
        value: float | None,
        reason: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> FigureRecord:
        # a defined figure keeps any warning as a note (e.g. why its standard error is missing)
        params = dict(params or {})
        if value is not None and reason:
            params["note"] = reason
        return FigureRecord(
            name,
            value,
            population,
            segment=segment,
            reason=reason if value is None else None,
            params=params,
        )

    bads, total = (
        float(scores.bads.sum()) if scores.bads is not None else 0.0,
        float(scores.total.sum()),
    )
    n_rows = int(scores.n_total.sum())
    grid_params: dict[str, Any] = {"score_grouping": "distinct values"}
    if grid is not None:
        grid_params = {
            "score_grouping": f"grid of {grid.binning.n_value_bins if grid.binning else 0} cells"
        }
        auc_bound, _ = measured(lambda: grid_auc_error_bound(grid))
        ks_bound, _ = measured(lambda: grid_ks_error_bound(grid))
        grid_params |= {"auc_error_bound": auc_bound, "ks_error_bound": ks_bound}
    ks, ks_reason = measured(
        lambda: ks_statistic_from_counts(scores, higher_is_riskier=higher_is_riskier)
    )
    auc, auc_reason = measured(
        lambda: roc_auc_from_counts(
            scores, higher_is_riskier=higher_is_riskier, confidence_level=CONFIDENCE_LEVEL
        )
    )
    figures = [
        fig("n_rows", float(n_rows)),
        fig("n_bads", float(scores.n_bads.sum()) if scores.n_bads is not None else None),
        fig(
            "bad_rate",
            bads / total if total > 0 else None,
            reason=None if total > 0 else "no loans",
            params={"weighted_total": total},
        ),
    ]
    ks_params: dict[str, Any] = dict(grid_params)
    if ks is not None:
        ks_params |= {
            "score_at": _finite(float(ks.score)),
            "p_value": _finite(float(ks.p_value)),
            "p_value_method": ks.p_value_method,
            "p_value_conservative": bool(ks.p_value_conservative),
            "critical_value_5pct": _finite(float(ks.critical_value)),
            "n_bads": int(ks.n_bads),
            "n_goods": int(ks.n_goods),
        }
    figures.append(fig("ks", None if ks is None else float(ks), ks_reason, ks_params))
    auc_params: dict[str, Any] = dict(grid_params)
    gini_params: dict[str, Any] = {}
    if auc is not None:
        auc_params |= {
            "std_error": _finite(float(auc.std_error)),
            "ci_low": _finite(float(auc.ci_low)),
            "ci_high": _finite(float(auc.ci_high)),
            "confidence_level": CONFIDENCE_LEVEL,
            "method": "DeLong",
        }
        gini_params = {
            "ci_low": _finite(2 * float(auc.ci_low) - 1),
            "ci_high": _finite(2 * float(auc.ci_high) - 1),
            "confidence_level": CONFIDENCE_LEVEL,
        }
    figures.append(fig("auc", None if auc is None else float(auc), auc_reason, auc_params))
    figures.append(
        fig("gini", None if auc is None else 2 * float(auc) - 1, auc_reason, gini_params)
    )
    return figures


def iv_figure(
    table: CountTable,
    *,
    variable: str,
    population: str,
    segment: str = "",
    smoothing: float = DEFAULT_SMOOTHING,
) -> FigureRecord:
    """The information value of one characteristic's labeled table, with its band."""
    iv, reason = measured(lambda: information_value_from_counts(table, smoothing=smoothing))
    params: dict[str, Any] = {"smoothing": smoothing}
    if iv is not None:
        params |= {"band": iv.band, "n_bins": int(iv.n_bins)}
        _as_note(params, reason)
        reason = None
    return FigureRecord(
        "iv",
        None if iv is None else float(iv),
        population=population,
        variable=variable,
        segment=segment,
        reason=reason,
        params=params,
    )


def stability_figure(
    expected: CountTable,
    actual: CountTable,
    *,
    name: str,
    variable: str,
    segment: str = "",
    smoothing: float = DEFAULT_SMOOTHING,
) -> tuple[FigureRecord, list[BinRecord]]:
    """PSI (``name="psi"``) or CSI of ``actual`` against ``expected``, with one bin record per
    bin: the counts, both shares, and the bin's contribution."""
    result, reason = measured(
        lambda: population_stability_index_from_counts(expected, actual, smoothing=smoothing)
    )
    params: dict[str, Any] = {"smoothing": smoothing}
    bins: list[BinRecord] = []
    if result is not None:
        params |= {
            "band": result.band,
            "critical_value": _finite(float(result.critical_value)),
            "alpha": float(result.alpha),
            "n_bins": int(result.n_bins),
        }
        _as_note(params, reason)
        reason = None
    per_bin = result.per_bin if result is not None else None
    e_total, a_total = float(expected.total.sum()), float(actual.total.sum())
    lower, upper = _edges(actual)
    for i, label in enumerate(actual.labels):
        contribution = None
        smoothed = False
        if per_bin is not None:
            contribution = _finite(float(per_bin["contribution"][i]))
            smoothed = bool(per_bin["smoothed"][i])
        bins.append(
            BinRecord(
                variable=variable,
                population="current",
                bin_index=i,
                label=label,
                n_total=int(actual.n_total[i]),
                total=float(actual.total[i]),
                segment=segment,
                lower=lower[i],
                upper=upper[i],
                expected_share=float(expected.total[i]) / e_total if e_total > 0 else None,
                actual_share=float(actual.total[i]) / a_total if a_total > 0 else None,
                contribution=contribution,
                smoothed=smoothed,
            )
        )
    figure = FigureRecord(
        name,
        None if result is None else float(result),
        "current",
        variable=variable,
        segment=segment,
        reason=reason,
        params=params,
    )
    return figure, bins


def _edges(table: CountTable) -> tuple[list[float | None], list[float | None]]:
    k = len(table.labels)
    if table.binning is None or table.binning.kind != "numeric":
        return [None] * k, [None] * k
    frame = table.binning.describe()
    return (
        [_finite(float(v)) for v in frame["lower"]],
        [_finite(float(v)) for v in frame["upper"]],
    )


def share_figure(
    table: CountTable,
    index: int | None,
    *,
    name: str,
    variable: str,
    population: str,
    segment: str = "",
) -> FigureRecord:
    """The weighted share of one bin (the missing bin, the unseen bin) of a table."""
    total = float(table.total.sum())
    if index is None or total <= 0:
        return FigureRecord(
            name,
            None,
            population,
            variable=variable,
            segment=segment,
            reason="no loans" if total <= 0 else "no such bin",
        )
    return FigureRecord(
        name, float(table.total[index]) / total, population, variable=variable, segment=segment
    )


def woe_bins(
    table: CountTable, *, variable: str, smoothing: float = DEFAULT_SMOOTHING
) -> list[BinRecord]:
    """One bin record per bin of a labeled characteristic table: counts, WOE, IV contribution."""
    frame, _ = measured(lambda: woe_table_from_counts(table, smoothing=smoothing))
    lower, upper = _edges(table)
    assert table.bads is not None
    assert table.n_bads is not None
    records = []
    for i, label in enumerate(table.labels):
        woe = contribution = None
        smoothed = False
        if frame is not None:
            row = frame.iloc[i]
            woe, contribution = _finite(float(row["woe"])), _finite(float(row["iv_contribution"]))
            smoothed = bool(row["smoothed"])
        records.append(
            BinRecord(
                variable=variable,
                population="performance",
                bin_index=i,
                label=label,
                n_total=int(table.n_total[i]),
                total=float(table.total[i]),
                lower=lower[i],
                upper=upper[i],
                n_bads=int(table.n_bads[i]),
                bads=float(table.bads[i]),
                woe=woe,
                contribution=contribution,
                smoothed=smoothed,
            )
        )
    return records


#: the most points a stored ROC/KS/CAP curve keeps (exact at every kept threshold)
CURVE_POINTS = 100
#: quantile groups of the gains table
GAIN_GROUPS = 10


def gains(
    scores: CountTable, *, higher_is_riskier: bool, segment: str = ""
) -> tuple[list[FigureRecord], list[BinRecord]]:
    """The gains (lift) table by score decile, riskiest first, and its order breaks."""
    frame, reason = measured(
        lambda: lift_table_from_counts(
            scores, n_groups=GAIN_GROUPS, higher_is_riskier=higher_is_riskier
        )
    )
    if frame is None or frame.empty:
        reason = reason or "no loans in the performance cohort"
        return [
            FigureRecord(name, None, "performance", segment=segment, reason=reason)
            for name in ("lift_order_breaks", "top_decile_lift")
        ], []
    records = [
        BinRecord(
            variable="gains",
            population="performance",
            bin_index=i,
            label=str(int(row["group"])),
            n_total=int(row["n_rows"]),
            total=float(row["count"]),
            segment=segment,
            lower=_finite(float(row["score_min"])),
            upper=_finite(float(row["score_max"])),
            bads=float(row["bads"]),
        )
        for i, (_, row) in enumerate(frame.iterrows())
    ]
    breaks = FigureRecord(
        "lift_order_breaks",
        float(frame.attrs["order_breaks"]),
        "performance",
        segment=segment,
        params={"n_groups": GAIN_GROUPS},
    )
    top = FigureRecord(
        "top_decile_lift",
        _finite(float(frame["lift"].iloc[0])),
        "performance",
        segment=segment,
        params={"n_groups": GAIN_GROUPS},
    )
    return [breaks, top], records


def curve_bins(scores: CountTable, *, higher_is_riskier: bool) -> list[BinRecord]:
    """The score table merged into at most CURVE_POINTS groups of about equal size, safest
    first: ROC, KS and CAP curves drawn from them are exact at every group boundary."""
    ordered = scores.oriented(higher_is_riskier=higher_is_riskier)
    if ordered.bads is None or ordered.n_bads is None or ordered.values is None:
        return []
    n = ordered.n_total.astype(np.float64)
    total = n.sum()
    if total <= 0:
        return []
    before = np.cumsum(n) - n
    group = np.minimum((before / total * CURVE_POINTS).astype(np.int64), CURVE_POINTS - 1)
    ends = np.r_[np.flatnonzero(np.diff(group)), len(group) - 1]
    starts = np.r_[0, ends[:-1] + 1]
    sign = 1.0 if higher_is_riskier else -1.0
    records = []
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        records.append(
            BinRecord(
                variable="curve",
                population="performance",
                bin_index=i,
                label=f"{sign * ordered.values[b]:.10g}",
                n_total=int(ordered.n_total[a : b + 1].sum()),
                total=float(ordered.total[a : b + 1].sum()),
                lower=_finite(sign * float(ordered.values[a])),
                upper=_finite(sign * float(ordered.values[b])),
                n_bads=int(ordered.n_bads[a : b + 1].sum()),
                bads=float(ordered.bads[a : b + 1].sum()),
            )
        )
    return records
