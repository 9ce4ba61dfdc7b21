"""The calibration family's figures: the portfolio's and each grade's defaults against their
mean PD, tested (Jeffreys, binomial with and without default correlation, Hosmer–Lemeshow,
Spiegelhalter) from the PD sums of the grades (:class:`~riskmon.metrics.PdTable`); the rules,
the report section and the declaration are in :mod:`riskmon.figures.calibration`."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from riskmon.config import ModelConfig
from riskmon.figures._chunks import Chunk
from riskmon.figures._family import finite, measured
from riskmon.figures._views import RunTables
from riskmon.metrics import (
    CalibrationSums,
    PdTable,
    binomial_test,
    brier_score_from_sums,
    hosmer_lemeshow_test,
    jeffreys_test,
    spiegelhalter_test_from_sums,
)
from riskmon.records import PERFORMANCE, BinRecord, FigureRecord

#: the variable the grades' bins are stored under
CALIBRATION = "calibration"
#: a mean PD this close outside [0, 1] is 0 or 1 up to rounding (a weighted mean Σwp / Σw of
#: PDs all 1 may come out one unit in the last place above it)
PD_ROUNDING = 1e-12
#: why Hosmer–Lemeshow leaves out a grade whose PD is 0 or 1
CERTAIN_LEFT_OUT = "mean PD 0 or 1: its variance N·p·(1 − p) is 0"


def _tests(d: float, n: float, pd: float, model: ModelConfig) -> tuple[dict[str, Any], str | None]:
    """Jeffreys and binomial tests of one grade (or the portfolio): their p-values, or why
    there are none."""
    if n <= 0:
        return {}, "no loans"
    if not -PD_ROUNDING <= pd <= 1 + PD_ROUNDING:
        return {}, f"mean PD {pd:.6g} is not a probability"
    pd = min(max(pd, 0.0), 1.0)  # defined at 0 and 1: no default, or every loan's, is certain
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
    # PDs outside [0, 1] stop the family before (pd_problem): a mean beyond is rounding
    pd = np.clip(pd, 0.0, 1.0)
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
    if result.certain:
        params |= {
            "left_out": [labels[k] for k in result.certain],
            "left_out_reason": CERTAIN_LEFT_OUT,
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
    out.append(_spiegelhalter(sums, n, segment))
    if model.columns.weight:
        out += _exposure(total, model, segment)
    return out


def _spiegelhalter(sums: CalibrationSums, n: float, segment: str) -> FigureRecord:
    z, z_reason = (
        measured(lambda: spiegelhalter_test_from_sums(sums))
        if n > 0
        else (None, "no loans in the cohort")
    )
    return FigureRecord(
        "spiegelhalter_p",
        None if z is None else finite(float(z.pvalue)),
        PERFORMANCE,
        segment=segment,
        reason=z_reason if z is None else None,
        params={} if z is None else {"statistic": float(z.statistic)},
    )


def _exposure(total: PdTable, model: ModelConfig, segment: str) -> list[FigureRecord]:
    """The exposure-weighted portfolio figures, tested on Kish's effective number of loans."""
    n_eff, d_eff, pd_w = (float(a[0]) for a in total.effective(weighted=True))

    def figure(name: str, value: float | None) -> FigureRecord:
        reason = None if finite(value) is not None else "no loans in the cohort"
        return FigureRecord(name, finite(value), PERFORMANCE, segment=segment, reason=reason)

    w_tests, w_reason = _tests(d_eff, n_eff, pd_w, model) if n_eff > 0 else ({}, "no loans")
    return [
        figure("mean_pd_exposure", pd_w),
        figure("default_rate_exposure", d_eff / n_eff if n_eff > 0 else None),
        FigureRecord(
            "jeffreys_p_exposure",
            w_tests.get("jeffreys_p"),
            PERFORMANCE,
            segment=segment,
            reason=w_reason,
            params={"n_effective": n_eff, "p_over": w_tests.get("jeffreys_p_over")},
        ),
        _brier("brier_exposure", _sums(total, weighted=True), segment),
    ]


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


def compute(tables: RunTables) -> Iterator[Chunk]:
    """Calibration figures of the cohort, segment by segment; nothing when the model has no
    PD."""
    problem = tables.pd_problem
    if problem is not None and tables.pd_table(PERFORMANCE) is not None:
        yield [FigureRecord("jeffreys_p", None, PERFORMANCE, reason=problem)], []
        return
    for segment in tables.segments():
        grades = tables.pd_table(PERFORMANCE, segment)
        if grades is None:
            continue
        order = _grade_order(tables, grades)
        figures = _portfolio(tables, grades, order, segment)
        found, rows = _grades(tables, grades, order, segment)
        yield [*figures, *found], rows
