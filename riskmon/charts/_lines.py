"""Several lines on one wide chart: expected against realised over cohorts, vintage curves."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from riskmon.charts._frame import (
    HEIGHT,
    WIDTH,
    Chart,
    Dot,
    LegendItem,
    Line,
    Tick,
    _date_ticks,
    _frame,
    _label,
    _points,
    _Scale,
    nice_ticks,
)


@dataclass(frozen=True)
class Series:
    """One line: its legend label (None: not in the legend), css class (``series``,
    ``series2``, ``reference`` dashed, ``marker``, ``interval``) and points; a None value
    breaks the line. ``dots`` marks each point."""

    label: str | None
    css: str
    points: Sequence[tuple[float, float | None]]
    dots: bool = False


def lines_chart(
    title: str,
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    percent: bool = False,
    dates: bool = False,
) -> Chart:
    """A wide chart of ``series`` over a common x axis (ordinal days when ``dates``), the y
    axis from 0 to fit every value."""
    left, top, right, bottom = _frame()
    ys = [v for s in series for _, v in s.points if v is not None]
    xs = sorted({x for s in series for x, v in s.points})
    ticks = nice_ticks(0.0, max(ys, default=1.0) * 1.05 or 1.0)
    y = _Scale(ticks[0], ticks[-1], bottom, top)
    x = _Scale(min(xs, default=0.0), max(xs, default=1.0), left, right)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    lines: list[Line] = []
    dots: list[Dot] = []
    for s in series:
        run: list[tuple[float, float]] = []
        for px, pv in [*s.points, (0.0, None)]:
            if pv is None:
                if len(run) > 1:
                    lines.append(Line(_points(run), s.css))
                run = []
                continue
            run.append((x(px), y(pv)))
            if s.dots:
                shown = f"{pv:.2%}" if percent else f"{pv:.4g}"
                where = dt.date.fromordinal(int(px)).isoformat() if dates else f"{px:g}"
                dots.append(Dot(x(px), y(pv), "dot", f"{s.label or title} at {where}: {shown}"))
    if dates:
        x_ticks = _date_ticks([dt.date.fromordinal(int(v)) for v in xs], x)
    else:
        every = max(1, len(xs) // 8 + (len(xs) % 8 > 0))
        x_ticks = tuple(Tick(x(v), f"{v:g}") for v in xs[::every])
    y_ticks = tuple(
        Tick(y(t), f"{t:.0%}" if percent and step >= 0.01 else _label(t, step)) for t in ticks
    )
    legend = tuple(LegendItem(s.label, s.css) for s in series if s.label)
    return Chart(
        title=title,
        summary=f"{title}: {len(series)} line(s) over {len(xs)} point(s)",
        width=WIDTH,
        height=HEIGHT,
        left=left,
        top=top,
        right=right,
        bottom=bottom,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        x_label=x_label,
        y_label=y_label,
        lines=tuple(lines),
        dots=tuple(dots),
        legend=legend,
        empty=None if ys else "no value yet",
    )
