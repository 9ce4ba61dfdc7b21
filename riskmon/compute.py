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

from riskmon.errors import DegenerateDataWarning
from riskmon.metrics import (
    CountTable,
    grid_auc_error_bound,
    grid_ks_error_bound,
    information_value_from_counts,
    ks_statistic_from_counts,
    roc_auc_from_counts,
)
from riskmon.store.repository import FigureRecord

#: pseudo-count for zero cells in WOE/IV and PSI/CSI (see riskmon.metrics); stored with figures
DEFAULT_SMOOTHING = 0.5
#: confidence level of the AUC and Gini intervals
CONFIDENCE_LEVEL = 0.95


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def measured(compute: Callable[[], Any]) -> tuple[Any, str | None]:
    """Run ``compute``; its result, or None and the reason when the figure is undefined."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateDataWarning)
        result = compute()
    reasons = [str(w.message) for w in caught if issubclass(w.category, DegenerateDataWarning)]
    for other in (w for w in caught if not issubclass(w.category, DegenerateDataWarning)):
        warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    value = float(result) if result is not None else math.nan
    if math.isnan(value):
        return None, "; ".join(reasons) or "not defined on this data"
    return result, None


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
        return FigureRecord(
            name, value, population, segment=segment, reason=reason, params=params or {}
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
    return FigureRecord(
        "iv",
        None if iv is None else float(iv),
        population=population,
        variable=variable,
        segment=segment,
        reason=reason,
        params=params,
    )
