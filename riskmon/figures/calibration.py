"""Calibration: are the PDs right? Observed default rates against mean PDs, per grade and for
the portfolio of the performance cohort.

Computed from the PD sums of the grades (:class:`~riskmon.metrics.PdTable`), which the collect
pass takes in the same ``GROUP BY`` as the counts; nothing here reads a loan.

Figures (performance cohort, per segment): ``calibration_n`` and ``calibration_defaults``
(loans and defaults tested), ``mean_pd``, ``default_rate``, ``jeffreys_p`` (ECB: the Beta(D+½,
N−D+½) CDF at the mean PD; params: the interval, ``p_over`` for over-estimation),
``binomial_p`` (P(X ≥ D); params: ``p_over``, ``critical_defaults``, and with a default
correlation ρ the Vasicek-adjusted ``p_correlated`` and its critical count),
``hosmer_lemeshow_p`` (χ² over the grades with K degrees of freedom, grades with fewer than
``calibration.min_expected_defaults`` expected defaults merged with a neighbour), ``brier`` and
``spiegelhalter_p``; with a weight, ``mean_pd_exposure``, ``default_rate_exposure``,
``jeffreys_p_exposure`` (on Kish's effective number of loans) and ``brier_exposure``. Per
grade (variable: the grade's label): ``grade_jeffreys_p`` with the grade's N, D, rates and
binomial p-values in its params, and the grades as ``calibration`` bins.

Rules (p-value traffic lights, ``thresholds.calibration`` and ``thresholds.over_estimation``):
``pd_underestimation`` and ``pd_overestimation`` for the portfolio (per segment);
``pd_underestimation_grade`` and ``pd_overestimation_grade`` per grade (whole population),
judged on Holm-adjusted p-values so that K grades together keep the stated levels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.charts import Chart, calibration_chart, trend_chart
from riskmon.config import ModelConfig, Thresholds
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Headline,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    RunTables,
    RunView,
    Section,
    describe_p,
    finite,
    measured,
    p_levels,
    p_status,
    where,
)
from riskmon.metrics import (
    CalibrationSums,
    PdTable,
    binomial_test,
    brier_score_from_sums,
    hosmer_lemeshow_test,
    jeffreys_test,
    spiegelhalter_test_from_sums,
)
from riskmon.records import ALL, PERFORMANCE, BinRecord, FigureRecord, Status

#: the variable the grades' bins are stored under
CALIBRATION = "calibration"


# --------------------------------------------------------------------------- compute


def _tests(d: float, n: float, pd: float, model: ModelConfig) -> tuple[dict[str, Any], str | None]:
    """Jeffreys and binomial tests of one grade (or the portfolio): their p-values, or why
    there are none."""
    if n <= 0:
        return {}, "no loans"
    if not 0 < pd < 1:
        return {}, f"mean PD {pd:.4g} leaves nothing to test (0 or 1)"
    c = model.calibration
    alpha = 1 - c.confidence
    jeffreys = jeffreys_test(d, n, pd)
    binomial = binomial_test(d, n, pd, alpha=alpha)
    out: dict[str, Any] = {
        "jeffreys_p": float(jeffreys.pvalue),
        "jeffreys_p_over": float(jeffreys.pvalue_over),
        "jeffreys_low": float(jeffreys.interval[0]),
        "jeffreys_high": float(jeffreys.interval[1]),
        "binomial_p": float(binomial.pvalue),
        "binomial_p_over": float(binomial.pvalue_over),
        "critical_defaults": int(binomial.critical_value),
    }
    if c.default_correlation > 0:
        correlated = binomial_test(d, n, pd, correlation=c.default_correlation, alpha=alpha)
        out["p_correlated"] = float(correlated.pvalue)
        out["critical_defaults_correlated"] = int(correlated.critical_value)
    return out, None


def _grade_order(tables: RunTables, grades: PdTable) -> list[int]:
    """The bins to show, best grade first: the value bins (in PD order: a score whose higher
    values are safer lists them reversed), then the missing and unseen bins that hold loans."""
    binning = grades.binning
    k = binning.n_value_bins if binning is not None else len(grades.labels)
    order = list(range(k))
    if binning is not None and binning.kind == "numeric" and not tables.pd_ascending:
        order.reverse()
    order += [i for i in range(k, len(grades.labels)) if grades.n[i] > 0]
    return order


def _hosmer_lemeshow(
    grades: PdTable, order: list[int], minimum: float, segment: str
) -> FigureRecord:
    """Hosmer–Lemeshow over the grades (best first), adjacent grades merged until each
    expects ``minimum`` defaults and survivors."""
    n = grades.n[order]
    d = grades.d[order]
    with np.errstate(invalid="ignore", divide="ignore"):
        pd = np.where(n > 0, grades.p[order] / np.where(n > 0, n, 1.0), 0.5)
    result, reason = measured(lambda: hosmer_lemeshow_test(d, n, pd, min_expected=minimum))
    if result is None or not math.isfinite(result.pvalue):
        return FigureRecord("hosmer_lemeshow_p", None, PERFORMANCE, segment=segment, reason=reason)
    labels = [str(grades.labels[i]) for i in order]
    params = {
        "statistic": float(result.statistic),
        "dof": int(result.dof),
        "merged": [f"{labels[g[0]]} … {labels[g[-1]]}" for g in result.groups if len(g) > 1],
        "min_expected_defaults": minimum,
    }
    return FigureRecord(
        "hosmer_lemeshow_p", float(result.pvalue), PERFORMANCE, segment=segment, params=params
    )


def _sums(t: PdTable, *, weighted: bool = False) -> CalibrationSums:
    """The sums of a table's loans: number-weighted, and with ``weighted`` the weighted ones
    beside them."""
    return CalibrationSums(
        n=float(t.n.sum()),
        y=float(t.d.sum()),
        p=float(t.p.sum()),
        p2=float(t.p2.sum()),
        p3=float(t.p3.sum()),
        p4=float(t.p4.sum()),
        yp=float(t.pd.sum()),
        w=float(t.w.sum()) if weighted else None,
        wy=float(t.wd.sum()) if weighted else None,
        wp2=float(t.wp2.sum()) if weighted else None,
        wyp=float(t.wpd.sum()) if weighted else None,
    )


def _brier(name: str, sums: CalibrationSums, segment: str) -> FigureRecord:
    """The Brier score of ``sums`` (weighted when they carry weights) as figure ``name``."""
    brier, reason = (
        measured(lambda: brier_score_from_sums(sums))
        if sums.n > 0
        else (None, "no loans in the cohort")
    )
    return FigureRecord(name, finite(brier), PERFORMANCE, segment=segment, reason=reason)


def _portfolio(
    tables: RunTables, grades: PdTable, order: list[int], segment: str
) -> list[FigureRecord]:
    model = tables.model
    total = grades.portfolio()
    n, d = float(total.n[0]), float(total.d[0])
    mean_pd = float(total.p[0]) / n if n > 0 else math.nan

    def figure(name: str, value: float | None, **params: Any) -> FigureRecord:
        reason = None if finite(value) is not None else "no loans in the cohort"
        return FigureRecord(
            name, finite(value), PERFORMANCE, segment=segment, reason=reason, params=params
        )

    out = [
        figure("calibration_n", n),
        figure("calibration_defaults", d),
        figure("mean_pd", mean_pd),
        figure("default_rate", d / n if n > 0 else None),
    ]
    tests, reason = _tests(d, n, mean_pd, model) if n > 0 else ({}, "no loans in the cohort")
    jeffreys = tests.pop("jeffreys_p", None)
    binomial = tests.pop("binomial_p", None)
    out.append(
        FigureRecord(
            "jeffreys_p",
            jeffreys,
            PERFORMANCE,
            segment=segment,
            reason=reason,
            params={k: v for k, v in tests.items() if k.startswith("jeffreys")}
            | {"p_over": tests.get("jeffreys_p_over")},
        )
    )
    out.append(
        FigureRecord(
            "binomial_p",
            binomial,
            PERFORMANCE,
            segment=segment,
            reason=reason,
            params={k: v for k, v in tests.items() if not k.startswith("jeffreys")}
            | {
                "p_over": tests.get("binomial_p_over"),
                "confidence": model.calibration.confidence,
                "default_correlation": model.calibration.default_correlation,
            },
        )
    )
    out.append(_hosmer_lemeshow(grades, order, model.calibration.min_expected_defaults, segment))
    sums = _sums(total)
    out.append(_brier("brier", sums, segment))
    z, z_reason = (
        measured(lambda: spiegelhalter_test_from_sums(sums))
        if n > 0
        else (None, "no loans in the cohort")
    )
    out.append(
        FigureRecord(
            "spiegelhalter_p",
            None if z is None else finite(float(z.pvalue)),
            PERFORMANCE,
            segment=segment,
            reason=z_reason if z is None else None,
            params={} if z is None else {"statistic": float(z.statistic)},
        )
    )
    if model.columns.weight:
        n_eff, d_eff, pd_w = (float(a[0]) for a in total.effective(weighted=True))
        out.append(figure("mean_pd_exposure", pd_w))
        out.append(figure("default_rate_exposure", d_eff / n_eff if n_eff > 0 else None))
        w_tests, w_reason = _tests(d_eff, n_eff, pd_w, model) if n_eff > 0 else ({}, "no loans")
        out.append(
            FigureRecord(
                "jeffreys_p_exposure",
                w_tests.get("jeffreys_p"),
                PERFORMANCE,
                segment=segment,
                reason=w_reason,
                params={"n_effective": n_eff, "p_over": w_tests.get("jeffreys_p_over")},
            )
        )
        out.append(_brier("brier_exposure", _sums(total, weighted=True), segment))
    return out


def _grades(
    tables: RunTables, grades: PdTable, order: list[int], segment: str
) -> tuple[list[FigureRecord], list[BinRecord]]:
    model = tables.model
    weighted = bool(model.columns.weight)
    n_eff, d_eff, pd_w = grades.effective(weighted=weighted)
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    for position, i in enumerate(order):
        label = str(grades.labels[i])
        n, d = float(grades.n[i]), float(grades.d[i])
        mean_pd = float(grades.p[i]) / n if n > 0 else None
        tests, reason = _tests(d, n, mean_pd if mean_pd is not None else math.nan, model)
        extra: dict[str, Any] = {
            "grade": position + 1,
            "mean_pd": mean_pd,
            "default_rate": d / n if n > 0 else None,
            **tests,
        }
        if weighted:
            extra["mean_pd_exposure"] = finite(float(pd_w[i]))
            extra["default_rate_exposure"] = float(d_eff[i] / n_eff[i]) if n_eff[i] > 0 else None
        if reason:
            extra["reason"] = reason
        bins.append(
            BinRecord(
                CALIBRATION,
                PERFORMANCE,
                position,  # best grade first, as the report lists them
                label,
                int(n),
                float(grades.w[i]),
                segment=segment,
                n_bads=int(d),
                bads=float(grades.wd[i]),
                extra=extra,
            )
        )
        figures.append(
            FigureRecord(
                "grade_jeffreys_p",
                tests.get("jeffreys_p"),
                PERFORMANCE,
                variable=label,
                segment=segment,
                reason=reason,
                params={k: v for k, v in extra.items() if k != "jeffreys_p"}
                | {"n": int(n), "defaults": int(d)},
            )
        )
    return figures, bins


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """Calibration figures of the cohort per segment; nothing when the model has no PD."""
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    problem = tables.pd_problem
    if problem is not None and tables.pd_table(PERFORMANCE) is not None:
        return [FigureRecord("jeffreys_p", None, PERFORMANCE, reason=problem)], []
    for segment in tables.segments():
        grades = tables.pd_table(PERFORMANCE, segment)
        if grades is None:
            continue
        order = _grade_order(tables, grades)
        figures += _portfolio(tables, grades, order, segment)
        found, rows = _grades(tables, grades, order, segment)
        figures += found
        bins += rows
    return figures, bins


# --------------------------------------------------------------------------- rules


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjustment of ``pvalues`` (same order): the family-wise levels of K
    tests judged together."""
    k = len(pvalues)
    adjusted = [0.0] * k
    running = 0.0
    for rank, i in enumerate(sorted(range(k), key=lambda j: pvalues[j])):
        running = max(running, min(1.0, (k - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _judge_portfolio(judge: Judge, segment: str, *, over: bool) -> None:
    rule = "pd_overestimation" if over else "pd_underestimation"
    levels = judge.thresholds.over_estimation if over else judge.thresholds.calibration
    thresholds = p_levels(levels)
    figure = judge.figures.get("jeffreys_p", PERFORMANCE, segment=segment)
    if figure is None:  # the model has no PD: no calibration rule applies
        return
    p = figure.params.get("p_over") if over else figure.value
    if p is None:
        reason = figure.reason or "no p-value"
        judge.add(rule, Status.NOT_EVALUABLE, None, thresholds, reason, segment=segment)
        return
    rate = judge.figures.value("default_rate", PERFORMANCE, segment=segment)
    mean_pd = judge.figures.value("mean_pd", PERFORMANCE, segment=segment)
    side = "below" if over else "above"
    message = (
        f"default rate{where('', segment)} {_pct(rate)} against a mean PD of {_pct(mean_pd)}: "
        f"Jeffreys p = {p:.3g} that it is this far {side} the PD by chance"
    )
    judge.add(rule, p_status(float(p), levels), float(p), thresholds, message, segment=segment)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _p(figure: FigureRecord, over: bool) -> float | None:
    """A grade's Jeffreys p-value of under-estimation, or of over-estimation."""
    value = figure.params.get("jeffreys_p_over") if over else figure.value
    return None if value is None else float(value)


def _judge_grades(judge: Judge, _: str, *, over: bool) -> None:
    rule = "pd_overestimation_grade" if over else "pd_underestimation_grade"
    levels = judge.thresholds.over_estimation if over else judge.thresholds.calibration
    grades = [
        f
        for f in judge.figures
        if f.name == "grade_jeffreys_p" and f.population == PERFORMANCE and f.segment == ALL
    ]
    tested = [(f, float(p)) for f in grades if (p := _p(f, over)) is not None]
    adjusted = holm([p for _, p in tested])
    thresholds = p_levels(levels) | {"adjustment": "Holm", "grades_tested": len(tested)}
    side = "below" if over else "above"
    for (f, p), p_holm in zip(tested, adjusted, strict=True):
        message = (
            f"grade {f.variable}: default rate {_pct(f.params.get('default_rate'))} against a "
            f"mean PD of {_pct(f.params.get('mean_pd'))} on {f.params.get('n', '?')} loans "
            f"(Jeffreys p {p:.3g}, {p_holm:.3g} after Holm over {len(tested)} grades; {side})"
        )
        status = p_status(p_holm, levels)
        judge.add(rule, status, p_holm, thresholds, message, variable=f.variable)
    for f in grades:
        if _p(f, over) is None:
            reason = f"grade {f.variable}: {f.reason or 'not testable'}"
            judge.add(rule, Status.NOT_EVALUABLE, None, thresholds, reason, variable=f.variable)


# --------------------------------------------------------------------------- report


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


def section(run: RunView) -> CalibrationSection | None:
    figures, alerts = run.figures, run.alerts
    jeffreys = figures.get("jeffreys_p", PERFORMANCE)
    if jeffreys is None:
        return None
    binomial = figures.get("binomial_p", PERFORMANCE)
    rows = []
    for b in run.bins.get(PERFORMANCE, CALIBRATION):
        x = b.extra
        alert = alerts.get("pd_underestimation_grade", variable=b.label)
        over = alerts.get("pd_overestimation_grade", variable=b.label)
        status = (
            Status.worst(a.status for a in (alert, over) if a is not None)
            if (alert or over)
            else None
        )
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
                None if status is None else str(status),
                x.get("reason"),
            )
        )
    port_alerts = [alerts.get(r) for r in ("pd_underestimation", "pd_overestimation")]
    port_status = [a.status for a in port_alerts if a is not None]
    n = figures.value("calibration_n", PERFORMANCE)
    portfolio = GradeRow(
        "portfolio",
        int(n or 0),
        int(figures.value("calibration_defaults", PERFORMANCE) or 0),
        figures.value("default_rate", PERFORMANCE),
        figures.value("mean_pd", PERFORMANCE),
        jeffreys.value,
        binomial.value if binomial else None,
        binomial.params.get("p_correlated") if binomial else None,
        binomial.params.get("critical_defaults") if binomial else None,
        str(Status.worst(port_status)) if port_status else None,
        jeffreys.reason,
    )
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
        trend=trend_chart("Jeffreys p-value of the portfolio over time", series, y_label="p"),
    )


def _rule(name: str, scope: Any, figure: str, over: bool, grades: bool) -> Rule:
    def levels(t: Thresholds) -> dict[str, Any]:
        return p_levels(t.over_estimation if over else t.calibration)

    judge = _judge_grades if grades else _judge_portfolio

    def run_judge(j: Judge, where_: str) -> None:
        judge(j, where_, over=over)

    # a grade's p-values are Holm-adjusted within the run already
    if grades:
        return Rule(name, scope, figure, levels, describe_p, run_judge, PERFORMANCE)
    return Rule(name, scope, figure, levels, describe_p, run_judge, PERFORMANCE, tested="p")


FAMILY = Family(
    name="calibration",
    figures=(
        FigureSpec(
            "calibration_n", PERFORMANCE, "segment", "loans tested for calibration", count=True
        ),
        FigureSpec(
            "calibration_defaults", PERFORMANCE, "segment", "defaults among them", count=True
        ),
        FigureSpec("mean_pd", PERFORMANCE, "segment", "mean PD of the cohort"),
        FigureSpec("default_rate", PERFORMANCE, "segment", "observed default rate"),
        FigureSpec("jeffreys_p", PERFORMANCE, "segment", "Jeffreys test p-value"),
        FigureSpec("binomial_p", PERFORMANCE, "segment", "binomial test p-value"),
        FigureSpec("hosmer_lemeshow_p", PERFORMANCE, "segment", "Hosmer-Lemeshow p-value"),
        FigureSpec("brier", PERFORMANCE, "segment", "Brier score"),
        FigureSpec("spiegelhalter_p", PERFORMANCE, "segment", "Spiegelhalter test p-value"),
        FigureSpec("mean_pd_exposure", PERFORMANCE, "segment", "exposure-weighted mean PD"),
        FigureSpec(
            "default_rate_exposure", PERFORMANCE, "segment", "exposure-weighted default rate"
        ),
        FigureSpec("jeffreys_p_exposure", PERFORMANCE, "segment", "Jeffreys p, by exposure"),
        FigureSpec("brier_exposure", PERFORMANCE, "segment", "exposure-weighted Brier score"),
        FigureSpec("grade_jeffreys_p", PERFORMANCE, "variable", "Jeffreys p-value of a grade"),
    ),
    compute=compute,
    rules=(
        _rule("pd_underestimation", "segment", "PD under-estimation (portfolio)", False, False),
        _rule("pd_overestimation", "segment", "PD over-estimation (portfolio)", True, False),
        _rule("pd_underestimation_grade", "run", "PD under-estimation (grade)", False, True),
        _rule("pd_overestimation_grade", "run", "PD over-estimation (grade)", True, True),
    ),
    sections=(
        Section("calibration", "Calibration", "calibration", 35, "_calibration.html", section),
    ),
    headlines=(
        Headline(
            62,
            "mean_pd",
            "Mean PD of the cohort",
            "mean_pd",
            PERFORMANCE,
            format="percent",
            rule="pd_underestimation",
            with_baseline=False,
        ),
    ),
    history=(
        HistoryColumn(62, "mean_pd", "", PERFORMANCE),
        HistoryColumn(64, "jeffreys_p", "", PERFORMANCE),
    ),
    parameters=(
        Parameter(100, "binomial_p", "default_correlation", "default correlation (binomial test)"),
        Parameter(110, "binomial_p", "confidence", "confidence of the critical default counts"),
        Parameter(
            120, "hosmer_lemeshow_p", "min_expected_defaults", "Hosmer-Lemeshow: fewest expected"
        ),
    ),
    default_population=dict.fromkeys(
        ("mean_pd", "default_rate", "jeffreys_p", "binomial_p", "brier"), PERFORMANCE
    ),
)
