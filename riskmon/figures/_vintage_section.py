"""The vintage curves of the early-warning section: one line per vintage, its expected curve
dashed, the vintages the ``vintage_defaults`` rule flags drawn in red and named."""

from __future__ import annotations

from dataclasses import dataclass

from riskmon.charts import Chart, Series, lines_chart
from riskmon.figures._views import RunView
from riskmon.records import ALL, CURRENT, FigureRecord, Status

#: the curves of at most this many vintages are drawn (the newest)
MAX_DRAWN = 13


@dataclass(frozen=True)
class VintageRow:
    vintage: str
    n: float
    mob: int
    observed: float | None
    expected: float | None
    judged_observed: float | None
    judged_mob: int | None
    z: float | None
    p: float | None
    status: str | None
    reason: str | None
    dpd30: float | None


@dataclass(frozen=True)
class VintageView:
    rows: list[VintageRow]
    chart: Chart
    flagged: list[str]


def _row(run: RunView, f: FigureRecord) -> VintageRow:
    test = run.figures.get("vintage_defaults", CURRENT, variable=f.variable)
    alert = run.alerts.get("vintage_defaults", variable=f.variable)
    x = f.params
    t = test.params if test is not None else {}
    dpd30 = x.get("dpd30")
    return VintageRow(
        vintage=f.variable,
        n=float(x.get("n", 0)),
        mob=int(x.get("mob", 0)),
        observed=f.value,
        expected=t.get("expected"),
        judged_observed=t.get("observed"),
        judged_mob=t.get("mob"),
        z=t.get("z"),
        p=None if test is None else test.value,
        status=None if alert is None else alert.status,
        reason=None if test is None else test.reason,
        dpd30=dpd30[-1] if dpd30 else None,
    )


def vintage_view(run: RunView) -> VintageView | None:
    """The whole population's vintages, newest first, and their curves; None without them."""
    curves = list(run.figures.named("vintage_cdr", population=CURRENT, segment=ALL))
    if not curves:
        return None
    rows = [_row(run, f) for f in curves]
    flagged = [r.vintage for r in rows if r.status in (Status.RED, Status.AMBER)]
    series: list[Series] = []
    for f in curves[-MAX_DRAWN:]:
        css = "marker" if f.variable in flagged else "series"
        observed = f.params.get("observed") or []
        series.append(Series(None, css, [(float(m), v) for m, v in enumerate(observed)]))
        expected = f.params.get("expected")
        if expected:
            series.append(
                Series(None, "reference", [(float(m), v) for m, v in enumerate(expected)])
            )
    series[:0] = [
        Series("realised", "series", []),
        Series("expected from the PDs", "reference", []),
        Series("flagged", "marker", []),
    ]
    chart = lines_chart(
        "Cumulative default rate by months on book, one line per vintage",
        series,
        x_label="months on book",
        y_label="cumulative default rate",
        percent=True,
    )
    return VintageView(rows=rows[::-1], chart=chart, flagged=flagged)
