"""Chart frames: sizes, scales, ticks, guides and the dataclasses the templates draw."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

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
