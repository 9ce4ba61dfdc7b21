"""The back-testing family's figures: an LGD, CCF or EAD model's estimates against the realised
values of the facilities whose recovery closed in the observation period, per grade (a
``columns.grade`` with at most ``MAX_GRADES`` grades in the initial sample, ordered by their
mean estimate there) or else per ECB segment of the estimate, and for the portfolio, from one
joint table of sums (:class:`~riskmon.metrics.BacktestTable`; the grades' own table of sums
beside it); the rules, the section and the declaration are in :mod:`riskmon.figures.backtest`.

Stored records (population ``performance``; ``segment`` the configured segment, "" the whole
population): the portfolio's figures with ``variable`` "" (its ``backtest_n`` says what the
classes are), each grade's or ECB segment's with ``variable`` its label ("A", or "< 5%",
"5-10%", …, ">= 100%") and its position as ``params["grade"]``, as the calibration family
stores its grades. The gAUC is the ECB segments' (estimate × realised) in either case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from riskmon.config import MAX_GRADES
from riskmon.figures._family import measured
from riskmon.figures._views import RunTables
from riskmon.metrics import (
    CCF_QUANTILES,
    ECB_SEGMENT_LABELS,
    REALISED_CLASS_LABELS,
    BacktestTable,
    CountTable,
    generalised_auc_test,
    grid_quantiles,
    population_stability_index_from_counts,
)
from riskmon.records import (
    ALL,
    BACKTEST,
    BACKTEST_FLOOR,
    BACKTEST_GRADE,
    BASELINE,
    DEVELOPMENT,
    PERFORMANCE,
    FigureRecord,
)

#: the figures of the portfolio and of every segment of the estimate
CLASS_FIGURES = (
    "backtest_n",
    "backtest_mean_estimate",
    "backtest_mean_realised",
    "backtest_t",
    "backtest_variance",
    "backtest_p",
    "loss_shortfall",
    "mad",
)
#: the portfolio's alone
PORTFOLIO_FIGURES = ("gauc", "gauc_se", "gauc_test_p", "estimate_psi", "excluded_share")


def backtest_table(tables: RunTables, population: str, segment: str) -> BacktestTable | None:
    """The back-testing sums of a population (and segment) per ECB segment of the estimate,
    None when the run read none."""
    joint = tables.target_table(population, BACKTEST, segment)
    if joint is None:
        return None
    return BacktestTable.from_joint(
        joint, labels=ECB_SEGMENT_LABELS, n_realised=len(REALISED_CLASS_LABELS)
    )


def class_table(
    tables: RunTables, population: str, segment: str, joint: BacktestTable
) -> BacktestTable:
    """The classes the back-test reports one by one: the model's grades (``columns.grade``,
    when the baseline froze them), else ``joint``'s ECB segments of the estimate."""
    graded = tables.target_table(population, BACKTEST_GRADE, segment)
    if graded is None:
        return joint
    return BacktestTable.from_bins(graded, labels=graded.labels)


def _classes(tables: RunTables, graded: bool) -> dict[str, Any]:
    """What the rows of the back-test are, said with the portfolio's count."""
    column = tables.model.columns.grade
    if graded:
        return {"classes": "grades", "grade_column": column}
    if column is None:
        return {"classes": "ECB segments of the estimate"}
    return {
        "classes": "ECB segments of the estimate",
        "grade_column": column,
        "note": f"columns.grade {column!r}: the baseline froze no grades (more than "
        f"{MAX_GRADES} or none in the initial sample, or frozen before the column was "
        "configured), so the back-test reports the ECB's 12 segments of the estimate",
    }


@dataclass(frozen=True)
class _Options:
    """What a model's configuration decides of every class's figures."""

    #: the fewest closed recoveries the rules judge (stored with the count)
    min_closed: int
    #: a CCF or EAD model's: the exposure-weighted mean realised value too
    weighted: bool
    #: the t-test's alternative ("two-sided" for an ELBE)
    alternative: Literal["greater", "two-sided"]
    #: a ``columns.downturn``: the mean estimate without the downturn component too
    downturn: bool

    @classmethod
    def of(cls, tables: RunTables) -> _Options:
        model = tables.model
        return cls(
            min_closed=model.backtest.min_closed,
            weighted=model.kind in ("ccf", "ead"),
            alternative=model.backtest.alternative,
            downturn=model.columns.downturn is not None,
        )


def _class_figures(
    table: BacktestTable,
    index: int,
    variable: str,
    segment: str,
    options: _Options,
    about: dict[str, Any] | None = None,
) -> list[FigureRecord]:
    """The t-test, means, loss shortfall and MAD of one row of ``table``; ``about`` is stored
    with the count."""
    n = float(table.closed[index])
    counts = {
        "facilities": int(table.facilities[index]),
        "open": int(table.facilities[index] - n),
        "closed": int(n),
        "min_closed": options.min_closed,
        **(about or {}),
    }
    test, reason = measured(lambda: table.t_test(index, alternative=options.alternative))
    t_params: dict[str, Any] = {"alternative": options.alternative}
    if test is not None:
        t_params |= {"dof": test.dof, "mean_difference": test.mean_difference}
    values: dict[str, tuple[Any, str | None, dict[str, Any]]] = {
        "backtest_n": (n, None, counts),
        "backtest_mean_estimate": (table.mean_estimate()[index], "no closed recovery", {}),
        "backtest_mean_realised": (table.mean_realised()[index], "no closed recovery", {}),
        "backtest_t": (test.statistic if test else None, reason, t_params),
        "backtest_variance": (test.variance if test else None, reason, {}),
        "backtest_p": (test.pvalue if test else None, reason, t_params),
        "loss_shortfall": (*measured(lambda: table.loss_shortfall(index)), {}),
        "mad": (*measured(lambda: table.mad(index)), {}),
    }
    if options.downturn:
        without = int(table.closed_without_downturn[index])
        values["backtest_mean_estimate_without_downturn"] = (
            table.mean_estimate_without_downturn()[index],
            "no closed recovery with an estimate without downturn",
            {"closed_with_it": without, "missing": int(n) - without},
        )
    if options.weighted:  # a CCF or EAD model's: the exposure-weighted mean realised value
        mean = table.exposure_weighted_realised()[index]
        values["exposure_weighted_mean"] = (mean, "no closed facility with an exposure", {})
    return [
        _record(name, value, reason, params, variable, segment)
        for name, (value, reason, params) in values.items()
    ]


def _record(
    name: str,
    value: Any,
    reason: str | None,
    params: dict[str, Any],
    variable: str,
    segment: str,
    population: str = PERFORMANCE,
) -> FigureRecord:
    number = None if value is None or not np.isfinite(float(value)) else float(value)
    return FigureRecord(
        name,
        number,
        population,
        variable=variable,
        segment=segment,
        reason=None if number is not None else (reason or "not defined on this data"),
        params=params,
    )


def _gauc(tables: RunTables, table: BacktestTable, segment: str) -> list[FigureRecord]:
    """The portfolio's gAUC, its standard error and the test against the initial gAUC (the
    configured ``backtest.initial_gauc``, else the frozen baseline's)."""
    from scipy.special import ndtr  # the normal CDF; scipy loaded only when a figure needs it

    gauc, reason = measured(table.gauc)
    params = {"contingency": table.contingency.tolist(), "columns": list(ECB_SEGMENT_LABELS)}
    out = [
        _record("gauc", gauc.gauc if gauc else None, reason, params, "", segment),
        _record("gauc_se", gauc.se if gauc else None, reason, {}, "", segment),
    ]
    initial = tables.model.backtest.initial_gauc
    source = "backtest.initial_gauc"
    initial_se = None
    if initial is None:
        frozen = tables.baseline.figure("gauc", segment=segment)
        initial = frozen.value if frozen is not None else None
        initial_se = frozen.params.get("se") if frozen is not None else None
        source = "baseline"
    if initial is None or gauc is None:
        why = reason if gauc is None else "no initial gAUC (backtest.initial_gauc or baseline)"
        out.append(_record("gauc_test_p", None, why, {}, "", segment))
        return out
    test, why = measured(lambda: generalised_auc_test(table.contingency, initial))
    test_params: dict[str, Any] = {"initial_gauc": initial, "initial_from": source}
    if test is not None:
        test_params["statistic"] = test.statistic
        if initial_se is not None and gauc.se > 0:
            # the frozen initial gAUC is a sample's estimate too: its error beside the current
            combined = math.hypot(gauc.se, float(initial_se))
            test_params["initial_se"] = float(initial_se)
            test_params["p_two_samples"] = float(ndtr((gauc.gauc - initial) / combined))
    out.append(_record("gauc_test_p", test.pvalue if test else None, why, test_params, "", segment))
    return out


def _psi(tables: RunTables, table: BacktestTable, segment: str) -> FigureRecord:
    """The estimates' distribution over the grades (or ECB segments) against the baseline's."""
    frozen = tables.baseline.figure("backtest_n", segment=segment)
    expected = None if frozen is None else frozen.params.get("by_segment")
    if not expected:
        return _record("estimate_psi", None, "no baseline distribution", {}, "", segment)
    labels = list(table.labels)
    if len(expected) != len(labels):
        why = "the baseline froze other classes (grades or ECB segments): freeze it again"
        return _record("estimate_psi", None, why, {}, "", segment)

    def counts(values: Any) -> CountTable:
        n = np.asarray(values, dtype=np.int64)
        return CountTable(labels, total=n.astype(np.float64), n_total=n)

    psi, reason = measured(
        lambda: population_stability_index_from_counts(counts(expected), counts(table.facilities))
    )
    params = {"noise_p": psi.noise_p} if psi is not None else {}
    return _record("estimate_psi", psi.value if psi else None, reason, params, "", segment)


def _ccf_grid(tables: RunTables, segment: str) -> list[FigureRecord]:
    """A CCF model's realised values, from their counts on the grid: the share of closed
    facilities whose realised CCF is below 0 (floored at 0), and the quantiles, each with the
    cell it lies in and the grid's error bound."""
    table = tables.table(PERFORMANCE, BACKTEST_FLOOR, segment)
    binning = table.binning
    assert binning is not None
    edges = np.asarray(binning.edges, dtype=np.float64)
    counts = np.asarray(table.n_total, dtype=np.float64)[: len(edges) + 1]  # not the open ones
    closed = float(counts.sum())
    below = float(counts[: int(np.searchsorted(edges, 0.0))].sum())  # cells up to x < 0
    value = below / closed if closed > 0 else None
    params = {"below_zero": int(below), "closed": int(closed)}
    out = [_record("floored_share", value, "no closed facility", params, "", segment)]
    found = grid_quantiles(counts, edges.tolist(), [q for _, q in CCF_QUANTILES])
    for (name, q), quantile in zip(CCF_QUANTILES, found, strict=True):
        about: dict[str, Any] = {"probability": q, "method": "inverted_cdf on a grid"}
        if math.isfinite(quantile.error_bound):
            about |= {
                "low": quantile.low,
                "high": quantile.high,
                "error_bound": quantile.error_bound,
            }
        out.append(_record(name, quantile.value, quantile.reason, about, "", segment))
    return out


def _ead_approach(tables: RunTables, table: BacktestTable) -> FigureRecord | None:
    """A CCF model's share of facilities under the EAD approach (``columns.ead_approach``),
    left out of its back-test: M_EAD over M_EAD and the facilities back-tested (open or
    closed); None without the column."""
    excluded = tables.exclusions(PERFORMANCE)
    if excluded is None or excluded.ead_approach is None:
        return None
    m_ead = excluded.ead_approach
    total = m_ead + float(table.facilities.sum())
    value = m_ead / total if total > 0 else None
    params = {"ead_approach": m_ead, "facilities": int(total)}
    return _record("ead_approach_share", value, "no facility in the period", params, "", ALL)


def _excluded(tables: RunTables, table: BacktestTable, segment: str) -> FigureRecord:
    """The share of the facilities read that the back-test leaves out: open recoveries,
    missing estimates (M_miss) and other exclusions (M_ex), over M."""
    open_ = float(table.facilities.sum() - table.closed.sum())
    params: dict[str, Any] = {"open": int(open_), "closed": int(table.closed.sum())}
    total = float(table.facilities.sum())
    excluded = tables.exclusions(PERFORMANCE) if segment == ALL else None
    if excluded is not None:
        params |= {
            "missing_estimate": excluded.null_score + excluded.non_finite_score,
            "excluded": excluded.invalid_weight
            + excluded.zero_weight
            + (excluded.out_of_range or 0),
            "read": excluded.read,
        }
        if excluded.ead_approach is not None:
            params["ead_approach"] = excluded.ead_approach
        total = float(excluded.read)
    left_out = total - float(table.closed.sum())
    value = left_out / total if total > 0 else None
    return _record("excluded_share", value, "no facility in the period", params, "", segment)


def compute(tables: RunTables) -> list[FigureRecord]:
    """Every back-testing figure of a run, per segment."""
    figures: list[FigureRecord] = []
    options = _Options.of(tables)
    for segment in tables.segments():
        table = backtest_table(tables, PERFORMANCE, segment)
        if table is None:
            continue
        classes = class_table(tables, PERFORMANCE, segment, table)
        for index, label in enumerate(classes.labels):
            if classes.facilities[index] > 0:
                position = {"grade": index + 1}
                figures += _class_figures(classes, index, label, segment, options, position)
        about = _classes(tables, classes is not table)
        figures += _class_figures(table.portfolio(), 0, "", segment, options, about)
        figures += _gauc(tables, table, segment)
        figures.append(_psi(tables, classes, segment))
        figures.append(_excluded(tables, table, segment))
        if tables.model.kind == "ccf" and tables.has(PERFORMANCE, BACKTEST_FLOOR, segment):
            figures += _ccf_grid(tables, segment)
        if segment == ALL and (m_ead := _ead_approach(tables, table)) is not None:
            figures.append(m_ead)
    return figures


def freeze(tables: RunTables) -> list[FigureRecord]:
    """The initial validation sample's gAUC and distribution over the ECB segments."""
    figures: list[FigureRecord] = []
    for segment in tables.segments():
        table = backtest_table(tables, DEVELOPMENT, segment)
        if table is None:
            continue
        gauc, reason = measured(table.gauc)
        classes = class_table(tables, DEVELOPMENT, segment, table)
        by_segment = {"by_segment": [int(v) for v in classes.facilities]}
        n = float(table.closed.sum())
        figures.append(_record("backtest_n", n, None, by_segment, "", segment, BASELINE))
        value = gauc.gauc if gauc else None
        params = {"se": gauc.se} if gauc else {}
        figures.append(_record("gauc", value, reason, params, "", segment, BASELINE))
    return figures
