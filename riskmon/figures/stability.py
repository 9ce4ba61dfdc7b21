"""Stability: has the population moved since the baseline? PSI of the score, CSI per
characteristic, each over the baseline's frozen bins.

Figures (current population): ``psi`` of the score per segment, ``csi`` per characteristic,
each with its band, its sample-size-aware critical value and one bin record per bin (counts,
both shares, the bin's contribution, whether smoothing was applied).

Rules: ``psi`` and ``csi``: AMBER at ``thresholds.psi.amber`` (``csi.amber``), RED at ``red``;
the message says when the value is within sampling noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from riskmon.charts import Chart, Sparkline, bar_chart, sparkline, trend_chart
from riskmon.config import Band, Thresholds
from riskmon.figure_table import Figures
from riskmon.figures._chunks import Chunk
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Headline,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    Section,
    amber_red,
    approximate,
    as_note,
    band_levels,
    banded,
    characteristics,
    edges,
    finite,
    fmt,
    measured,
    where,
    within_noise,
)
from riskmon.figures._formulas import STABILITY_FORMULAS
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import DEFAULT_SMOOTHING, CountTable, population_stability_index_from_counts
from riskmon.records import CURRENT, SCORE, BinRecord, FigureRecord, Status


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
            "critical_value": finite(float(result.critical_value)),
            "noise_p": finite(result.noise_p),
            "alpha": float(result.alpha),
            "n_bins": int(result.n_bins),
        }
        as_note(params, reason)
        reason = None
    per_bin = result.per_bin if result is not None else None
    e_total, a_total = float(expected.total.sum()), float(actual.total.sum())
    lower, upper = edges(actual)
    for i, label in enumerate(actual.labels):
        contribution = None
        smoothed = False
        if per_bin is not None:
            contribution = finite(float(per_bin["contribution"][i]))
            smoothed = bool(per_bin["smoothed"][i])
        bins.append(
            BinRecord(
                variable=variable,
                population=CURRENT,
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
        CURRENT,
        variable=variable,
        segment=segment,
        reason=reason,
        params=params,
    )
    return figure, bins


def compute(tables: RunTables) -> Iterator[Chunk]:
    """PSI of the score, segment by segment, then the CSI of every characteristic (whole
    population)."""
    baseline = tables.baseline
    for segment in tables.segments():
        if not tables.has(CURRENT, SCORE, segment):
            continue
        if baseline.has_segment(segment):
            figure, score_bins = stability_figure(
                baseline.table(SCORE, segment),
                tables.table(CURRENT, SCORE, segment),
                name="psi",
                variable=SCORE,
                segment=segment,
            )
            yield [figure], score_bins
        else:  # a segment value the development sample never had
            reason = f"segment {segment} is not in baseline version {baseline.version}"
            psi = FigureRecord("psi", None, CURRENT, variable=SCORE, segment=segment, reason=reason)
            yield [psi], []
    for name in characteristics(tables.model):
        figure, char_bins = stability_figure(
            baseline.table(name), tables.table(CURRENT, name), name="csi", variable=name
        )
        yield [figure], char_bins


# --------------------------------------------------------------------------- rules


def _judge(judge: Judge, rule: str, band: Band, variable: str, segment: str = "") -> None:
    thresholds: dict[str, object] = amber_red(band)
    figure = judge.figures.get(rule, CURRENT, variable, segment)
    name = "PSI" if rule == "psi" else "CSI"
    if figure is None or figure.value is None:
        reason = (figure.reason if figure else None) or f"{name} not available"
        judge.add(rule, Status.NOT_EVALUABLE, None, thresholds, reason, variable, segment)
        return
    critical = figure.params.get("critical_value")
    if critical is not None:
        thresholds["noise_critical_value"] = critical
    status = banded(figure.value, band.amber, band.red)
    noise = ""
    if critical is not None and figure.value <= critical:
        status, capped = within_noise(status, judge.thresholds)
        noise = f" (within sampling noise{approximate(figure)}{capped})"
    place = where(variable if rule == "csi" else "", segment)
    message = f"{name}{place} {fmt(figure.value)}{noise}"
    judge.add(rule, status, figure.value, thresholds, message, variable, segment)


def _psi_levels(t: Thresholds) -> dict[str, Any]:
    return amber_red(t.psi)


def _judge_psi(judge: Judge, segment: str) -> None:
    _judge(judge, "psi", judge.thresholds.psi, SCORE, segment)


def _judge_csi(judge: Judge, variable: str) -> None:
    _judge(judge, "csi", judge.thresholds.csi, variable)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class StabilityRow:
    """One bin of a PSI or CSI table."""

    index: int
    label: str
    n_total: int
    weight: float  # the summed weights (the loans, unweighted)
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
    #: why the noise level is approximate (weighted, tested on loan counts), if it is
    approximate: str | None
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
    approximate: str | None  # as :attr:`Stability.approximate`
    n_smoothed: int
    rows: tuple[StabilityRow, ...]
    trend: Sparkline


def stability_rows(bins: Sequence[BinRecord]) -> tuple[StabilityRow, ...]:
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
                weight=b.total,
                expected=e,
                actual=a,
                difference=diff,
                log_ratio=log_ratio,
                contribution=b.contribution,
                smoothed=b.smoothed,
            )
        )
    return tuple(rows)


def score_section(run: RunView) -> Stability:
    figure = run.figures.get("psi", CURRENT, SCORE)
    params = figure.params if figure else {}
    alert = run.alerts.get("psi", SCORE)
    rows = stability_rows(run.bins.get(CURRENT, SCORE))
    series, _ = run.history.series("psi", CURRENT, SCORE)
    levels = alert.thresholds if alert else {}
    guides = [(float(levels[k]), k, f"{k} {levels[k]:g}") for k in ("amber", "red") if k in levels]
    return Stability(
        psi=figure.value if figure else None,
        reason=figure.reason if figure else "not computed in this run",
        band=params.get("band"),
        status=alert.status if alert else None,
        critical_value=params.get("critical_value"),
        approximate=params.get("approximate"),
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


def characteristics_section(run: RunView) -> tuple[CharacteristicStability, ...]:
    out = []
    for name in run.figures.variables("csi"):
        figure = run.figures.get("csi", CURRENT, name)
        assert figure is not None
        rows = stability_rows(run.bins.get(CURRENT, name))
        series, _ = run.history.series("csi", CURRENT, name)
        out.append(
            CharacteristicStability(
                name=name,
                csi=figure.value,
                reason=figure.reason,
                band=figure.params.get("band"),
                status=run.alerts.status("csi", name),
                critical_value=figure.params.get("critical_value"),
                approximate=figure.params.get("approximate"),
                n_smoothed=sum(r.smoothed for r in rows),
                rows=rows,
                trend=sparkline(series),
            )
        )
    # worst first; characteristics without a value last, by name
    out.sort(key=lambda c: (c.csi is None, -(c.csi or 0.0), c.name))
    return tuple(out)


def _largest_csi(figures: Figures) -> tuple[str, str] | None:
    """The summary's "Largest CSI" line: its label and the characteristic it shows."""
    known = [
        f
        for f in (figures.get("csi", CURRENT, v) for v in figures.variables("csi"))
        if f is not None and f.value is not None
    ]
    if not known:
        return None
    top = max(known, key=lambda f: f.value or 0.0)
    return f"Largest CSI ({top.variable})", top.variable


FAMILY = Family(
    name="stability",
    order=70,
    figures=(
        FigureSpec("psi", CURRENT, "segment", "PSI of the score", rows_test=True),
        FigureSpec("csi", CURRENT, "variable", "CSI of a characteristic", rows_test=True),
    ),
    compute=compute,
    rules=(
        Rule(
            "psi",
            "segment",
            "PSI of the score",
            lambda t: amber_red(t.psi),
            band_levels,
            _judge_psi,
            tested="noise",
            finding="The score's distribution has shifted from the baseline's",
            worse="higher",
        ),
        Rule(
            "csi",
            "variable",
            "CSI of each characteristic",
            lambda t: amber_red(t.csi),
            band_levels,
            _judge_csi,
            tested="noise",
            finding="Characteristics' distributions have shifted from the baseline's",
            worse="higher",
        ),
    ),
    sections=(
        Section("stability", "Stability", "stability", 10, "_stability.html", score_section),
        Section(
            "characteristics",
            "Characteristics",
            "characteristics",
            20,
            "_characteristics.html",
            characteristics_section,
        ),
    ),
    headlines=(
        Headline(
            40, "psi", "PSI of the score", "psi", CURRENT, SCORE, rule="psi", with_baseline=False
        ),
        Headline(
            50, "csi_max", "", "csi", CURRENT, rule="csi", with_baseline=False, choose=_largest_csi
        ),
    ),
    history=(HistoryColumn(20, "psi", SCORE, CURRENT),),
    parameters=(
        Parameter(10, "psi", "smoothing", "PSI/CSI pseudo-count for empty bins"),
        Parameter(20, "psi", "alpha", "PSI noise test significance level α"),
    ),
    default_population={"psi": CURRENT, "csi": CURRENT},
    formulas=STABILITY_FORMULAS,
)
