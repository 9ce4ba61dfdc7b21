"""Chart coordinates: scales, ticks, curves from stored groups, broken lines."""

from __future__ import annotations

import datetime as dt
import doctest
import itertools

import pytest

from riskmon import charts
from riskmon.charts import (
    HEIGHT,
    MARGIN_BOTTOM,
    MARGIN_TOP,
    backtest_chart,
    cumulative,
    ks_chart,
    nice_ticks,
    sparkline,
    trend_chart,
)
from riskmon.records import BinRecord

DAYS = [dt.date(2025, m, 28) for m in range(1, 6)]


def test_docstring_examples() -> None:
    assert doctest.testmod(charts).failed == 0


@pytest.mark.parametrize(("lo", "hi"), [(0.0, 0.8), (-0.13, 0.61), (0.0, 1e-4), (3.0, 3.0)])
def test_nice_ticks_cover_the_range_in_even_steps(lo: float, hi: float) -> None:
    ticks = nice_ticks(lo, hi)
    assert ticks[0] <= lo
    assert ticks[-1] >= hi
    steps = {round(b - a, 12) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1


def test_a_trend_line_breaks_where_a_run_has_no_value() -> None:
    chart = trend_chart(
        "KS", list(zip(DAYS, [0.3, 0.31, None, 0.28, 0.27], strict=True)), y_label="KS"
    )
    assert len(chart.lines) == 2
    assert len(chart.dots) == 4
    assert chart.dots[-1].css == "dot last"
    top, bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
    assert all(top <= d.y <= bottom for d in chart.dots)
    xs = [d.x for d in chart.dots]
    assert xs == sorted(xs)


def test_guides_are_drawn_at_their_values_with_labels_kept_apart() -> None:
    chart = trend_chart(
        "Gini",
        list(zip(DAYS, [0.5] * 5, strict=True)),
        y_label="Gini",
        guides=[(0.56, "base", "base"), (0.532, "amber", "amber"), (0.504, "red", "red")],
    )
    label_ys = sorted(g.label_y for g in chart.guides)
    assert all(b - a >= charts.GUIDE_LABEL_GAP for a, b in itertools.pairwise(label_ys))
    red = next(g for g in chart.guides if g.css == "red")
    assert (
        red.y > next(g for g in chart.guides if g.css == "base").y
    )  # lower value, lower on screen


def test_an_empty_history_says_so() -> None:
    assert trend_chart("PSI", [], y_label="PSI").empty
    assert sparkline([]).last is None


def _group(i: int, n: int, bads: int) -> BinRecord:
    return BinRecord("curve", "performance", i, str(i), n, float(n), n_bads=bads, bads=float(bads))


def test_cumulative_curves_run_riskiest_first_from_the_origin_to_one() -> None:
    # stored safest first: the last group is the riskiest and holds most bads
    curve = cumulative([_group(0, 50, 1), _group(1, 30, 4), _group(2, 20, 15)])
    assert curve.population[0] == curve.bads[0] == curve.goods[0] == 0.0
    assert curve.population[-1] == pytest.approx(1.0)
    assert curve.bads[-1] == pytest.approx(1.0)
    assert curve.goods[-1] == pytest.approx(1.0)
    assert curve.bads[1] == pytest.approx(15 / 20)  # the riskiest group comes first
    gap = max(b - g for b, g in zip(curve.bads, curve.goods, strict=True))
    assert gap == pytest.approx(15 / 20 - 5 / 80)
    chart = ks_chart(curve, ks=gap)
    assert chart.empty is None
    assert [line.css for line in chart.lines] == ["series", "series2", "marker"]


def test_curves_without_bads_are_not_drawn() -> None:
    curve = cumulative([_group(0, 50, 0), _group(1, 30, 0)])
    assert curve.empty
    assert ks_chart(curve, ks=None).empty


def test_a_back_test_charts_wide_interval_does_not_flatten_the_other_classes() -> None:
    """A class of two facilities has an interval from −300 % to 500 %: the axes stay near the
    means (widened by at most a quarter of their span, to nice ticks), its bar clipped."""
    points = [
        ("A", 0.10, 0.12, 0.08, 0.16, 300),
        ("B", 0.40, 0.38, 0.33, 0.43, 200),
        ("C", 0.92, 0.90, -3.0, 5.0, 2),
    ]
    chart = backtest_chart(points)
    labels = [float(t.label) for t in chart.y_ticks]
    assert labels[0] >= -0.5, labels
    assert labels[-1] <= 1.5, labels
    assert [t.label for t in chart.x_ticks] == [t.label for t in chart.y_ticks]
    # every bar inside the frame
    for line in chart.lines:
        for pair in line.points.split():
            _, y = (float(v) for v in pair.split(","))
            assert chart.top - 1e-9 <= y <= chart.bottom + 1e-9
