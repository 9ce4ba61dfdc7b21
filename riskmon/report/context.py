"""What each report page shows, as one frozen dataclass per page, read from the metric store.

Nothing here comes from the state of a run in memory: a report rendered today from the store
and one rendered by the nightly run right after it stored its figures are the same page. The
configuration is read only for what the store does not keep — the date windows (recomputed
with :func:`riskmon.plan.plan_run`), the bad definition and the segment columns — and a
report says so when the model's configuration changed after the run.

Figure values stay numbers (or None with the reason they are not available); the templates
format them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from riskmon import __version__
from riskmon.compute import measured
from riskmon.config import ModelConfig, Thresholds, model_fingerprint
from riskmon.errors import RiskmonError
from riskmon.metrics import Binning, CountTable, woe_table_from_counts
from riskmon.plan import plan_run
from riskmon.records import (
    CURRENT,
    CURVE,
    GAINS,
    PERFORMANCE,
    SCORE,
    BinRecord,
    FigureRecord,
    Status,
)
from riskmon.report.charts import (
    Chart,
    Sparkline,
    bar_chart,
    cap_chart,
    cumulative,
    ks_chart,
    roc_chart,
    sparkline,
    trend_chart,
)
from riskmon.store import (
    HistoryPoint,
    MetricStore,
    RunRecord,
    StoredAlert,
    StoredBaseline,
)


class NoRunError(RiskmonError):
    """The store holds no run to report on."""


# --------------------------------------------------------------------------- page parts


@dataclass(frozen=True)
class Window:
    """A named range of score dates, both ends inclusive."""

    name: str
    start: dt.date | None
    end: dt.date | None
    note: str


@dataclass(frozen=True)
class Threshold:
    """One alert rule and the levels it used."""

    rule: str
    figure: str
    levels: str


@dataclass(frozen=True)
class Header:
    """Section 1: what was measured, on which loans, against which baseline."""

    windows: tuple[Window, ...]
    stability_window: str | None
    performance_window: str | None
    bad_definition: str | None
    weight: str | None
    score_direction: str | None
    n_current: int | None
    n_matured: int | None
    n_unmatured: int | None
    baseline_version: int | None
    baseline_frozen_at: dt.datetime | None
    started_at: dt.datetime
    finished_at: dt.datetime | None
    config_note: str | None
    thresholds: tuple[Threshold, ...]


@dataclass(frozen=True)
class AlertRow:
    status: str
    rule: str
    message: str
    variable: str
    segment: str


@dataclass(frozen=True)
class SummaryRow:
    """Section 2: one headline figure."""

    key: str
    label: str
    value: float | None
    reason: str | None
    baseline: float | None
    previous: float | None
    format: str  # decimal | percent | count | ratio
    band: str
    status: str | None  # None: no alert rule judges this figure
    flag: str | None  # spelled-out warning, e.g. KS outside its band
    trend: Sparkline


@dataclass(frozen=True)
class StabilityRow:
    """One bin of a PSI or CSI table."""

    index: int
    label: str
    n_total: int
    expected: float | None
    actual: float | None
    difference: float | None
    log_ratio: float | None
    contribution: float | None
    smoothed: bool


@dataclass(frozen=True)
class Stability:
    """Section 3: the score's distribution against the baseline."""

    psi: float | None
    reason: str | None
    band: str | None
    status: str | None
    critical_value: float | None
    smoothing: float | None
    rows: tuple[StabilityRow, ...]
    bars: Chart
    trend: Chart


@dataclass(frozen=True)
class CharacteristicStability:
    """Section 4: one characteristic's CSI and its bins."""

    name: str
    csi: float | None
    reason: str | None
    band: str | None
    status: str | None
    critical_value: float | None
    n_smoothed: int
    rows: tuple[StabilityRow, ...]
    trend: Sparkline


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


@dataclass(frozen=True)
class GainsRow:
    """Section 6: one score decile, riskiest first."""

    group: str
    lower: float | None
    upper: float | None
    n_total: int
    share: float
    bads: float
    bad_rate: float | None
    cum_share: float
    cum_bads: float
    cum_bad_rate: float | None
    lift: float | None
    cum_lift: float | None
    ks: float | None


@dataclass(frozen=True)
class WoeRow:
    """One bin of a characteristic, baseline (development sample) against the cohort."""

    index: int
    label: str
    base_n: int | None
    base_bad_rate: float | None
    base_woe: float | None
    n_total: int
    n_bads: int | None
    bad_rate: float | None
    woe: float | None
    contribution: float | None
    smoothed: bool


@dataclass(frozen=True)
class CharacteristicStrength:
    """Section 7: one characteristic's WOE per bin and its IV, baseline against now."""

    name: str
    iv: float | None
    reason: str | None
    strength: str | None
    base_iv: float | None
    base_strength: str | None
    status: str | None
    rows: tuple[WoeRow, ...]


@dataclass(frozen=True)
class SegmentRow:
    """Section 8: the headline figures of one segment."""

    segment: str
    n_current: float | None
    psi: float | None
    psi_status: str | None
    n_matured: float | None
    bad_rate: float | None
    ks: float | None
    ks_status: str | None
    auc: float | None
    auc_status: str | None
    gini: float | None
    unmatured_share: float | None


@dataclass(frozen=True)
class QualityRow:
    """Section 9: one characteristic's missing and unseen values."""

    name: str
    missing_rate: float | None
    base_missing_rate: float | None
    change: float | None
    status: str | None
    unseen_rate: float | None


@dataclass(frozen=True)
class DataQuality:
    rows: tuple[QualityRow, ...]
    unmatured_share: float | None
    n_unmatured: int | None
    n_scored: int | None


@dataclass(frozen=True)
class Parameter:
    """Section 10: a parameter that changes a figure, as stored with it."""

    name: str
    value: str


@dataclass(frozen=True)
class Appendix:
    parameters: tuple[Parameter, ...]
    run_version: str
    baseline_version: str | None
    report_version: str
    config_hash: str


@dataclass(frozen=True)
class RunReportContext:
    """Everything the model run report (``model_run.html``) shows."""

    model: str
    as_of: dt.date
    run_status: str
    error: str | None
    overall: str
    header: Header
    alerts: tuple[AlertRow, ...]
    summary: tuple[SummaryRow, ...]
    stability: Stability | None
    characteristics: tuple[CharacteristicStability, ...]
    discrimination: Discrimination | None
    gains: tuple[GainsRow, ...]
    strength: tuple[CharacteristicStrength, ...]
    segments: tuple[SegmentRow, ...]
    quality: DataQuality | None
    appendix: Appendix


@dataclass(frozen=True)
class IndexEntry:
    """One model on the index page."""

    model: str
    configured: bool
    as_of: dt.date | None
    run_status: str | None
    overall: str
    error: str | None
    n_current: int | None
    ks: float | None
    ks_status: str | None
    auc: float | None
    gini: float | None
    psi: float | None
    psi_status: str | None
    n_runs: int
    href: str | None
    earlier: tuple[tuple[dt.date, str], ...]


@dataclass(frozen=True)
class IndexContext:
    """Everything the index page (``index.html``) shows."""

    models: tuple[IndexEntry, ...]
    report_version: str


# --------------------------------------------------------------------------- lookups


class _Figures:
    """A run's figures by (name, population, variable, segment)."""

    def __init__(self, records: Iterable[FigureRecord]):
        self.by_key = {(f.name, f.population, f.variable, f.segment): f for f in records}

    def get(
        self, name: str, population: str, variable: str = "", segment: str = ""
    ) -> FigureRecord | None:
        return self.by_key.get((name, population, variable, segment))

    def value(
        self, name: str, population: str, variable: str = "", segment: str = ""
    ) -> float | None:
        figure = self.get(name, population, variable, segment)
        return None if figure is None else figure.value

    def segments(self) -> list[str]:
        return sorted({key[3] for key in self.by_key if key[3]})

    def variables(self, name: str) -> list[str]:
        return [key[2] for key in self.by_key if key[0] == name and not key[3]]


class _Alerts:
    def __init__(self, records: Iterable[StoredAlert]):
        self.by_key = {(a.rule, a.variable, a.segment): a for a in records}

    def get(self, rule: str, variable: str = "", segment: str = "") -> StoredAlert | None:
        return self.by_key.get((rule, variable, segment))

    def status(self, rule: str, variable: str = "", segment: str = "") -> str | None:
        alert = self.get(rule, variable, segment)
        return None if alert is None else alert.status


def _bins(
    records: Iterable[BinRecord], population: str, variable: str, segment: str = ""
) -> list[BinRecord]:
    chosen = [
        b
        for b in records
        if (b.population, b.variable, b.segment) == (population, variable, segment)
    ]
    return sorted(chosen, key=lambda b: b.bin_index)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


# --------------------------------------------------------------------------- header


def _thresholds(
    alerts: Sequence[StoredAlert], configured: Thresholds | None
) -> tuple[Threshold, ...]:
    """The levels each rule used, as stored with its alerts (the configuration's otherwise)."""
    used: dict[str, dict[str, Any]] = {}
    for alert in alerts:
        used.setdefault(alert.rule, alert.thresholds)
    if configured is not None:
        t = configured
        defaults: dict[str, dict[str, Any]] = {
            "ks_band": {"low": t.ks[0], "high": t.ks[1], "min_bads": t.min_bads},
            "psi": {"amber": t.psi.amber, "red": t.psi.red},
            "csi": {"amber": t.csi.amber, "red": t.csi.red},
            "auc_drop": {"amber": t.auc_drop.amber, "red": t.auc_drop.red},
            "gini_drop": {"amber": t.gini_drop.amber, "red": t.gini_drop.red},
            "iv_drop": {"amber": t.iv_drop.amber, "red": t.iv_drop.red},
            "volume_change": {"amber": t.volume_change.amber, "red": t.volume_change.red},
            "missing_rate_change": {
                "amber": t.missing_rate_change.amber,
                "red": t.missing_rate_change.red,
            },
        }
        for rule, levels in defaults.items():
            used.setdefault(rule, levels)
    return tuple(
        Threshold(rule, figure, describe(used[rule]))
        for rule, figure, describe in _RULES
        if rule in used
    )


def _band(levels: dict[str, Any]) -> str:
    return f"amber ≥ {levels.get('amber', 0):g}, red ≥ {levels.get('red', 0):g}"


def _drop(levels: dict[str, Any]) -> str:
    amber, red = levels.get("amber", 0), levels.get("red", 0)
    return f"lower than baseline by: amber ≥ {amber:.0%}, red ≥ {red:.0%}"


def _change(levels: dict[str, Any]) -> str:
    return f"change: amber ≥ {levels.get('amber', 0):.0%}, red ≥ {levels.get('red', 0):.0%}"


def _points(levels: dict[str, Any]) -> str:
    amber, red = levels.get("amber", 0) * 100, levels.get("red", 0) * 100
    return f"change: amber ≥ {amber:g}, red ≥ {red:g} points"


def _ks_levels(levels: dict[str, Any]) -> str:
    return (
        f"red outside {levels.get('low', 0):.2f}–{levels.get('high', 1):.2f}"
        f" (needs ≥ {levels.get('min_bads', 0)} bads)"
    )


_RULES = (
    ("ks_band", "KS", _ks_levels),
    ("auc_drop", "AUC", _drop),
    ("gini_drop", "Gini", _drop),
    ("psi", "PSI of the score", _band),
    ("csi", "CSI of each characteristic", _band),
    ("iv_drop", "IV of each characteristic", _drop),
    ("volume_change", "number of loans vs previous run", _change),
    ("missing_rate_change", "missing rate vs baseline", _points),
)


def _header(
    run: RunRecord,
    model: ModelConfig | None,
    baseline: StoredBaseline | None,
    alerts: Sequence[StoredAlert],
) -> Header:
    windows: list[Window] = []
    config_note = None
    if model is not None:
        plan = plan_run(model, run.as_of)
        windows = [
            Window(
                "current population", plan.current.start, plan.current.end, "stability: PSI, CSI"
            ),
            Window(
                "performance cohort",
                plan.performance.start,
                plan.performance.end,
                f"outcomes after {model.performance_window}: KS, AUC, Gini, lift, IV",
            ),
        ]
        if model_fingerprint(model) != run.config_hash:
            config_note = (
                "The model's configuration changed after this run; the windows and the bad "
                "definition shown are those of the current configuration."
            )
    else:
        config_note = "The model is not in the configuration: date windows are not known."
    if baseline is not None:
        windows.append(
            Window(
                f"baseline (version {baseline.version})",
                baseline.window_start,
                baseline.window_end,
                f"development sample: {baseline.n_rows} loans, {baseline.n_bads} bads",
            )
        )
    columns = model.columns if model is not None else None
    return Header(
        windows=tuple(windows),
        stability_window=str(model.stability_window) if model else None,
        performance_window=str(model.performance_window) if model else None,
        bad_definition=(
            f"column {columns.label!r}: 1 = bad (default), 0 = good, empty = outcome not yet "
            "known (unmatured)"
            if columns
            else None
        ),
        weight=f"weighted by column {columns.weight!r}" if columns and columns.weight else None,
        score_direction=(
            model.score_direction.replace("_", " ") + f" (score column {columns.score!r})"
            if model and columns
            else None
        ),
        n_current=run.n_current,
        n_matured=run.n_matured,
        n_unmatured=run.n_unmatured,
        baseline_version=baseline.version if baseline else None,
        baseline_frozen_at=baseline.frozen_at if baseline else None,
        started_at=run.started_at,
        finished_at=run.finished_at,
        config_note=config_note,
        thresholds=_thresholds(alerts, model.thresholds if model else None),
    )


# --------------------------------------------------------------------------- history


class _History:
    """Figures over the succeeded runs up to the reported date (never later ones)."""

    def __init__(self, store: MetricStore, model: str, as_of: dt.date):
        self.store, self.model, self.as_of = store, model, as_of

    def points(
        self, name: str, population: str, variable: str = "", segment: str = ""
    ) -> list[HistoryPoint]:
        found = self.store.history(
            self.model, name, variable=variable, segment=segment, population=population
        )
        return [p for p in found if p.as_of <= self.as_of]

    def series(
        self, name: str, population: str, variable: str = ""
    ) -> tuple[list[tuple[dt.date, float | None]], float | None]:
        """The (date, value) pairs, and the value of the run before the reported one."""
        points = self.points(name, population, variable)
        earlier = [p for p in points if p.as_of < self.as_of]
        previous = earlier[-1].value if earlier else None
        return [(p.as_of, p.value) for p in points], previous


# --------------------------------------------------------------------------- sections


_KS_FLAG = "OUTSIDE BAND"


def _ks_flag(alerts: _Alerts, segment: str = "") -> str | None:
    alert = alerts.get("ks_band", segment=segment)
    if alert is None or alert.status != "RED" or alert.value is None:
        return None
    low, high = alert.thresholds.get("low"), alert.thresholds.get("high")
    side = "below" if low is not None and alert.value < low else "above"
    return f"{_KS_FLAG}: KS {alert.value:.3f} is {side} its band {low:.2f}–{high:.2f}"


def _summary(
    figures: _Figures,
    alerts: _Alerts,
    baseline: StoredBaseline | None,
    history: _History,
) -> tuple[SummaryRow, ...]:
    def base(name: str) -> float | None:
        figure = baseline.figure(name) if baseline is not None else None
        return None if figure is None else figure.value

    def row(
        key: str,
        label: str,
        name: str,
        population: str,
        *,
        variable: str = "",
        fmt: str = "decimal",
        rule: str | None = None,
        band: str = "",
        with_baseline: bool = True,
        flag: str | None = None,
    ) -> SummaryRow:
        figure = figures.get(name, population, variable)
        series, previous = history.series(name, population, variable)
        return SummaryRow(
            key=key,
            label=label,
            value=figure.value if figure else None,
            reason=(figure.reason if figure else "not computed in this run"),
            baseline=base(name) if with_baseline else None,
            previous=previous,
            format=fmt,
            band=band,
            status=alerts.status(rule, variable) if rule else None,
            flag=flag,
            trend=sparkline(series, digits=0 if fmt == "count" else 3),
        )

    def levels(rule: str, describe: Any, variable: str = "") -> str:
        alert = alerts.get(rule, variable)
        return describe(alert.thresholds) if alert is not None else ""

    rows = [
        row(
            "ks",
            "KS",
            "ks",
            PERFORMANCE,
            rule="ks_band",
            band=levels("ks_band", _ks_levels),
            flag=_ks_flag(alerts),
        ),
        row("auc", "AUC", "auc", PERFORMANCE, rule="auc_drop", band=levels("auc_drop", _drop)),
        row("gini", "Gini", "gini", PERFORMANCE, rule="gini_drop", band=levels("gini_drop", _drop)),
        row(
            "psi",
            "PSI of the score",
            "psi",
            CURRENT,
            variable=SCORE,
            rule="psi",
            band=levels("psi", _band, SCORE),
            with_baseline=False,
        ),
    ]
    csi = [f for f in (figures.get("csi", CURRENT, v) for v in figures.variables("csi")) if f]
    known = [f for f in csi if f.value is not None]
    if known:
        top = max(known, key=lambda f: f.value or 0.0)
        alert = alerts.get("csi", top.variable)
        rows.append(
            row(
                "csi_max",
                f"Largest CSI ({top.variable})",
                "csi",
                CURRENT,
                variable=top.variable,
                rule="csi",
                band=_band(alert.thresholds) if alert else "",
                with_baseline=False,
            )
        )
    rows += [
        row("bad_rate", "Bad rate of the cohort", "bad_rate", PERFORMANCE, fmt="percent"),
        row(
            "top_decile_lift",
            "Lift of the riskiest decile",
            "top_decile_lift",
            PERFORMANCE,
            fmt="ratio",
            with_baseline=False,
        ),
        row(
            "lift_order_breaks",
            "Decile bad-rate order breaks",
            "lift_order_breaks",
            PERFORMANCE,
            fmt="count",
            with_baseline=False,
        ),
        row(
            "n_current",
            "Loans in the current population",
            "n_rows",
            CURRENT,
            fmt="count",
            rule="volume_change",
            band=levels("volume_change", _change),
            with_baseline=False,
        ),
        row(
            "unmatured_share",
            "Unmatured share of the cohort",
            "unmatured_share",
            PERFORMANCE,
            fmt="percent",
            with_baseline=False,
        ),
    ]
    return tuple(rows)


def _stability_rows(bins: Sequence[BinRecord]) -> tuple[StabilityRow, ...]:
    rows = []
    for b in bins:
        e, a = b.expected_share, b.actual_share
        diff = a - e if a is not None and e is not None else None
        log_ratio = math.log(a / e) if a and e else None
        rows.append(
            StabilityRow(
                index=b.bin_index + 1,
                label=b.label,
                n_total=b.n_total,
                expected=e,
                actual=a,
                difference=diff,
                log_ratio=log_ratio,
                contribution=b.contribution,
                smoothed=b.smoothed,
            )
        )
    return tuple(rows)


def _stability(
    figures: _Figures, alerts: _Alerts, bins: Sequence[BinRecord], history: _History
) -> Stability:
    figure = figures.get("psi", CURRENT, SCORE)
    params = figure.params if figure else {}
    alert = alerts.get("psi", SCORE)
    rows = _stability_rows(_bins(bins, CURRENT, SCORE))
    series, _ = history.series("psi", CURRENT, SCORE)
    levels = alert.thresholds if alert else {}
    guides = [(float(levels[k]), k, f"{k} {levels[k]:g}") for k in ("amber", "red") if k in levels]
    return Stability(
        psi=figure.value if figure else None,
        reason=figure.reason if figure else "not computed in this run",
        band=params.get("band"),
        status=alert.status if alert else None,
        critical_value=params.get("critical_value"),
        smoothing=params.get("smoothing"),
        rows=rows,
        bars=bar_chart(
            "Score distribution by baseline bin",
            [str(r.index) for r in rows],
            [
                ("baseline", "base", [r.expected for r in rows]),
                ("current", "series", [r.actual for r in rows]),
            ],
            y_label="share of loans",
        ),
        trend=trend_chart("PSI of the score over time", series, y_label="PSI", guides=guides),
    )


def _characteristics(
    figures: _Figures, alerts: _Alerts, bins: Sequence[BinRecord], history: _History
) -> tuple[CharacteristicStability, ...]:
    out = []
    for name in figures.variables("csi"):
        figure = figures.get("csi", CURRENT, name)
        assert figure is not None
        rows = _stability_rows(_bins(bins, CURRENT, name))
        series, _ = history.series("csi", CURRENT, name)
        out.append(
            CharacteristicStability(
                name=name,
                csi=figure.value,
                reason=figure.reason,
                band=figure.params.get("band"),
                status=alerts.status("csi", name),
                critical_value=figure.params.get("critical_value"),
                n_smoothed=sum(r.smoothed for r in rows),
                rows=rows,
                trend=sparkline(series),
            )
        )
    # worst first; characteristics without a value last, by name
    out.sort(key=lambda c: (c.csi is None, -(c.csi or 0.0), c.name))
    return tuple(out)


def _discrimination(
    figures: _Figures,
    alerts: _Alerts,
    baseline: StoredBaseline | None,
    bins: Sequence[BinRecord],
    history: _History,
) -> Discrimination:
    ks, auc, gini = (figures.get(n, PERFORMANCE) for n in ("ks", "auc", "gini"))
    curve = cumulative(_bins(bins, PERFORMANCE, CURVE))
    ks_alert = alerts.get("ks_band")
    ks_levels = ks_alert.thresholds if ks_alert else {}
    ks_guides = [
        (float(ks_levels[k]), "red", f"{k} {ks_levels[k]:.2f}")
        for k in ("low", "high")
        if k in ks_levels
    ]
    gini_guides = []
    base_gini = baseline.figure("gini") if baseline else None
    gini_alert = alerts.get("gini_drop")
    if base_gini is not None and base_gini.value is not None:
        gini_guides.append((base_gini.value, "base", f"base {base_gini.value:.3f}"))
        if gini_alert is not None and base_gini.value > 0:
            for level in ("amber", "red"):
                drop = gini_alert.thresholds.get(level)
                if drop is not None:
                    at = base_gini.value * (1 - float(drop))
                    gini_guides.append((at, level, f"{level} −{float(drop):.0%}"))
    ks_series, _ = history.series("ks", PERFORMANCE)
    gini_series, _ = history.series("gini", PERFORMANCE)
    bad_rate = figures.value("bad_rate", PERFORMANCE)
    return Discrimination(
        ks=ks.value if ks else None,
        ks_reason=ks.reason if ks else "not computed in this run",
        ks_status=ks_alert.status if ks_alert else None,
        ks_flag=_ks_flag(alerts),
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


def _gains(bins: Sequence[BinRecord]) -> tuple[GainsRow, ...]:
    groups = _bins(bins, PERFORMANCE, GAINS)
    total = sum(b.total for b in groups)
    bads = sum(b.bads or 0.0 for b in groups)
    goods = total - bads
    overall = _ratio(bads, total)
    rows = []
    cum_total = cum_bads = 0.0
    for b in groups:
        b_bads = b.bads or 0.0
        cum_total += b.total
        cum_bads += b_bads
        rate = _ratio(b_bads, b.total)
        cum_rate = _ratio(cum_bads, cum_total)
        rows.append(
            GainsRow(
                group=b.label,
                lower=b.lower,
                upper=b.upper,
                n_total=b.n_total,
                share=b.total / total if total > 0 else 0.0,
                bads=b_bads,
                bad_rate=rate,
                cum_share=cum_total / total if total > 0 else 0.0,
                cum_bads=cum_bads / bads if bads > 0 else 0.0,
                cum_bad_rate=cum_rate,
                lift=rate / overall if rate is not None and overall else None,
                cum_lift=cum_rate / overall if cum_rate is not None and overall else None,
                ks=abs(cum_bads / bads - (cum_total - cum_bads) / goods)
                if bads > 0 and goods > 0
                else None,
            )
        )
    return tuple(rows)


def _baseline_woe(
    baseline: StoredBaseline | None, variable: str, smoothing: float
) -> dict[int, tuple[int, float | None, float | None]]:
    """Bin index -> (labeled loans, bad rate, WOE) of the baseline's development sample."""
    var = baseline.variables.get(variable) if baseline is not None else None
    if var is None:
        return {}
    bins = [b for b in var.bins if b.segment == ""]
    rows: list[tuple[int, int, int, float]] = []
    for b in bins:
        rows.append((b.bin_index, 0, b.n_goods or 0, b.goods or 0.0))
        rows.append((b.bin_index, 1, b.n_bads or 0, b.bads or 0.0))
    table = CountTable.from_rows(rows, binning=Binning.from_dict(var.binning))
    frame, _ = measured(lambda: woe_table_from_counts(table, smoothing=smoothing))
    out = {}
    for b in bins:
        goods, bads = b.goods or 0.0, b.bads or 0.0
        woe = None if frame is None else _finite(float(frame["woe"].iloc[b.bin_index]))
        out[b.bin_index] = ((b.n_goods or 0) + (b.n_bads or 0), _ratio(bads, goods + bads), woe)
    return out


def _strength(
    figures: _Figures, alerts: _Alerts, baseline: StoredBaseline | None, bins: Sequence[BinRecord]
) -> tuple[CharacteristicStrength, ...]:
    out = []
    for name in figures.variables("iv"):
        figure = figures.get("iv", PERFORMANCE, name)
        assert figure is not None
        base = baseline.figure("iv", name) if baseline else None
        smoothing = float((base.params if base else figure.params).get("smoothing", 0.5))
        base_bins = _baseline_woe(baseline, name, smoothing)
        rows = []
        for b in _bins(bins, PERFORMANCE, name):
            base_n, base_rate, base_woe = base_bins.get(b.bin_index, (None, None, None))
            rows.append(
                WoeRow(
                    index=b.bin_index + 1,
                    label=b.label,
                    base_n=base_n,
                    base_bad_rate=base_rate,
                    base_woe=base_woe,
                    n_total=b.n_total,
                    n_bads=b.n_bads,
                    bad_rate=_ratio(b.bads or 0.0, b.total),
                    woe=b.woe,
                    contribution=b.contribution,
                    smoothed=b.smoothed,
                )
            )
        out.append(
            CharacteristicStrength(
                name=name,
                iv=figure.value,
                reason=figure.reason,
                strength=figure.params.get("band"),
                base_iv=base.value if base else None,
                base_strength=base.params.get("band") if base else None,
                status=alerts.status("iv_drop", name),
                rows=tuple(rows),
            )
        )
    return tuple(out)


def _segments(figures: _Figures, alerts: _Alerts) -> tuple[SegmentRow, ...]:
    return tuple(
        SegmentRow(
            segment=s,
            n_current=figures.value("n_rows", CURRENT, segment=s),
            psi=figures.value("psi", CURRENT, SCORE, s),
            psi_status=alerts.status("psi", SCORE, s),
            n_matured=figures.value("n_rows", PERFORMANCE, segment=s),
            bad_rate=figures.value("bad_rate", PERFORMANCE, segment=s),
            ks=figures.value("ks", PERFORMANCE, segment=s),
            ks_status=alerts.status("ks_band", segment=s),
            auc=figures.value("auc", PERFORMANCE, segment=s),
            auc_status=alerts.status("auc_drop", segment=s),
            gini=figures.value("gini", PERFORMANCE, segment=s),
            unmatured_share=figures.value("unmatured_share", PERFORMANCE, segment=s),
        )
        for s in figures.segments()
    )


def _baseline_missing_rate(baseline: StoredBaseline | None, variable: str) -> float | None:
    var = baseline.variables.get(variable) if baseline is not None else None
    if var is None:
        return None
    bins = [b for b in var.bins if b.segment == ""]
    missing = sum(b.total for b in bins if b.label == "missing")
    return _ratio(missing, sum(b.total for b in bins))


def _quality(figures: _Figures, alerts: _Alerts, baseline: StoredBaseline | None) -> DataQuality:
    rows = []
    for name in figures.variables("missing_rate"):
        now = figures.value("missing_rate", CURRENT, name)
        base = _baseline_missing_rate(baseline, name)
        rows.append(
            QualityRow(
                name=name,
                missing_rate=now,
                base_missing_rate=base,
                change=now - base if now is not None and base is not None else None,
                status=alerts.status("missing_rate_change", name),
                unseen_rate=figures.value("unseen_rate", CURRENT, name),
            )
        )
    unmatured = figures.get("unmatured_share", PERFORMANCE)
    params = unmatured.params if unmatured else {}
    return DataQuality(
        rows=tuple(rows),
        unmatured_share=unmatured.value if unmatured else None,
        n_unmatured=params.get("n_unmatured"),
        n_scored=params.get("n_scored"),
    )


_PARAMETERS = (
    ("psi", "smoothing", "PSI/CSI pseudo-count for empty bins"),
    ("psi", "alpha", "PSI noise test significance level α"),
    ("iv", "smoothing", "WOE/IV pseudo-count for empty cells"),
    ("ks", "p_value_method", "KS p-value method"),
    ("ks", "score_grouping", "score ranked on"),
    ("ks", "ks_error_bound", "largest KS error of the score grid"),
    ("auc", "auc_error_bound", "largest AUC error of the score grid"),
    ("auc", "method", "AUC standard error"),
    ("auc", "confidence_level", "AUC and Gini confidence level"),
    ("top_decile_lift", "n_groups", "gains table groups"),
)


def _appendix(
    run: RunRecord, figures: Sequence[FigureRecord], baseline: StoredBaseline | None
) -> Appendix:
    found: dict[str, set[str]] = {}
    for name, param, label in _PARAMETERS:
        for f in figures:
            if f.name == name and param in f.params and f.params[param] is not None:
                value = f.params[param]
                shown = f"{value:.4g}" if isinstance(value, float) else str(value)
                found.setdefault(label, set()).add(shown)
    return Appendix(
        parameters=tuple(
            Parameter(label, ", ".join(sorted(values))) for label, values in found.items()
        ),
        run_version=run.riskmon_version,
        baseline_version=baseline.riskmon_version if baseline else None,
        report_version=__version__,
        config_hash=run.config_hash,
    )


# --------------------------------------------------------------------------- pages


def find_run(store: MetricStore, model: str, as_of: dt.date | None) -> RunRecord:
    """The run of ``model`` as of ``as_of`` (the newest run, of any status, when None)."""
    run = store.latest_run(model, status=None) if as_of is None else store.run(model, as_of)
    if run is None:
        when = "" if as_of is None else f" as of {as_of}"
        raise NoRunError(f"no run of model {model!r}{when} in the metric store")
    return run


def run_report_context(
    store: MetricStore, run: RunRecord, *, model: ModelConfig | None
) -> RunReportContext:
    """The model run report of ``run``, read from ``store``; ``model`` is its configuration,
    if the model is still configured."""
    alerts = store.alerts(run.id)
    baseline = store.baseline(run.baseline_id) if run.baseline_id is not None else None
    header = _header(run, model, baseline, alerts)
    succeeded = run.status == "succeeded"
    records = store.figures(run.id) if succeeded else []
    bins = store.bins(run.id) if succeeded else []
    figures, by_rule = _Figures(records), _Alerts(alerts)
    history = _History(store, run.model, run.as_of)
    ordered = sorted(
        (a for a in alerts if a.status not in ("GREEN",)),
        key=lambda a: ({"RED": 0, "AMBER": 1}.get(a.status, 2), a.rule, a.variable, a.segment),
    )
    return RunReportContext(
        model=run.model,
        as_of=run.as_of,
        run_status=run.status,
        error=run.error,
        overall=Status.worst(a.status for a in alerts) if succeeded else Status.NOT_EVALUABLE,
        header=header,
        alerts=tuple(AlertRow(a.status, a.rule, a.message, a.variable, a.segment) for a in ordered),
        summary=_summary(figures, by_rule, baseline, history) if succeeded else (),
        stability=_stability(figures, by_rule, bins, history) if succeeded else None,
        characteristics=_characteristics(figures, by_rule, bins, history) if succeeded else (),
        discrimination=(
            _discrimination(figures, by_rule, baseline, bins, history) if succeeded else None
        ),
        gains=_gains(bins),
        strength=_strength(figures, by_rule, baseline, bins) if succeeded else (),
        segments=_segments(figures, by_rule),
        quality=_quality(figures, by_rule, baseline) if succeeded else None,
        appendix=_appendix(run, records, baseline),
    )


def index_entry(
    store: MetricStore, model: str, *, configured: bool, hrefs: dict[dt.date, str]
) -> IndexEntry:
    """One model's line on the index: its newest run; ``hrefs`` are its reports on disk."""
    runs = store.runs(model)
    latest = runs[-1] if runs else None
    figures = _Figures(store.figures(latest.id) if latest else [])
    alerts = _Alerts(store.alerts(latest.id) if latest else [])
    overall = (
        Status.worst(a.status for a in alerts.by_key.values())
        if latest and latest.status == "succeeded"
        else Status.NOT_EVALUABLE
    )
    return IndexEntry(
        model=model,
        configured=configured,
        as_of=latest.as_of if latest else None,
        run_status=latest.status if latest else None,
        overall=overall,
        error=latest.error if latest else None,
        n_current=latest.n_current if latest else None,
        ks=figures.value("ks", PERFORMANCE),
        ks_status=alerts.status("ks_band"),
        auc=figures.value("auc", PERFORMANCE),
        gini=figures.value("gini", PERFORMANCE),
        psi=figures.value("psi", CURRENT, SCORE),
        psi_status=alerts.status("psi", SCORE),
        n_runs=len(runs),
        href=hrefs.get(latest.as_of) if latest else None,
        earlier=tuple((r.as_of, hrefs[r.as_of]) for r in reversed(runs[:-1]) if r.as_of in hrefs),
    )
