"""Coordinates for the reports' inline SVG charts.

The templates draw every chart from the dataclasses here (``_macros.html``); all arithmetic —
scales, ticks, cumulative curves — happens in Python, so a template only places elements at the
coordinates it is given. Coordinates are rounded to one decimal: a pixel is all a chart needs,
and it keeps a report with many charts small.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

from riskmon.records import BinRecord

#: size of a full chart (SVG user units; the SVG scales to the page width)
WIDTH, HEIGHT = 640, 260
#: plot area margins: left (y tick labels), right (guide labels), top, bottom (x tick labels)
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 52, 80, 14, 40
#: size of a square ROC / KS / CAP chart
SQUARE = 300
#: size of a summary-table sparkline
SPARK_WIDTH, SPARK_HEIGHT = 96, 22
#: at most this many date labels under a trend chart
MAX_DATE_TICKS = 6


@dataclass(frozen=True)
class Tick:
    """A tick on an axis: its position in SVG units and its label."""

    pos: float
    label: str


@dataclass(frozen=True)
class Line:
    """A polyline: ``points`` as SVG ``x,y x,y ...``; ``css`` picks its colour and dash."""

    points: str
    css: str


@dataclass(frozen=True)
class Dot:
    """A marked data point with its value as a tooltip."""

    x: float
    y: float
    css: str
    title: str


@dataclass(frozen=True)
class Guide:
    """A horizontal threshold line across the plot area, labelled at its right end."""

    y: float
    css: str
    label: str
    label_y: float


#: the least vertical distance between two guide labels (SVG units, about a line of text)
GUIDE_LABEL_GAP = 11.0


def _guides(lines: Sequence[tuple[float, str, str]], y: _Scale) -> tuple[Guide, ...]:
    """Guides with their labels moved apart where lines are too close to label apart."""
    placed = sorted(((y(v), css, label) for v, css, label in lines), key=lambda g: g[0])
    out = []
    last = -math.inf
    for pos, css, label in placed:
        label_y = max(pos, last + GUIDE_LABEL_GAP)
        out.append(Guide(pos, css, label, round(label_y, 1)))
        last = label_y
    return tuple(out)


@dataclass(frozen=True)
class Bar:
    """A rectangle of a bar chart."""

    x: float
    y: float
    width: float
    height: float
    css: str
    title: str


@dataclass(frozen=True)
class LegendItem:
    label: str
    css: str


@dataclass(frozen=True)
class Chart:
    """Everything an SVG chart macro draws; ``summary`` is the chart's text alternative."""

    title: str
    summary: str
    width: int
    height: int
    left: float
    top: float
    right: float
    bottom: float
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    x_label: str
    y_label: str
    lines: tuple[Line, ...] = ()
    dots: tuple[Dot, ...] = ()
    guides: tuple[Guide, ...] = ()
    bars: tuple[Bar, ...] = ()
    legend: tuple[LegendItem, ...] = ()
    empty: str | None = None


@dataclass(frozen=True)
class Sparkline:
    """A small trend line for a table cell; ``last`` marks the newest value."""

    width: int
    height: int
    points: str
    last: Dot | None
    summary: str


@dataclass(frozen=True)
class _Scale:
    """A linear map from data values [lo, hi] to SVG positions [start, end]."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.hi - self.lo
        share = 0.5 if span == 0 else (value - self.lo) / span
        return round(self.start + share * (self.end - self.start), 1)


def _label(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{value:.{decimals}f}"


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi], about ``count`` of them (1, 2 or 5 times 10^k).

    >>> nice_ticks(0.0, 0.8)
    [0.0, 0.2, 0.4, 0.6, 0.8]
    >>> nice_ticks(0.013, 0.27)
    [0.0, 0.1, 0.2, 0.3]
    """
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    value = first
    while value <= hi + step * 1e-9:
        ticks.append(value)
        value = first + len(ticks) * step
    if ticks[-1] < hi:
        ticks.append(value)
    return [round(t, 12) for t in ticks]


def _frame() -> tuple[float, float, float, float]:
    return (MARGIN_LEFT, MARGIN_TOP, WIDTH - MARGIN_RIGHT, HEIGHT - MARGIN_BOTTOM)


def _points(xy: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{x:g},{y:g}" for x, y in xy)


def _date_ticks(dates: Sequence[dt.date], x: _Scale) -> tuple[Tick, ...]:
    if not dates:
        return ()
    every = max(1, math.ceil(len(dates) / MAX_DATE_TICKS))
    chosen = list(dates[::every])
    if chosen[-1] != dates[-1] and len(dates) > 1:
        chosen[-1] = dates[-1]
    return tuple(Tick(x(d.toordinal()), d.isoformat()) for d in chosen)


def trend_chart(
    title: str,
    history: Sequence[tuple[dt.date, float | None]],
    *,
    y_label: str,
    guides: Sequence[tuple[float, str, str]] = (),
    digits: int = 3,
    y_floor: float | None = 0.0,
) -> Chart:
    """A figure over the as-of dates of its runs, with threshold ``guides`` drawn as
    horizontal lines (value, css class, label). A run without a value breaks the line."""
    left, top, right, bottom = _frame()
    known = [v for _, v in history if v is not None]
    values = known + [g[0] for g in guides]
    lo = min(values, default=0.0)
    hi = max(values, default=1.0)
    if y_floor is not None:
        lo = min(lo, y_floor)
    pad = (hi - lo) * 0.08 or 0.05
    ticks = nice_ticks(lo if y_floor is not None and lo >= y_floor else lo - pad, hi + pad)
    y = _Scale(ticks[0], ticks[-1], bottom, top)
    dates = [d for d, _ in history]
    days = [d.toordinal() for d in dates]
    x = _Scale(min(days, default=0), max(days, default=1), left, right)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    segments: list[list[tuple[float, float]]] = [[]]
    dots = []
    for i, (day, value) in enumerate(history):
        if value is None:
            segments.append([])
            continue
        point = (x(day.toordinal()), y(value))
        segments[-1].append(point)
        css = "dot last" if i == len(history) - 1 else "dot"
        dots.append(Dot(point[0], point[1], css, f"{day.isoformat()}: {value:.{digits}f}"))
    lines = tuple(Line(_points(s), "series") for s in segments if len(s) > 1)
    n_known = len(known)
    summary = (
        f"{title}: {n_known} run(s) from {dates[0]} to {dates[-1]}"
        + (f", latest {known[-1]:.{digits}f}" if known else "")
        if dates
        else f"{title}: no history"
    )
    return Chart(
        title=title,
        summary=summary,
        width=WIDTH,
        height=HEIGHT,
        left=left,
        top=top,
        right=right,
        bottom=bottom,
        x_ticks=_date_ticks(dates, x),
        y_ticks=tuple(Tick(y(t), _label(t, step)) for t in ticks),
        x_label="as-of date",
        y_label=y_label,
        lines=lines,
        dots=tuple(dots),
        guides=_guides(guides, y),
        empty=None if known else "no value in any run yet",
    )


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float | None]]],
    *,
    y_label: str,
    percent: bool = True,
) -> Chart:
    """Grouped bars: for each category, one bar per series (label, css class, values)."""
    left, top, right, bottom = _frame()
    values = [v for _, _, vs in series for v in vs if v is not None]
    ticks = nice_ticks(0.0, max(values, default=1.0) or 1.0)
    y = _Scale(ticks[0], ticks[-1], bottom, top)
    step = ticks[1] - ticks[0]
    n = max(len(categories), 1)
    group = (right - left) / n
    bar = group * 0.8 / max(len(series), 1)
    bars = []
    for i, category in enumerate(categories):
        for j, (name, css, vs) in enumerate(series):
            value = vs[i]
            if value is None:
                continue
            x0 = left + i * group + group * 0.1 + j * bar
            shown = f"{value:.1%}" if percent else f"{value:.4g}"
            bars.append(
                Bar(
                    round(x0, 1),
                    y(value),
                    round(bar, 1),
                    round(bottom - y(value), 1),
                    css,
                    f"{category} {name}: {shown}",
                )
            )
    x_ticks = tuple(Tick(round(left + (i + 0.5) * group, 1), c) for i, c in enumerate(categories))
    y_ticks = tuple(
        Tick(y(t), f"{t:.0%}" if percent and step >= 0.01 else _label(t, step)) for t in ticks
    )
    return Chart(
        title=title,
        summary=f"{title}: {len(categories)} bins, series " + ", ".join(s[0] for s in series),
        width=WIDTH,
        height=HEIGHT,
        left=left,
        top=top,
        right=right,
        bottom=bottom,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        x_label="bin",
        y_label=y_label,
        bars=tuple(bars),
        legend=tuple(LegendItem(name, css) for name, css, _ in series),
        empty=None if values else "no loans",
    )


@dataclass(frozen=True)
class CumulativeCurve:
    """Cumulative shares riskiest first, from the origin: population, bads, goods."""

    population: tuple[float, ...]
    bads: tuple[float, ...]
    goods: tuple[float, ...]

    @property
    def empty(self) -> bool:
        return len(self.population) < 2


def cumulative(curve_bins: Sequence[BinRecord]) -> CumulativeCurve:
    """The cumulative shares of the stored curve groups (stored safest first)."""
    riskiest_first = sorted(curve_bins, key=lambda b: b.bin_index, reverse=True)
    total = sum(b.total for b in riskiest_first)
    bads = sum(b.bads or 0.0 for b in riskiest_first)
    goods = total - bads
    if total <= 0 or bads <= 0 or goods <= 0:
        return CumulativeCurve((), (), ())
    pop, bad, good = [0.0], [0.0], [0.0]
    for b in riskiest_first:
        b_bads = b.bads or 0.0
        pop.append(pop[-1] + b.total / total)
        bad.append(bad[-1] + b_bads / bads)
        good.append(good[-1] + (b.total - b_bads) / goods)
    return CumulativeCurve(tuple(pop), tuple(bad), tuple(good))


_UNIT_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)
_UX = _Scale(0.0, 1.0, 44.0, SQUARE - 22.0)
_UY = _Scale(0.0, 1.0, SQUARE - 40.0, 12.0)


def _unit_chart(
    title: str,
    summary: str,
    x_label: str,
    y_label: str,
    *,
    lines: Sequence[Line] = (),
    legend: Sequence[LegendItem] = (),
    empty: str | None = None,
) -> Chart:
    """A square chart of shares against shares, both axes 0-100 %."""
    return Chart(
        title=title,
        summary=summary,
        width=SQUARE,
        height=SQUARE,
        left=_UX.start,
        top=_UY.end,
        right=_UX.end,
        bottom=_UY.start,
        x_ticks=tuple(Tick(_UX(t), f"{t:.0%}") for t in _UNIT_TICKS),
        y_ticks=tuple(Tick(_UY(t), f"{t:.0%}") for t in _UNIT_TICKS),
        x_label=x_label,
        y_label=y_label,
        lines=tuple(lines),
        legend=tuple(legend),
        empty=empty,
    )


def _xy(xs: Sequence[float], ys: Sequence[float]) -> str:
    return _points([(_UX(a), _UY(b)) for a, b in zip(xs, ys, strict=True)])


_NO_CLASSES = "no bads or no goods in the performance cohort"


def roc_chart(curve: CumulativeCurve, *, auc: float | None) -> Chart:
    """True-positive rate (bads caught) against false-positive rate (goods rejected)."""
    shown = "n/a" if auc is None else f"{auc:.3f}"
    axes = ("goods rejected (FPR)", "bads caught (TPR)")
    if curve.empty:
        return _unit_chart("ROC curve", "ROC curve: not available", *axes, empty=_NO_CLASSES)
    return _unit_chart(
        "ROC curve",
        f"ROC curve, AUC {shown}",
        *axes,
        lines=(
            Line(_xy([0, 1], [0, 1]), "reference"),
            Line(_xy(curve.goods, curve.bads), "series"),
        ),
        legend=(LegendItem(f"model (AUC {shown})", "series"), LegendItem("random", "reference")),
    )


def ks_chart(curve: CumulativeCurve, *, ks: float | None) -> Chart:
    """Cumulative shares of bads and of goods, riskiest first; KS is the widest gap."""
    shown = "n/a" if ks is None else f"{ks:.3f}"
    axes = ("population, riskiest first", "cumulative share")
    if curve.empty:
        return _unit_chart("KS curve", "KS curve: not available", *axes, empty=_NO_CLASSES)
    gaps = [abs(b - g) for b, g in zip(curve.bads, curve.goods, strict=True)]
    at = max(range(len(gaps)), key=gaps.__getitem__)
    px = curve.population[at]
    return _unit_chart(
        "KS curve",
        f"KS curve: cumulative shares of bads and goods, KS {shown}",
        *axes,
        lines=(
            Line(_xy(curve.population, curve.bads), "series"),
            Line(_xy(curve.population, curve.goods), "series2"),
            Line(_xy([px, px], [curve.goods[at], curve.bads[at]]), "marker"),
        ),
        legend=(
            LegendItem("bads", "series"),
            LegendItem("goods", "series2"),
            LegendItem(f"KS {shown}", "marker"),
        ),
    )


def cap_chart(curve: CumulativeCurve, *, bad_rate: float | None) -> Chart:
    """Cumulative accuracy profile (gain chart): share of bads among the riskiest x %."""
    title = "CAP / gain curve"
    axes = ("population, riskiest first", "bads caught")
    if curve.empty:
        return _unit_chart(title, f"{title}: not available", *axes, empty=_NO_CLASSES)
    lines = [
        Line(_xy([0, 1], [0, 1]), "reference"),
        Line(_xy(curve.population, curve.bads), "series"),
    ]
    legend = [LegendItem("model", "series"), LegendItem("random", "reference")]
    if bad_rate is not None and 0 < bad_rate < 1:
        lines.append(Line(_xy([0, bad_rate, 1], [0, 1, 1]), "perfect"))
        legend.append(LegendItem("perfect model", "perfect"))
    return _unit_chart(
        title,
        f"{title}: share of bads caught by the riskiest share of loans",
        *axes,
        lines=lines,
        legend=legend,
    )


def sparkline(history: Sequence[tuple[dt.date, float | None]], *, digits: int = 3) -> Sparkline:
    """A figure's values over its runs, scaled to their own range."""
    known = [(d, v) for d, v in history if v is not None]
    pad = 2.0
    if not known:
        return Sparkline(SPARK_WIDTH, SPARK_HEIGHT, "", None, "no history")
    lo = min(v for _, v in known)
    hi = max(v for _, v in known)
    days = [d.toordinal() for d, _ in known]
    x = _Scale(days[0], days[-1], pad, SPARK_WIDTH - pad)
    y = _Scale(lo, hi, SPARK_HEIGHT - pad, pad)
    if len(known) == 1:
        x = _Scale(0, 0, SPARK_WIDTH - pad, SPARK_WIDTH - pad)
    xy = [(x(d.toordinal()), y(v)) for d, v in known]
    last_day, last_value = known[-1]
    last = Dot(xy[-1][0], xy[-1][1], "dot", f"{last_day.isoformat()}: {last_value:.{digits}f}")
    summary = (
        f"{len(known)} run(s) from {known[0][0]} to {last_day}: "
        f"min {lo:.{digits}f}, max {hi:.{digits}f}"
    )
    return Sparkline(SPARK_WIDTH, SPARK_HEIGHT, _points(xy), last, summary)
