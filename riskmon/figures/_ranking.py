"""The ranking figures of a labeled score table (KS, AUC, Gini, bad rate, counts) and the
score's curve points: what the discrimination family computes for a run (``compute``, with the
ECB AUC test) and freezes with a baseline (``freeze``); its rules, section and declaration are in
:mod:`riskmon.figures.discrimination`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from riskmon.figures._chunks import Chunk
from riskmon.figures._family import as_note, finite, measured, where
from riskmon.figures._views import RunTables
from riskmon.metrics import (
    CountTable,
    auc_test_from_counts,
    grid_auc_error_bound,
    grid_ks_error_bound,
    ks_statistic_from_counts,
    roc_auc_from_counts,
)
from riskmon.records import (
    ALL,
    BASELINE,
    CURVE,
    DEVELOPMENT,
    PERFORMANCE,
    SCORE,
    BinRecord,
    FigureRecord,
)

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
    grid_params = _grid_params(grid)
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
    ks_params = dict(grid_params)
    if ks is not None:
        ks_params |= _ks_params(ks, grid, higher_is_riskier=higher_is_riskier)
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


def _grid_params(grid: CountTable | None) -> dict[str, Any]:
    """How the score was grouped, and with a grid the largest errors it can cause."""
    if grid is None:
        return {"score_grouping": "distinct values"}
    auc_bound, _ = measured(lambda: grid_auc_error_bound(grid))
    ks_bound, _ = measured(lambda: grid_ks_error_bound(grid))
    return {
        "score_grouping": f"grid of {grid.binning.n_value_bins if grid.binning else 0} cells",
        "auc_error_bound": auc_bound,
        "ks_error_bound": ks_bound,
    }


def _ks_params(ks: Any, grid: CountTable | None, *, higher_is_riskier: bool) -> dict[str, Any]:
    """Where KS is reached, and its test."""
    return {
        "score_at": _ks_boundary(float(ks.score), grid, higher_is_riskier=higher_is_riskier),
        "p_value": finite(float(ks.p_value)),
        "p_value_method": ks.p_value_method,
        "p_value_conservative": bool(ks.p_value_conservative),
        "critical_value_5pct": finite(float(ks.critical_value)),
        "n_bads": int(ks.n_bads),
        "n_goods": int(ks.n_goods),
    }


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


# --------------------------------------------------------------------------- a run, a baseline


def compute(tables: RunTables) -> Iterator[Chunk]:
    """The cohort's ranking figures, segment by segment, and its curve (whole population)."""
    riskier = tables.model.higher_is_riskier
    for segment in tables.segments():
        if tables.rows(PERFORMANCE, segment) is None:
            continue
        scores, grid = tables.ranking(PERFORMANCE, segment)
        figures = ranking_figures(
            scores, higher_is_riskier=riskier, population=PERFORMANCE, segment=segment, grid=grid
        )
        figures.append(auc_test_figure(tables, scores, segment))
        bins = curve_bins(scores, higher_is_riskier=riskier) if segment == ALL else []
        yield figures, bins


def freeze(tables: RunTables) -> list[FigureRecord]:
    """The development sample's ranking figures per segment with labeled loans: what the AUC
    and Gini drops and the ECB AUC test compare with."""
    figures: list[FigureRecord] = []
    for segment in tables.segments():
        if not tables.has(DEVELOPMENT, SCORE, segment):
            continue
        scores, grid = tables.ranking(DEVELOPMENT, segment)
        figures += ranking_figures(
            scores,
            higher_is_riskier=tables.model.higher_is_riskier,
            population=BASELINE,
            segment=segment,
            grid=grid,
        )
    return figures


def auc_test_figure(tables: RunTables, scores: CountTable, segment: str) -> FigureRecord:
    """The ECB test of the cohort's AUC against the initial AUC (configured, else the
    baseline's): S = (AUC_init − AUC_now) / s, p = 1 − Φ(S), s the current AUC's DeLong
    standard error as the ECB defines it, or with ``calibration.auc_test_variance: both``
    √(s_now² + s_init²), s_init configured or the baseline's DeLong standard error."""
    c = tables.model.calibration
    both = c.auc_test_variance == "both"
    initial, initial_se = c.initial_auc, c.initial_auc_se
    source: str | None = "configured"
    if initial is None:
        base = tables.baseline.figure("auc", segment=segment)
        if base is None or base.value is None:
            why = "no initial AUC: none configured, none in the baseline" + where("", segment)
            return FigureRecord("auc_test_p", None, PERFORMANCE, segment=segment, reason=why)
        initial, source = base.value, f"baseline version {tables.baseline.version}"
        if both and initial_se is None:
            initial_se = base.params.get("std_error")
    if not both:
        initial_se = None
    result, reason = measured(
        lambda: auc_test_from_counts(
            scores,
            initial_auc=initial,
            initial_auc_se=initial_se,
            higher_is_riskier=tables.model.higher_is_riskier,
        )
    )
    value = None if result is None else finite(float(result.pvalue))
    params: dict[str, Any] = {"initial_auc": initial, "initial_auc_se": initial_se}
    params["variance"] = c.auc_test_variance
    params["initial_from"] = source
    if result is not None:
        params |= {"statistic": finite(float(result.statistic)), "auc": finite(result.auc)}
        params["std_error"] = finite(result.std_error)
    return FigureRecord(
        "auc_test_p",
        value,
        PERFORMANCE,
        segment=segment,
        reason=reason if value is None else None,
        params=params,
    )
