"""The calibration chart: each grade's observed default rate against its mean PD, on log
axes, with its Jeffreys interval; a well-calibrated grade sits on the diagonal."""

from __future__ import annotations

import math
from collections.abc import Sequence

from riskmon.charts._frame import SQUARE, Chart, Dot, LegendItem, Line, Tick, _points, _Scale

#: (label, mean PD, observed default rate, Jeffreys interval low, high, loans) of a grade
GradePoint = tuple[str, float | None, float | None, float | None, float | None, int]

_LEFT, _RIGHT, _TOP, _BOTTOM = 52.0, SQUARE - 16.0, 12.0, SQUARE - 40.0


def _decades(lo: float, hi: float) -> tuple[float, float]:
    """Powers of ten around [lo, hi]."""
    return 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi))


def _log_ticks(lo: float, hi: float, scale: _Scale) -> tuple[Tick, ...]:
    ticks = []
    k = round(math.log10(lo))
    while 10.0**k <= hi * 1.0001:
        value = 10.0**k
        ticks.append(Tick(scale(math.log10(value)), f"{value:.{max(0, -k - 2)}%}"))
        k += 1
    return tuple(ticks)


def calibration_chart(points: Sequence[GradePoint]) -> Chart:
    """Observed default rate against mean PD per grade (log-log), Jeffreys intervals as
    vertical bars; a grade without defaults is drawn at the axis floor."""
    usable = [p for p in points if p[1] is not None and p[1] > 0 and p[5] > 0]
    title = "Observed default rate against mean PD, by grade"
    if not usable:
        return _frame(title, "calibration chart: no grade with loans and a PD", (), (), 1e-3, 1.0)
    values = [v for p in usable for v in (p[1], p[2], p[3], p[4]) if v is not None and v > 0]
    lo, hi = _decades(min(values), max(values))
    hi = min(max(hi, lo * 10), 1.0)
    x = _Scale(math.log10(lo), math.log10(hi), _LEFT, _RIGHT)
    y = _Scale(math.log10(lo), math.log10(hi), _BOTTOM, _TOP)

    def at(value: float | None) -> float:
        return math.log10(min(max(value or lo, lo), hi))

    lines = [Line(_points([(x(at(lo)), y(at(lo))), (x(at(hi)), y(at(hi)))]), "reference")]
    dots = []
    for label, pd, rate, low, high, n in usable:
        px = x(at(pd))
        if low is not None and high is not None:
            lines.append(Line(_points([(px, y(at(low))), (px, y(at(high)))]), "interval"))
        shown = "n/a" if rate is None else f"{rate:.2%}"
        dots.append(
            Dot(
                px,
                y(at(rate)),
                "dot",
                f"grade {label}: mean PD {pd:.2%}, observed {shown}, {n} loans",
            )
        )
    summary = f"calibration chart of {len(usable)} grades: observed default rate against mean PD"
    return _frame(title, summary, tuple(lines), tuple(dots), lo, hi)


def _frame(
    title: str,
    summary: str,
    lines: tuple[Line, ...],
    dots: tuple[Dot, ...],
    lo: float,
    hi: float,
) -> Chart:
    x = _Scale(math.log10(lo), math.log10(hi), _LEFT, _RIGHT)
    y = _Scale(math.log10(lo), math.log10(hi), _BOTTOM, _TOP)
    return Chart(
        title=title,
        summary=summary,
        width=SQUARE,
        height=SQUARE,
        left=_LEFT,
        top=_TOP,
        right=_RIGHT,
        bottom=_BOTTOM,
        x_ticks=_log_ticks(lo, hi, x),
        y_ticks=_log_ticks(lo, hi, y),
        x_label="mean PD (log)",
        y_label="observed default rate (log)",
        lines=lines,
        dots=dots,
        legend=(
            LegendItem("grade (bar: Jeffreys interval)", "series"),
            LegendItem("PD = observed", "reference"),
        ),
        empty=None if dots else summary,
    )
