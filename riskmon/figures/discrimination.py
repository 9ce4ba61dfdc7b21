"""Discrimination: does the score still rank bads above goods? KS, AUC, Gini of the cohort.

Figures (performance cohort, per segment): ``n_rows``, ``n_bads``, ``bad_rate``, ``ks`` (with
the score where it is reached and its p-value), ``auc`` (DeLong standard error and interval),
``gini``; the score's ROC/KS/CAP curve as ``curve`` bins (whole population).

Frozen with a baseline (per segment): the same ranking figures of the development sample's
labeled loans, population ``baseline``.

Rules: ``ks_band`` (KS outside ``thresholds.ks``: RED), ``auc_drop`` and ``gini_drop`` (relative
drop against the baseline, ``thresholds.auc_drop`` / ``gini_drop``); all NOT_EVALUABLE below
``thresholds.min_bads`` bads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from riskmon.charts import Chart, cap_chart, cumulative, ks_chart, roc_chart, trend_chart
from riskmon.config import Thresholds
from riskmon.figures._drops import grid_reason, judge_drop
from riskmon.figures._family import (
    Family,
    FigureSpec,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    Section,
    amber_red,
    approximate,
    describe_p,
    drop_levels,
    fmt,
    p_levels,
    p_status,
    where,
)
from riskmon.figures._family import Headline as H
from riskmon.figures._formulas import DISCRIMINATION_FORMULAS
from riskmon.figures._ranking import compute, freeze
from riskmon.figures._views import Alerts, RunView
from riskmon.records import (
    BASELINE,
    CURVE,
    PERFORMANCE,
    FigureRecord,
    Status,
)

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


def _judge_auc_test(judge: Judge, segment: str) -> None:
    levels = judge.thresholds.auc_test
    thresholds = p_levels(levels) | {"min_bads": judge.thresholds.min_bads}
    few = judge.too_few_bads(segment) or judge.in_sample()
    figure = judge.figures.get("auc_test_p", PERFORMANCE, segment=segment)
    if few or figure is None or figure.value is None:
        reason = few or (figure.reason if figure else None) or "AUC test not available"
        judge.add("auc_test", Status.NOT_EVALUABLE, None, thresholds, reason, segment=segment)
        return
    p, params = figure.value, figure.params
    test = (
        "ECB test, the initial AUC's variance counted"
        if params.get("variance") == "both"
        else "ECB test"
    )
    message = (
        f"AUC{where('', segment)} {params.get('auc', 0):.4f} against the initial "
        f"{params.get('initial_auc', 0):.4f} ({params.get('initial_from')}): {test} "
        f"S = {params.get('statistic', 0):.3f}, p = {p:.3g}{approximate(figure)}"
    )
    judge.add("auc_test", p_status(p, levels), p, thresholds, message, segment=segment)


#: an AUC whose interval lies wholly below this ranks bads as safer than goods
_RANDOM_AUC = 0.5


def _judge_direction(judge: Judge, _: str) -> None:
    """RED when the cohort's AUC lies significantly below 0.5 (its DeLong interval wholly
    below): the score ranks the loans the wrong way round, most often a reversed
    ``score_direction``; judged on the whole population."""
    thresholds: dict[str, Any] = {"auc_below": _RANDOM_AUC, "min_bads": judge.thresholds.min_bads}
    few = judge.too_few_bads("")
    auc = judge.figures.get("auc", PERFORMANCE)
    high = auc.params.get("ci_high") if auc is not None else None
    if few or auc is None or auc.value is None or high is None:
        reason = few or (auc.reason if auc else None) or "AUC or its interval not available"
        judge.add("score_direction", Status.NOT_EVALUABLE, None, thresholds, reason)
        return
    low, level = auc.params.get("ci_low", 0.0), auc.params.get("confidence_level", 0.95)
    interval = f"{level:.0%} interval {low:.4f}–{high:.4f}"
    if high < _RANDOM_AUC:
        message = (
            f"AUC {auc.value:.4f} ({interval}) is below 0.5: the score ranks bads as safer "
            f"than goods; check score_direction"
        )
        judge.add("score_direction", Status.RED, auc.value, thresholds, message)
        return
    message = f"AUC {auc.value:.4f} ({interval}) is not significantly below 0.5"
    judge.add("score_direction", Status.GREEN, auc.value, thresholds, message)


def _describe_direction(levels: Mapping[str, Any]) -> str:
    return f"red when the AUC's interval lies below {levels.get('auc_below', _RANDOM_AUC):g}"


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
    auc_test: FigureRecord | None
    auc_test_status: str | None
    roc: Chart
    ks_curve: Chart
    cap: Chart
    ks_trend: Chart
    gini_trend: Chart
    #: the cohort overlaps the development window: "2023-03-01 to 2023-03-31 lies ..." or None
    in_sample: str | None = None


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
        auc_test=figures.get("auc_test_p", PERFORMANCE),
        auc_test_status=alerts.status("auc_test"),
        roc=roc_chart(curve, auc=auc.value if auc else None),
        ks_curve=ks_chart(curve, ks=ks.value if ks else None),
        cap=cap_chart(curve, bad_rate=bad_rate),
        ks_trend=trend_chart("KS over time", ks_series, y_label="KS", guides=ks_guides),
        gini_trend=trend_chart(
            "Gini over time", gini_series, y_label="Gini", guides=gini_guides, y_floor=None
        ),
        in_sample=_in_sample(figures.get("cohort_in_sample", PERFORMANCE)),
    )


def _in_sample(overlap: FigureRecord | None) -> str | None:
    if overlap is None or not overlap.value:
        return None
    return (
        f"In-sample cohort: {overlap.value:.0%} of the performance cohort's score dates "
        f"({overlap.params.get('cohort')}) lie in the development window "
        f"({overlap.params.get('development')}). Its KS, AUC and Gini describe the sample the "
        f"model was built on, not new loans."
    )


FAMILY = Family(
    name="discrimination",
    order=10,
    figures=(
        FigureSpec("n_rows", PERFORMANCE, "segment", "matured loans in the cohort", count=True),
        FigureSpec("n_bads", PERFORMANCE, "segment", "bads in the cohort", count=True),
        FigureSpec("bad_rate", PERFORMANCE, "segment", "bad rate of the cohort"),
        FigureSpec("ks", PERFORMANCE, "segment", "KS", rows_test=True),
        FigureSpec("auc", PERFORMANCE, "segment", "AUC", rows_test=True),
        FigureSpec("gini", PERFORMANCE, "segment", "Gini", rows_test=True),
        FigureSpec("auc_test_p", PERFORMANCE, "segment", "ECB AUC test p-value", rows_test=True),
        FigureSpec("n_rows", BASELINE, "segment", "labeled loans at the baseline", count=True),
        FigureSpec("n_bads", BASELINE, "segment", "bads at the baseline", count=True),
        FigureSpec("bad_rate", BASELINE, "segment", "bad rate at the baseline"),
        FigureSpec("ks", BASELINE, "segment", "KS at the baseline", rows_test=True),
        FigureSpec("auc", BASELINE, "segment", "AUC at the baseline", rows_test=True),
        FigureSpec("gini", BASELINE, "segment", "Gini at the baseline", rows_test=True),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            "ks_band",
            "segment",
            "KS",
            _ks_levels,
            _describe_ks,
            _judge_ks,
            PERFORMANCE,
            finding=(
                "KS, the largest gap between the score's distributions of bads and goods, is "
                "outside its band"
            ),
        ),
        Rule(
            "auc_drop",
            "segment",
            "AUC",
            lambda t: amber_red(t.auc_drop),
            drop_levels,
            _judge_auc,
            PERFORMANCE,
            baseline=("auc",),
            finding=(
                "AUC, the chance that a bad scores riskier than a good, has fallen from the "
                "baseline's"
            ),
            worse="higher",
        ),
        Rule(
            "auc_test",
            "segment",
            "AUC against the initial AUC (ECB test)",
            lambda t: p_levels(t.auc_test) | {"min_bads": t.min_bads},
            describe_p,
            _judge_auc_test,
            PERFORMANCE,
            tested="p",
            baseline=("auc",),
            finding="AUC is significantly below the initial AUC (ECB test)",
        ),
        Rule(
            "gini_drop",
            "segment",
            "Gini",
            lambda t: amber_red(t.gini_drop),
            drop_levels,
            _judge_gini,
            PERFORMANCE,
            baseline=("gini",),
            finding="Gini has fallen from the baseline's",
            worse="higher",
        ),
        Rule(
            "score_direction",
            "run",
            "AUC significantly below 0.5 (a reversed score_direction)",
            lambda t: {"auc_below": _RANDOM_AUC, "min_bads": t.min_bads},
            _describe_direction,
            _judge_direction,
            finding="The score ranks bads as safer than goods: check score_direction",
            worse="lower",
        ),
    ),
    sections=(
        Section(
            "discrimination",
            "Discrimination",
            "discrimination",
            30,
            "_discrimination.html",
            section,
        ),
    ),
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
    formulas=DISCRIMINATION_FORMULAS,
)
