"""Trend lines over run dates, grouped bars, and the summary table's sparklines."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from riskmon.charts._frame import (
    HEIGHT,
    SPARK_HEIGHT,
    SPARK_WIDTH,
    WIDTH,
    Bar,
    Chart,
    Dot,
    LegendItem,
    Line,
    Sparkline,
    Tick,
    _date_ticks,
    _frame,
    _guides,
    _label,
    _points,
    _Scale,
    nice_ticks,
)


def trend_chart(
    title: str,
    history: Sequence[tuple[dt.date, float | None]],
    *,
    y_label: str,
    guides: Sequence[tuple[float, str, str]] = (),
    digits: int = 3,
    y_floor: float | None = 0.0,
    y_range: tuple[float, float] | None = None,
) -> Chart:
    """A figure over the as-of dates of its runs, with threshold ``guides`` drawn as
    horizontal lines (value, css class, label). A run without a value breaks the line. The
    y axis fits the values, from ``y_floor``; or it is ``y_range`` exactly (a p-value's [0, 1],
    whatever the values)."""
    left, top, right, bottom = _frame()
    known = [v for _, v in history if v is not None]
    if y_range is not None:
        ticks = nice_ticks(*y_range, count=6)
        ticks = [t for t in ticks if y_range[0] <= t <= y_range[1]] or list(y_range)
    else:
        ticks = _fitted_ticks(known + [g[0] for g in guides], y_floor)
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


def _fitted_ticks(values: Sequence[float], y_floor: float | None) -> list[float]:
    """Ticks spanning ``values`` with a margin (and ``y_floor``, when it is below them)."""
    lo = min(values, default=0.0)
    hi = max(values, default=1.0)
    if y_floor is not None:
        lo = min(lo, y_floor)
    pad = (hi - lo) * 0.08 or 0.05
    return list(nice_ticks(lo if y_floor is not None and lo >= y_floor else lo - pad, hi + pad))


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
