"""Discrimination: does the score still rank bads above goods? KS, AUC, Gini of the cohort.

Figures (performance cohort, per segment): ``n_rows``, ``n_bads``, ``bad_rate``, ``ks`` (with
the score where it is reached and its p-value), ``auc`` (DeLong standard error and interval),
``gini``; the score's ROC/KS/CAP curve as ``curve`` bins (whole population).

Rules: ``ks_band`` (KS outside ``thresholds.ks``: RED), ``auc_drop`` and ``gini_drop`` (relative
drop against the baseline, ``thresholds.auc_drop`` / ``gini_drop``); all NOT_EVALUABLE below
``thresholds.min_bads`` bads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.charts import Chart, cap_chart, cumulative, ks_chart, roc_chart, trend_chart
from riskmon.config import Thresholds
from riskmon.figures._drops import drop_levels_of, grid_reason, judge_drop
from riskmon.figures._family import (
    Alerts,
    Family,
    FigureSpec,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    RunTables,
    RunView,
    Section,
    drop_levels,
    finite,
    fmt,
    measured,
    where,
)
from riskmon.figures._family import Headline as H
from riskmon.metrics import (
    CountTable,
    grid_auc_error_bound,
    grid_ks_error_bound,
    ks_statistic_from_counts,
    roc_auc_from_counts,
)
from riskmon.records import ALL, CURVE, PERFORMANCE, BinRecord, FigureRecord, Status

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


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """The cohort's ranking figures per segment, and its curve (whole population)."""
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    riskier = tables.model.higher_is_riskier
    for segment in tables.segments():
        if tables.rows(PERFORMANCE, segment) is None:
            continue
        scores, grid = tables.ranking(PERFORMANCE, segment)
        figures += ranking_figures(
            scores, higher_is_riskier=riskier, population=PERFORMANCE, segment=segment, grid=grid
        )
        if segment == ALL:
            bins += curve_bins(scores, higher_is_riskier=riskier)
    return figures, bins


# --------------------------------------------------------------------------- rules


def _ks_levels(t: Thresholds) -> dict[str, Any]:
    return {"low": t.ks[0], "high": t.ks[1], "min_bads": t.min_bads}


def _describe_ks(levels: Mapping[str, Any]) -> str:
    return (
        f"red outside {levels.get('low', 0):.2f}–{levels.get('high', 1):.2f}"
        f" (needs ≥ {levels.get('min_bads', 0)} bads)"
    )


def _judge_ks(judge: Judge, segment: str) -> None:
    t = judge.thresholds
    low, high = t.ks
    thresholds = _ks_levels(t)
    few = judge.too_few_bads(segment)
    ks = judge.figures.get("ks", PERFORMANCE, segment=segment)
    if few or ks is None or ks.value is None:
        reason = few or (ks.reason if ks else None) or "KS not available"
        judge.add("ks_band", Status.NOT_EVALUABLE, None, thresholds, reason, segment=segment)
        return
    bound = ks.params.get("ks_error_bound")
    if bound is not None and (low <= ks.value <= high) != (low <= ks.value + bound <= high):
        judge.add(
            "ks_band",
            Status.NOT_EVALUABLE,
            ks.value,
            thresholds | {"ks_error_bound": bound},
            grid_reason("KS", ks.value, f"up to {bound:.4f} higher"),
            segment=segment,
        )
        return
    inside = low <= ks.value <= high
    side = "below" if ks.value < low else "above"
    message = (
        f"KS{where('', segment)} {fmt(ks.value)} is within {low:g}-{high:g}"
        if inside
        else f"KS{where('', segment)} {fmt(ks.value)} is {side} the band {low:g}-{high:g}"
    )
    status = Status.GREEN if inside else Status.RED
    judge.add("ks_band", status, ks.value, thresholds, message, segment=segment)


def _judge_auc(judge: Judge, segment: str) -> None:
    judge_drop(judge, "auc_drop", "auc", judge.thresholds.auc_drop, segment=segment)


def _judge_gini(judge: Judge, segment: str) -> None:
    judge_drop(judge, "gini_drop", "gini", judge.thresholds.gini_drop, segment=segment)


# --------------------------------------------------------------------------- report

_KS_FLAG = "OUTSIDE BAND"


def ks_flag(alerts: Alerts, segment: str = "") -> str | None:
    """``OUTSIDE BAND: KS 0.812 is above its band 0.20–0.75`` for a red KS alert."""
    alert = alerts.get("ks_band", segment=segment)
    if alert is None or alert.status != Status.RED or alert.value is None:
        return None
    low, high = alert.thresholds.get("low"), alert.thresholds.get("high")
    side = "below" if low is not None and alert.value < low else "above"
    return f"{_KS_FLAG}: KS {alert.value:.3f} is {side} its band {low:.2f}–{high:.2f}"


@dataclass(frozen=True)
class Discrimination:
    """Section 5: how well the score still separates bads from goods."""

    ks: float | None
    ks_reason: str | None
    ks_status: str | None
    ks_flag: str | None
    ks_params: dict[str, Any]
    auc: float | None
    auc_reason: str | None
    auc_params: dict[str, Any]
    gini: float | None
    gini_params: dict[str, Any]
    n_bads: float | None
    n_rows: float | None
    roc: Chart
    ks_curve: Chart
    cap: Chart
    ks_trend: Chart
    gini_trend: Chart


def section(run: RunView) -> Discrimination:
    figures, alerts = run.figures, run.alerts
    ks, auc, gini = (figures.get(n, PERFORMANCE) for n in ("ks", "auc", "gini"))
    curve = cumulative(run.bins.get(PERFORMANCE, CURVE))
    ks_alert = alerts.get("ks_band")
    ks_levels = ks_alert.thresholds if ks_alert else {}
    ks_guides = [
        (float(ks_levels[k]), "red", f"{k} {ks_levels[k]:.2f}")
        for k in ("low", "high")
        if k in ks_levels
    ]
    gini_guides = []
    base_gini = run.base("gini")
    gini_alert = alerts.get("gini_drop")
    if base_gini is not None and base_gini.value is not None:
        gini_guides.append((base_gini.value, "base", f"base {base_gini.value:.3f}"))
        if gini_alert is not None and base_gini.value > 0:
            for level in ("amber", "red"):
                drop = gini_alert.thresholds.get(level)
                if drop is not None:
                    at = base_gini.value * (1 - float(drop))
                    gini_guides.append((at, level, f"{level} −{float(drop):.0%}"))
    ks_series, _ = run.history.series("ks", PERFORMANCE)
    gini_series, _ = run.history.series("gini", PERFORMANCE)
    bad_rate = figures.value("bad_rate", PERFORMANCE)
    return Discrimination(
        ks=ks.value if ks else None,
        ks_reason=ks.reason if ks else "not computed in this run",
        ks_status=ks_alert.status if ks_alert else None,
        ks_flag=ks_flag(alerts),
        ks_params=dict(ks.params) if ks else {},
        auc=auc.value if auc else None,
        auc_reason=auc.reason if auc else "not computed in this run",
        auc_params=dict(auc.params) if auc else {},
        gini=gini.value if gini else None,
        gini_params=dict(gini.params) if gini else {},
        n_bads=figures.value("n_bads", PERFORMANCE),
        n_rows=figures.value("n_rows", PERFORMANCE),
        roc=roc_chart(curve, auc=auc.value if auc else None),
        ks_curve=ks_chart(curve, ks=ks.value if ks else None),
        cap=cap_chart(curve, bad_rate=bad_rate),
        ks_trend=trend_chart("KS over time", ks_series, y_label="KS", guides=ks_guides),
        gini_trend=trend_chart(
            "Gini over time", gini_series, y_label="Gini", guides=gini_guides, y_floor=None
        ),
    )


FAMILY = Family(
    name="discrimination",
    figures=(
        FigureSpec("n_rows", PERFORMANCE, "segment", "matured loans in the cohort"),
        FigureSpec("n_bads", PERFORMANCE, "segment", "bads in the cohort"),
        FigureSpec("bad_rate", PERFORMANCE, "segment", "bad rate of the cohort"),
        FigureSpec("ks", PERFORMANCE, "segment", "KS"),
        FigureSpec("auc", PERFORMANCE, "segment", "AUC"),
        FigureSpec("gini", PERFORMANCE, "segment", "Gini"),
    ),
    compute=compute,
    rules=(
        Rule("ks_band", "segment", "KS", _ks_levels, _describe_ks, _judge_ks),
        Rule(
            "auc_drop",
            "segment",
            "AUC",
            lambda t: drop_levels_of(t.auc_drop),
            drop_levels,
            _judge_auc,
        ),
        Rule(
            "gini_drop",
            "segment",
            "Gini",
            lambda t: drop_levels_of(t.gini_drop),
            drop_levels,
            _judge_gini,
        ),
    ),
    sections=(Section("discrimination", 30, section),),
    headlines=(
        H(10, "ks", "KS", "ks", PERFORMANCE, rule="ks_band", flag=ks_flag),
        H(20, "auc", "AUC", "auc", PERFORMANCE, rule="auc_drop"),
        H(30, "gini", "Gini", "gini", PERFORMANCE, rule="gini_drop"),
        H(60, "bad_rate", "Bad rate of the cohort", "bad_rate", PERFORMANCE, format="percent"),
    ),
    history=(
        HistoryColumn(30, "bad_rate", "", PERFORMANCE),
        HistoryColumn(40, "ks", "", PERFORMANCE),
        HistoryColumn(50, "auc", "", PERFORMANCE),
        HistoryColumn(60, "gini", "", PERFORMANCE),
    ),
    parameters=(
        Parameter(40, "ks", "p_value_method", "KS p-value method"),
        Parameter(50, "ks", "score_grouping", "score ranked on"),
        Parameter(60, "ks", "ks_error_bound", "largest KS error of the score grid"),
        Parameter(70, "auc", "auc_error_bound", "largest AUC error of the score grid"),
        Parameter(80, "auc", "method", "AUC standard error"),
        Parameter(90, "auc", "confidence_level", "AUC and Gini confidence level"),
    ),
)
