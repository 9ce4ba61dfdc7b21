"""The ranking figures of a labeled score table (KS, AUC, Gini, bad rate, counts) and the
score's curve points: what the discrimination family stores for a run and a baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

from riskmon.figures._family import as_note, finite, measured
from riskmon.metrics import (
    CountTable,
    grid_auc_error_bound,
    grid_ks_error_bound,
    ks_statistic_from_counts,
    roc_auc_from_counts,
)
from riskmon.records import CURVE, PERFORMANCE, BinRecord, FigureRecord

#: confidence level of the AUC and Gini intervals
CONFIDENCE_LEVEL = 0.95
#: the most points a stored ROC/KS/CAP curve keeps (exact at every kept threshold)
CURVE_POINTS = 100


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
        if value is not None:
            as_note(params, reason)
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
            "score_at": _ks_boundary(float(ks.score), grid, higher_is_riskier=higher_is_riskier),
            "p_value": finite(float(ks.p_value)),
            "p_value_method": ks.p_value_method,
            "p_value_conservative": bool(ks.p_value_conservative),
            "critical_value_5pct": finite(float(ks.critical_value)),
            "n_bads": int(ks.n_bads),
            "n_goods": int(ks.n_goods),
        }
    figures.append(fig("ks", None if ks is None else float(ks), ks_reason, ks_params))
    auc_params: dict[str, Any] = dict(grid_params)
    gini_params: dict[str, Any] = {}
    if auc is not None:
        auc_params |= {
            "std_error": finite(float(auc.std_error)),
            "ci_low": finite(float(auc.ci_low)),
            "ci_high": finite(float(auc.ci_high)),
            "confidence_level": CONFIDENCE_LEVEL,
            "method": "DeLong",
        }
        gini_params = {
            "ci_low": finite(2 * float(auc.ci_low) - 1),
            "ci_high": finite(2 * float(auc.ci_high) - 1),
            "confidence_level": CONFIDENCE_LEVEL,
        }
    figures.append(fig("auc", None if auc is None else float(auc), auc_reason, auc_params))
    figures.append(
        fig("gini", None if auc is None else 2 * float(auc) - 1, auc_reason, gini_params)
    )
    return figures


def _ks_boundary(score: float, grid: CountTable | None, *, higher_is_riskier: bool) -> float | None:
    """The score at which KS is reached, as the boundary between the safe and the risky side.

    On a grid every cell is valued at its upper edge, which is the boundary when the safe side
    is below it (PDs: ``score <= at``). When higher scores are safer the safe side is above the
    boundary (``score > at``), which is the cell's lower edge.
    """
    if grid is None or higher_is_riskier or grid.binning is None:
        return finite(score)
    edges = np.asarray(grid.binning.edges, dtype=np.float64)
    cell = int(np.searchsorted(edges, score, side="left"))  # the cell valued at ``score``
    return finite(float(edges[cell - 1])) if cell > 0 else None


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
                variable=CURVE,
                population=PERFORMANCE,
                bin_index=i,
                label=f"{sign * ordered.values[b]:.10g}",
                n_total=int(ordered.n_total[a : b + 1].sum()),
                total=float(ordered.total[a : b + 1].sum()),
                lower=finite(sign * float(ordered.values[a])),
                upper=finite(sign * float(ordered.values[b])),
                n_bads=int(ordered.n_bads[a : b + 1].sum()),
                bads=float(ordered.bads[a : b + 1].sum()),
            )
        )
    return records
