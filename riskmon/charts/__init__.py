"""Coordinates for the reports' inline SVG charts.

The templates draw every chart from the dataclasses here (``_macros.html``); all arithmetic —
scales, ticks, cumulative curves — happens in Python, so a template only places elements at the
coordinates it is given. Coordinates are rounded to one decimal: a pixel is all a chart needs,
and it keeps a report with many charts small.
"""

from riskmon.charts._backtest import ClassPoint, backtest_chart
from riskmon.charts._calibration import calibration_chart
from riskmon.charts._curves import (
    CumulativeCurve,
    cap_chart,
    cumulative,
    ks_chart,
    roc_chart,
)
from riskmon.charts._frame import (
    GUIDE_LABEL_GAP,
    HEIGHT,
    MARGIN_BOTTOM,
    MARGIN_LEFT,
    MARGIN_RIGHT,
    MARGIN_TOP,
    MAX_DATE_TICKS,
    SPARK_HEIGHT,
    SPARK_WIDTH,
    SQUARE,
    WIDTH,
    Bar,
    Chart,
    Dot,
    Guide,
    LegendItem,
    Line,
    Sparkline,
    Tick,
    nice_ticks,
)
from riskmon.charts._heatmap import HeatCell, HeatLabel, HeatMap, heat_map
from riskmon.charts._lines import Series, lines_chart
from riskmon.charts._trend import (
    bar_chart,
    sparkline,
    trend_chart,
)

__all__ = [
    "GUIDE_LABEL_GAP",
    "HEIGHT",
    "MARGIN_BOTTOM",
    "MARGIN_LEFT",
    "MARGIN_RIGHT",
    "MARGIN_TOP",
    "MAX_DATE_TICKS",
    "SPARK_HEIGHT",
    "SPARK_WIDTH",
    "SQUARE",
    "WIDTH",
    "Bar",
    "Chart",
    "ClassPoint",
    "CumulativeCurve",
    "Dot",
    "Guide",
    "HeatCell",
    "HeatLabel",
    "HeatMap",
    "LegendItem",
    "Line",
    "Series",
    "Sparkline",
    "Tick",
    "backtest_chart",
    "bar_chart",
    "calibration_chart",
    "cap_chart",
    "cumulative",
    "heat_map",
    "ks_chart",
    "lines_chart",
    "nice_ticks",
    "roc_chart",
    "sparkline",
    "trend_chart",
]
