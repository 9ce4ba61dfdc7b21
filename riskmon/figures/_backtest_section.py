"""The back-testing family's report section: the table per grade (or ECB segment) and per
configured segment, the gAUC and its tests, the contingency table, the chart of mean realised
against mean estimate and the gAUC's trend (the family itself: :mod:`riskmon.figures.backtest`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from riskmon.charts import Chart, ClassPoint, backtest_chart, trend_chart
from riskmon.figures._views import RunView
from riskmon.metrics import CCF_QUANTILES
from riskmon.records import ALL, PERFORMANCE, FigureRecord


@dataclass(frozen=True)
class BacktestRow:
    label: str
    n: float | None
    mean_estimate: float | None
    #: the mean estimate without its downturn component (``columns.downturn``)
    mean_estimate_without_downturn: float | None
    mean_realised: float | None
    t: float | None
    p: float | None
    reason: str | None
    status: str | None


@dataclass(frozen=True)
class BacktestSection:
    rows: list[BacktestRow]
    portfolio: BacktestRow
    #: the portfolio's row of each configured segment
    segments: list[BacktestRow]
    gauc: FigureRecord | None
    gauc_test: FigureRecord | None
    loss_shortfall: float | None
    mad: float | None
    psi: float | None
    excluded: FigureRecord | None
    contingency: list[list[float]]
    columns: list[str]
    #: what the rows are: "grades", or "ECB segments of the estimate"; and why, when a grade
    #: column was configured but not used
    classes: str
    note: str | None
    #: mean realised against mean estimate per row, and the gAUC over the runs
    chart: Chart
    trend: Chart
    #: the t-test's alternative: "greater" (the estimate too low), "two-sided" (an ELBE)
    alternative: str
    #: whether the model gives an estimate without its downturn component
    downturn: bool
    #: a CCF model's realised quantiles (name, probability, figure), its floored share and
    #: its exposure-weighted mean realised value
    quantiles: list[tuple[str, float, FigureRecord]]
    floored: FigureRecord | None
    exposure_weighted_mean: float | None


def _row(run: RunView, variable: str, rule: str, segment: str = ALL) -> BacktestRow:
    def value(name: str) -> float | None:
        return run.figures.value(name, PERFORMANCE, variable=variable, segment=segment)

    p = run.figures.get("backtest_p", PERFORMANCE, variable=variable, segment=segment)
    return BacktestRow(
        label=segment or variable or "portfolio",
        n=value("backtest_n"),
        mean_estimate=value("backtest_mean_estimate"),
        mean_estimate_without_downturn=value("backtest_mean_estimate_without_downturn"),
        mean_realised=value("backtest_mean_realised"),
        t=value("backtest_t"),
        p=p.value if p else None,
        reason=p.reason if p else None,
        status=run.alerts.status(rule, variable=variable, segment=segment),
    )


def section(run: RunView) -> BacktestSection | None:
    if run.figures.get("backtest_n", PERFORMANCE) is None:
        return None
    labels = [
        f.variable
        for f in run.figures.named("backtest_n", population=PERFORMANCE, segment=ALL)
        if f.variable
    ]
    gauc = run.figures.get("gauc", PERFORMANCE)
    whole = run.figures.get("backtest_n", PERFORMANCE)
    about = whole.params if whole is not None else {}
    rows = [_row(run, label, "backtest_underestimation_grade") for label in labels]
    portfolio = _row(run, "", "backtest_underestimation")
    p = run.figures.get("backtest_p", PERFORMANCE)
    segments = sorted({f.segment for f in run.figures.named("backtest_n")} - {ALL})
    return BacktestSection(
        rows=rows,
        portfolio=portfolio,
        segments=[_row(run, "", "backtest_underestimation", s) for s in segments],
        gauc=gauc,
        gauc_test=run.figures.get("gauc_test_p", PERFORMANCE),
        loss_shortfall=run.figures.value("loss_shortfall", PERFORMANCE),
        mad=run.figures.value("mad", PERFORMANCE),
        psi=run.figures.value("estimate_psi", PERFORMANCE),
        excluded=run.figures.get("excluded_share", PERFORMANCE),
        contingency=list(gauc.params.get("contingency", [])) if gauc else [],
        columns=list(gauc.params.get("columns", [])) if gauc else [],
        classes=str(about.get("classes", "ECB segments of the estimate")),
        note=about.get("note"),
        chart=backtest_chart([_point(run, row) for row in rows]),
        trend=_gauc_trend(run),
        alternative=str(p.params.get("alternative", "greater")) if p else "greater",
        downturn=any(r.mean_estimate_without_downturn is not None for r in [*rows, portfolio]),
        quantiles=[
            (name, q, found)
            for name, q in CCF_QUANTILES
            if (found := run.figures.get(name, PERFORMANCE)) is not None
        ],
        floored=run.figures.get("floored_share", PERFORMANCE),
        exposure_weighted_mean=run.figures.value("exposure_weighted_mean", PERFORMANCE),
    )


def _point(run: RunView, row: BacktestRow) -> ClassPoint:
    """A row's place on the back-test chart: the realised mean's 95 % interval from the
    t-test's variance of the differences (E + d̄ ± t(0.975, N − 1) · s / √N)."""
    from scipy.special import stdtrit  # Student's t quantile; scipy loaded only when needed

    variance = run.figures.value("backtest_variance", PERFORMANCE, variable=row.label)
    n = int(row.n or 0)
    low = high = None
    if variance is not None and row.mean_realised is not None and n > 1:
        half = float(stdtrit(n - 1, 0.975)) * math.sqrt(variance / n)
        low, high = row.mean_realised - half, row.mean_realised + half
    return (row.label, row.mean_estimate, row.mean_realised, low, high, n)


def _gauc_trend(run: RunView) -> Chart:
    series, _ = run.history.series("gauc", PERFORMANCE)
    test = run.figures.get("gauc_test_p", PERFORMANCE)
    initial = test.params.get("initial_gauc") if test is not None else None
    guides = [] if initial is None else [(float(initial), "base", f"initial {initial:.3f}")]
    return trend_chart(
        "Generalised AUC over time", series, y_label="gAUC", guides=guides, y_floor=None
    )
