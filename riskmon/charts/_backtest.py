"""The back-test chart: each grade's (or ECB segment's) mean realised value against its mean
estimate, with the 95 % interval of the realised mean; a grade whose estimates are right sits
on the diagonal, one whose interval lies above it is under-estimated."""

from __future__ import annotations

from collections.abc import Sequence

from riskmon.charts._frame import (
    SQUARE,
    Chart,
    Dot,
    LegendItem,
    Line,
    Tick,
    _label,
    _points,
    _Scale,
    nice_ticks,
)

#: (label, mean estimate, mean realised, interval low, high, closed facilities) of a class
ClassPoint = tuple[str, float | None, float | None, float | None, float | None, int]

_LEFT, _RIGHT, _TOP, _BOTTOM = 52.0, SQUARE - 16.0, 12.0, SQUARE - 40.0


def backtest_chart(points: Sequence[ClassPoint]) -> Chart:
    """Mean realised against mean estimate per class (linear axes, one scale for both), the
    realised mean's interval as a vertical bar; a class without closed facilities is left out."""
    usable = [p for p in points if p[1] is not None and p[2] is not None and p[5] > 0]
    title = "Mean realised value against mean estimate, by grade"
    means = [v for p in usable for v in (p[1], p[2]) if v is not None]
    low_mean, high_mean = min([0.0, *means]), max([0.1, *means])
    # an interval widens the axes by at most a quarter of the means' span (a class of two
    # facilities would flatten the others); longer bars are clipped at the frame
    reach = 0.25 * (high_mean - low_mean)
    bounds = [v for p in usable for v in (p[3], p[4]) if v is not None]
    ticks = nice_ticks(
        max(min([low_mean, *bounds]), low_mean - reach),
        min(max([high_mean, *bounds]), high_mean + reach),
        count=6,
    )
    lo, hi = ticks[0], ticks[-1]
    x = _Scale(lo, hi, _LEFT, _RIGHT)
    y = _Scale(lo, hi, _BOTTOM, _TOP)
    lines = [Line(_points([(x(lo), y(lo)), (x(hi), y(hi))]), "reference")]
    dots = []
    for label, estimate, realised, low, high, n in usable:
        assert estimate is not None
        assert realised is not None
        if low is not None and high is not None:
            bar = [(x(estimate), y(max(low, lo))), (x(estimate), y(min(high, hi)))]
            lines.append(Line(_points(bar), "interval"))
        dots.append(
            Dot(
                x(estimate),
                y(realised),
                "dot",
                f"{label}: mean estimate {estimate:.2%}, mean realised {realised:.2%}, {n} closed",
            )
        )
    summary = (
        f"back-test chart of {len(usable)} classes: mean realised against mean estimate"
        if usable
        else "back-test chart: no class with closed facilities"
    )
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    return Chart(
        title=title,
        summary=summary,
        width=SQUARE,
        height=SQUARE,
        left=_LEFT,
        top=_TOP,
        right=_RIGHT,
        bottom=_BOTTOM,
        x_ticks=tuple(Tick(x(t), _label(t, step)) for t in ticks),
        y_ticks=tuple(Tick(y(t), _label(t, step)) for t in ticks),
        x_label="mean estimate",
        y_label="mean realised",
        lines=tuple(lines),
        dots=tuple(dots),
        legend=(
            LegendItem("grade (bar: 95 % interval of the realised mean)", "series"),
            LegendItem("realised = estimate", "reference"),
        ),
        empty=None if dots else summary,
    )
