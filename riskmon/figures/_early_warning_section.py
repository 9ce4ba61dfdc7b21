"""The early-warning section of the model run report: what the PDs expect of the current
population, each monthly cohort's expected default rate (with its interval) against the
realised one once it exists, the expected AUC and KS against the realised ones, whether the
AUC's change since the baseline is explained by the population, and the vintage curves."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from riskmon.charts import Chart, Series, lines_chart
from riskmon.config import Period
from riskmon.figures._views import RunView
from riskmon.figures._vintage_section import VintageView, vintage_view
from riskmon.plan import subtract
from riskmon.records import CURRENT, PERFORMANCE, AlertLike

#: the table lists at most this many segments (the whole population first); the others' are in
#: the history
MAX_SEGMENTS = 20
#: z of the band drawn around the expected default rate in the cohort chart (95 %)
BAND_Z = 1.959964


@dataclass(frozen=True)
class ExpectedRow:
    """A population's (or a segment's) expected performance."""

    population: str
    segment: str
    n: float | None
    default_rate: float | None
    rate_low: float | None
    rate_high: float | None
    method: str | None
    realised_rate: float | None
    auc: float | None
    realised_auc: float | None
    ks: float | None
    gini: float | None
    reason: str | None


@dataclass(frozen=True)
class EarlyWarningSection:
    rows: list[ExpectedRow]
    #: segments with expected figures the table leaves out
    more_segments: int
    confidence: float | None
    exact_max_loans: int | None
    drift: AlertLike | None
    rate_chart: Chart | None
    auc_chart: Chart | None
    vintages: VintageView | None


def _row(run: RunView, population: str, segment: str) -> ExpectedRow | None:
    rate = run.figures.get("expected_default_rate", population, segment=segment)
    if rate is None:
        return None
    x = rate.params
    n = x.get("n")
    low, high = x.get("interval_low"), x.get("interval_high")
    realised_rate = realised_auc = None
    if population == PERFORMANCE:
        realised_rate = run.figures.value("default_rate", PERFORMANCE, segment=segment)
        versus = run.figures.get("auc_vs_expected", PERFORMANCE, segment=segment)
        realised_auc = None if versus is None else versus.params.get("realised")
    return ExpectedRow(
        population="current population" if population == CURRENT else "performance cohort",
        segment=segment,
        n=n,
        default_rate=rate.value,
        rate_low=low / n if n and low is not None else None,
        rate_high=high / n if n and high is not None else None,
        method=x.get("interval_method"),
        realised_rate=realised_rate,
        auc=run.figures.value("expected_auc", population, segment=segment),
        realised_auc=realised_auc,
        ks=run.figures.value("expected_ks", population, segment=segment),
        gini=run.figures.value("expected_gini", population, segment=segment),
        reason=rate.reason,
    )


def _band(run: RunView, sign: float) -> list[tuple[float, float | None]]:
    """The expected default rate ± z·sd/n of each run's current population, by its date."""
    rates, _ = run.history.series("expected_default_rate", CURRENT)
    defaults = dict(run.history.series("expected_defaults", CURRENT)[0])
    sds = dict(run.history.series("expected_defaults_sd", CURRENT)[0])
    out: list[tuple[float, float | None]] = []
    for day, rate in rates:
        d, sd = defaults.get(day), sds.get(day)
        if rate is None or not d or sd is None:
            out.append((day.toordinal(), None))
            continue
        n = d / rate
        out.append((day.toordinal(), max(0.0, rate + sign * BAND_Z * sd / n)))
    return out


def _shifted(
    series: list[tuple[dt.date, float | None]], window: Period | None
) -> list[tuple[float, float | None]]:
    """A performance-cohort series moved from the run's date to its cohort's."""
    if window is None:
        return []
    return [(subtract(day, window).toordinal(), value) for day, value in series]


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _window(run: RunView) -> Period | None:
    figure = run.figures.get("expected_default_rate", PERFORMANCE)
    raw = None if figure is None else figure.params.get("performance_window")
    return None if raw is None else Period(**raw)


def _charts(run: RunView) -> tuple[Chart | None, Chart | None]:
    expected, _ = run.history.series("expected_default_rate", CURRENT)
    if not expected:
        return None, None
    window = _window(run)
    realised = _shifted(run.history.series("default_rate", PERFORMANCE)[0], window)
    rate = lines_chart(
        "Default rate per monthly cohort: expected from the PDs (band: 95 %) and realised",
        [
            Series("expected", "reference", [(d.toordinal(), v) for d, v in expected]),
            Series("band", "interval", _band(run, -1.0)),
            Series(None, "interval", _band(run, 1.0)),
            Series("realised (12-month flag)", "series", realised, dots=True),
        ],
        x_label="cohort (end of its score window)",
        y_label="default rate",
        percent=True,
        dates=True,
    )
    auc_expected = run.history.series("expected_auc", CURRENT)[0]
    gaps = dict(run.history.series("auc_vs_expected", PERFORMANCE)[0])
    matured = dict(run.history.series("expected_auc", PERFORMANCE)[0])
    realised_auc = [(day, _sum(gaps.get(day), matured.get(day))) for day in sorted(gaps)]
    ks_expected = run.history.series("expected_ks", CURRENT)[0]
    ks_realised = _shifted(run.history.series("ks", PERFORMANCE)[0], window)
    auc = lines_chart(
        "AUC and KS per monthly cohort: expected from the PDs and realised",
        [
            Series("expected AUC", "reference", [(d.toordinal(), v) for d, v in auc_expected]),
            Series("realised AUC (PD bins)", "series", _shifted(realised_auc, window), dots=True),
            Series("expected KS", "perfect", [(d.toordinal(), v) for d, v in ks_expected]),
            Series("realised KS (score)", "series2", ks_realised, dots=True),
        ],
        x_label="cohort (end of its score window)",
        y_label="AUC, KS",
        dates=True,
    )
    return rate, auc


def section(run: RunView) -> EarlyWarningSection | None:
    """The section, or None for a model without PDs (no expected figures)."""
    first = run.figures.get("expected_defaults", CURRENT)
    if first is None:
        return None
    every = sorted({f.segment for f in run.figures.named("expected_default_rate")})
    segments = every[:MAX_SEGMENTS]
    rows = [
        row
        for population in (CURRENT, PERFORMANCE)
        for segment in segments
        if (row := _row(run, population, segment)) is not None
    ]
    rate_chart, auc_chart = _charts(run)
    params: dict[str, Any] = first.params
    return EarlyWarningSection(
        rows=rows,
        more_segments=len(every) - len(segments),
        confidence=params.get("confidence"),
        exact_max_loans=params.get("exact_max_loans"),
        drift=run.alerts.get("concept_drift"),
        rate_chart=rate_chart,
        auc_chart=auc_chart,
        vintages=vintage_view(run),
    )
