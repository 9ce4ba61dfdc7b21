"""ROC, KS and CAP curves of the performance cohort, from its stored curve points."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from riskmon.charts._frame import (
    SQUARE,
    Chart,
    LegendItem,
    Line,
    Tick,
    _points,
    _Scale,
)
from riskmon.records import BinRecord


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
