"""The calibration section of the model run report: the grades' default rates against their
mean PDs, both directions' tests, and the p-values that decided each status."""

from __future__ import annotations

from dataclasses import dataclass

from riskmon.charts import Chart, calibration_chart, trend_chart
from riskmon.figures._calibration_figures import CALIBRATION
from riskmon.figures._views import RunView
from riskmon.records import PERFORMANCE, AlertLike, FigureRecord, Status


@dataclass(frozen=True)
class GradeRow:
    """A row of the calibration table: one grade, or the portfolio."""

    label: str
    n: int
    defaults: int
    default_rate: float | None
    mean_pd: float | None
    jeffreys_p: float | None
    binomial_p: float | None
    p_correlated: float | None
    critical_defaults: int | None
    status: str | None
    reason: str | None
    #: the tests of over-estimation (the PD too high)
    jeffreys_p_over: float | None = None
    binomial_p_over: float | None = None
    #: the p-values that decided the status of each direction (a grade's Holm-adjusted, the
    #: portfolio's as judged, adjusted when multiple testing control is on) and the statuses
    decided_under: float | None = None
    decided_over: float | None = None
    status_under: str | None = None
    status_over: str | None = None


@dataclass(frozen=True)
class CalibrationSection:
    """Are the PDs right: the grades' default rates against their mean PDs."""

    rows: list[GradeRow]
    portfolio: GradeRow | None
    hosmer_lemeshow: FigureRecord | None
    brier: float | None
    spiegelhalter: FigureRecord | None
    exposure: dict[str, float | None]
    correlation: float
    confidence: float
    chart: Chart | None
    trend: Chart | None


def _decided(
    under: AlertLike | None, over: AlertLike | None
) -> tuple[float | None, float | None, str | None, str | None]:
    """The p-values that decided the under- and over-estimation statuses, and the statuses."""
    return (
        under.value if under else None,
        over.value if over else None,
        under.status if under else None,
        over.status if over else None,
    )


def _grade_rows(run: RunView) -> list[GradeRow]:
    """A row per grade: its tests of both directions and the Holm-adjusted p that decided each."""
    rows = []
    for b in run.bins.get(PERFORMANCE, CALIBRATION):
        x = b.extra
        under = run.alerts.get("pd_underestimation_grade", variable=b.label)
        over = run.alerts.get("pd_overestimation_grade", variable=b.label)
        judged = [a.status for a in (under, over) if a is not None]
        rows.append(
            GradeRow(
                b.label,
                b.n_total,
                b.n_bads or 0,
                x.get("default_rate"),
                x.get("mean_pd"),
                x.get("jeffreys_p"),
                x.get("binomial_p"),
                x.get("p_correlated"),
                x.get("critical_defaults"),
                str(Status.worst(judged)) if judged else None,
                x.get("reason"),
                x.get("jeffreys_p_over"),
                x.get("binomial_p_over"),
                *_decided(under, over),
            )
        )
    return rows


def _portfolio_row(run: RunView, jeffreys: FigureRecord, binomial: FigureRecord | None) -> GradeRow:
    """The portfolio's row: its tests of both directions and the p that decided each."""
    figures = run.figures
    under, over = (run.alerts.get(r) for r in ("pd_underestimation", "pd_overestimation"))
    judged = [a.status for a in (under, over) if a is not None]
    return GradeRow(
        "portfolio",
        int(figures.value("calibration_n", PERFORMANCE) or 0),
        int(figures.value("calibration_defaults", PERFORMANCE) or 0),
        figures.value("default_rate", PERFORMANCE),
        figures.value("mean_pd", PERFORMANCE),
        jeffreys.value,
        binomial.value if binomial else None,
        binomial.params.get("p_correlated") if binomial else None,
        binomial.params.get("critical_defaults") if binomial else None,
        str(Status.worst(judged)) if judged else None,
        jeffreys.reason,
        jeffreys.params.get("p_over"),
        binomial.params.get("p_over") if binomial else None,
        *_decided(under, over),
    )


def section(run: RunView) -> CalibrationSection | None:
    figures = run.figures
    jeffreys = figures.get("jeffreys_p", PERFORMANCE)
    if jeffreys is None:
        return None
    binomial = figures.get("binomial_p", PERFORMANCE)
    rows = _grade_rows(run)
    portfolio = _portfolio_row(run, jeffreys, binomial)
    points = [
        (
            r.label,
            r.mean_pd,
            r.default_rate,
            b.extra.get("jeffreys_low"),
            b.extra.get("jeffreys_high"),
            r.n,
        )
        for r, b in zip(rows, run.bins.get(PERFORMANCE, CALIBRATION), strict=True)
    ]
    series, _ = run.history.series("jeffreys_p", PERFORMANCE)
    return CalibrationSection(
        rows=rows,
        portfolio=portfolio,
        hosmer_lemeshow=figures.get("hosmer_lemeshow_p", PERFORMANCE),
        brier=figures.value("brier", PERFORMANCE),
        spiegelhalter=figures.get("spiegelhalter_p", PERFORMANCE),
        exposure={
            "mean_pd": figures.value("mean_pd_exposure", PERFORMANCE),
            "default_rate": figures.value("default_rate_exposure", PERFORMANCE),
            "jeffreys_p": figures.value("jeffreys_p_exposure", PERFORMANCE),
            "brier": figures.value("brier_exposure", PERFORMANCE),
        },
        correlation=float(binomial.params.get("default_correlation", 0.0)) if binomial else 0.0,
        confidence=float(binomial.params.get("confidence", 0.99)) if binomial else 0.99,
        chart=calibration_chart(points),
        trend=trend_chart(
            "Jeffreys p-value of under-estimation (portfolio) over time",
            series,
            y_label="p",
            y_range=(0.0, 1.0),
        ),
    )
