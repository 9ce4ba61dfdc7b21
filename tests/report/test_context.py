"""The fields each report page's context offers its template, pinned.

A template reads these names; renaming or dropping one must be a deliberate change to this
list, made together with the templates that read it.
"""

from __future__ import annotations

import dataclasses

import pytest

from riskmon.charts import Chart, Sparkline
from riskmon.figures.discrimination import Discrimination
from riskmon.figures.gains import GainsRow
from riskmon.figures.quality import DataQuality, QualityRow
from riskmon.figures.stability import CharacteristicStability, Stability, StabilityRow
from riskmon.figures.strength import CharacteristicStrength, WoeRow
from riskmon.report import context as c

PINNED: dict[type, list[str]] = {
    c.RunReportContext: [
        "model",
        "as_of",
        "run_status",
        "error",
        "overall",
        "why",
        "header",
        "alerts",
        "summary",
        "sections",
        "appendix",
        "nav",
    ],
    c.PageSection: ["name", "title", "anchor", "template", "context"],
    c.SegmentsTable: ["rows", "note"],
    c.Navigation: ["index", "previous", "next"],
    c.ReportLink: ["as_of", "run_status", "overall", "href"],
    c.IndexContext: ["models", "report_version"],
    c.IndexEntry: [
        "model",
        "configured",
        "as_of",
        "run_status",
        "overall",
        "error",
        "n_current",
        "ks",
        "ks_status",
        "auc",
        "gini",
        "psi",
        "psi_status",
        "n_runs",
        "href",
        "why",
        "alerts",
        "more_alerts",
        "reports",
    ],
    c.Header: [
        "windows",
        "stability_window",
        "performance_window",
        "bad_definition",
        "weight",
        "snapshot",
        "score_direction",
        "n_current",
        "n_matured",
        "n_unmatured",
        "baseline_version",
        "baseline_frozen_at",
        "started_at",
        "finished_at",
        "config_note",
        "thresholds",
    ],
    c.Window: ["name", "start", "end", "note"],
    c.Threshold: ["rule", "figure", "levels"],
    c.AlertRow: ["status", "rule", "message", "variable", "segment"],
    c.SummaryRow: [
        "key",
        "label",
        "value",
        "reason",
        "baseline",
        "previous",
        "format",
        "band",
        "status",
        "flag",
        "trend",
    ],
    StabilityRow: [
        "index",
        "label",
        "n_total",
        "weight",
        "expected",
        "actual",
        "difference",
        "log_ratio",
        "contribution",
        "smoothed",
    ],
    Stability: [
        "psi",
        "reason",
        "band",
        "status",
        "critical_value",
        "approximate",
        "smoothing",
        "rows",
        "bars",
        "trend",
    ],
    CharacteristicStability: [
        "name",
        "csi",
        "reason",
        "band",
        "status",
        "critical_value",
        "approximate",
        "n_smoothed",
        "rows",
        "trend",
    ],
    Discrimination: [
        "ks",
        "ks_reason",
        "ks_status",
        "ks_flag",
        "ks_params",
        "auc",
        "auc_reason",
        "auc_params",
        "gini",
        "gini_params",
        "n_bads",
        "n_rows",
        "auc_test",
        "auc_test_status",
        "roc",
        "ks_curve",
        "cap",
        "ks_trend",
        "gini_trend",
        "in_sample",
    ],
    GainsRow: [
        "group",
        "lower",
        "upper",
        "n_total",
        "weight",
        "share",
        "bads",
        "bad_rate",
        "cum_share",
        "cum_bads",
        "cum_bad_rate",
        "lift",
        "cum_lift",
        "ks",
    ],
    WoeRow: [
        "index",
        "label",
        "base_n",
        "base_bad_rate",
        "base_woe",
        "n_total",
        "n_bads",
        "weight",
        "weighted_bads",
        "bad_rate",
        "woe",
        "contribution",
        "smoothed",
    ],
    CharacteristicStrength: [
        "name",
        "iv",
        "reason",
        "strength",
        "base_iv",
        "base_strength",
        "status",
        "rows",
    ],
    c.SegmentRow: [
        "segment",
        "n_current",
        "psi",
        "psi_status",
        "n_matured",
        "bad_rate",
        "ks",
        "ks_status",
        "auc",
        "auc_status",
        "gini",
        "unmatured_share",
    ],
    QualityRow: [
        "name",
        "missing_rate",
        "base_missing_rate",
        "change",
        "status",
        "unseen_rate",
        "unseen_levels",
        "largest",
        "other_share",
    ],
    DataQuality: [
        "rows",
        "unmatured_share",
        "n_unmatured",
        "n_scored",
        "waterfall",
        "exclusions_status",
        "duplicates_status",
    ],
    c.Parameter: ["name", "value"],
    c.Appendix: ["parameters", "run_version", "baseline_version", "report_version", "config_hash"],
    Chart: [
        "title",
        "summary",
        "width",
        "height",
        "left",
        "top",
        "right",
        "bottom",
        "x_ticks",
        "y_ticks",
        "x_label",
        "y_label",
        "lines",
        "dots",
        "guides",
        "bars",
        "legend",
        "empty",
    ],
    Sparkline: ["width", "height", "points", "last", "summary"],
}


@pytest.mark.parametrize("cls", list(PINNED), ids=lambda cls: cls.__name__)
def test_context_fields_are_pinned(cls: type) -> None:
    assert [f.name for f in dataclasses.fields(cls)] == PINNED[cls]


@pytest.mark.parametrize("cls", list(PINNED), ids=lambda cls: cls.__name__)
def test_contexts_are_frozen(cls: type) -> None:
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_every_context_dataclass_is_pinned() -> None:
    defined = {
        obj
        for obj in vars(c).values()
        if dataclasses.is_dataclass(obj) and obj.__module__ == c.__name__
    }
    assert defined <= set(PINNED)
