"""The early-warning family's figures: what the PDs imply for a population whose outcome has
not matured (the current population), the same recomputed for the performance cohort now that
it has, and the cohort's realised AUC against it — all from the PD sums of the grades the
collect pass already returns (:class:`~riskmon.metrics.PdTable`); nothing here reads a loan.

The bins (grades, or the score's bins when no grades are configured) are ranked by their mean
PD, the loans of a bin tied: the expected AUC is the AUC the PDs' own ranking should reach on
those bins, and the realised AUC it is compared with is counted on the same bins, so that the
bins' ties lower both alike. Loans count as rows (a weight does not enter these figures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.figures._family import finite, measured
from riskmon.figures._views import RunTables
from riskmon.metrics import (
    EXACT_MAX_LOANS,
    CountTable,
    ExpectedPerformance,
    PdTable,
    expected_performance_from_sums,
    roc_auc_from_counts,
)
from riskmon.records import BASELINE, CURRENT, DEVELOPMENT, PERFORMANCE, FigureRecord

#: the figures of a population's expected performance, in the order they are stored
EXPECTED = (
    "expected_default_rate",
    "expected_defaults",
    "expected_defaults_sd",
    "expected_auc",
    "expected_ks",
    "expected_gini",
)
#: the realised AUC on the PD-ranked bins, frozen with the baseline beside its expected AUC
PD_BINS_AUC = "pd_bins_auc"


@dataclass(frozen=True)
class Ranked:
    """A population's non-empty bins, lowest mean PD first."""

    n: np.ndarray
    defaults: np.ndarray
    p: np.ndarray
    p2: np.ndarray


def ranked(grades: PdTable) -> Ranked:
    held = np.flatnonzero(grades.n > 0)
    order = held[np.argsort(grades.p[held] / grades.n[held], kind="stable")]
    return Ranked(grades.n[order], grades.d[order], grades.p[order], grades.p2[order])


def _values(result: ExpectedPerformance) -> dict[str, float]:
    return {
        "expected_default_rate": result.default_rate,
        "expected_defaults": result.defaults,
        "expected_defaults_sd": result.defaults_sd,
        "expected_auc": result.auc,
        "expected_ks": result.ks,
        "expected_gini": result.gini,
    }


def expected_figures(
    tables: RunTables, population: str, segment: str, *, store_as: str | None = None
) -> list[FigureRecord]:
    """The expected figures of one population and segment (stored under ``store_as``)."""
    grades = tables.pd_table(population, segment)
    if grades is None:
        return []
    stored = store_as or population
    reason = tables.pd_problem or (None if grades.n.sum() > 0 else "no loans in the population")
    if reason is not None:
        return [
            FigureRecord(name, None, stored, segment=segment, reason=reason) for name in EXPECTED
        ]
    r = ranked(grades)
    confidence = tables.model.calibration.confidence
    result, why = measured(
        lambda: expected_performance_from_sums(r.n, r.p, r.p2, confidence=confidence)
    )
    values = _values(result)
    window = tables.window(population)
    interval = {
        "interval_low": result.interval[0],
        "interval_high": result.interval[1],
        "interval_method": result.interval_method,
        "exact_max_loans": EXACT_MAX_LOANS,
        "confidence": confidence,
        "n": result.n,
        "bins": len(r.n),
        "window": None if window is None else str(window),
    }
    if population == PERFORMANCE:  # the report moves the cohort's figures to its own date
        interval["performance_window"] = tables.model.performance_window.model_dump()
    out = []
    for name in EXPECTED:
        value = finite(values[name])
        params = interval if name in ("expected_defaults", "expected_default_rate") else {}
        out.append(
            FigureRecord(
                name,
                value,
                stored,
                segment=segment,
                reason=None if value is not None else why,
                params=dict(params),
            )
        )
    return out


def realised_auc(r: Ranked, confidence: float) -> tuple[float, float] | None:
    """The AUC of the realised defaults on the PD-ranked bins, and its DeLong standard error;
    None without a default or a survivor."""
    k = len(r.n)
    if k == 0 or r.defaults.sum() <= 0 or r.defaults.sum() >= r.n.sum():
        return None
    table = CountTable(
        labels=[str(i) for i in range(k)],
        total=r.n.astype(np.float64),
        n_total=r.n.astype(np.int64),
        bads=r.defaults.astype(np.float64),
        n_bads=r.defaults.astype(np.int64),
        values=np.arange(k, dtype=np.float64),
    )
    result, _ = measured(lambda: roc_auc_from_counts(table, confidence_level=confidence))
    if result is None or not math.isfinite(result.std_error):
        return None
    return float(result.auc), float(result.std_error)


def freeze(tables: RunTables) -> list[FigureRecord]:
    """The development loans' expected AUC and their realised AUC on the same bins."""
    out: list[FigureRecord] = []
    for segment in tables.segments():
        grades = tables.pd_table(DEVELOPMENT, segment)
        if grades is None or tables.pd_problem is not None:
            continue
        expected = expected_figures(tables, DEVELOPMENT, segment, store_as=BASELINE)
        out += [f for f in expected if f.name == "expected_auc"]
        realised = realised_auc(ranked(grades), tables.model.calibration.confidence)
        out.append(
            FigureRecord(
                PD_BINS_AUC,
                None if realised is None else realised[0],
                BASELINE,
                segment=segment,
                reason="no default or no survivor" if realised is None else None,
                params={} if realised is None else {"standard_error": realised[1]},
            )
        )
    return out


def _p_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2))


def against_expected(tables: RunTables, segment: str) -> list[FigureRecord]:
    """The cohort's realised AUC on its PD-ranked bins against its expected AUC, and the
    change since the baseline split into the part its population explains and the rest."""
    grades = tables.pd_table(PERFORMANCE, segment)
    if grades is None or tables.pd_problem is not None or grades.n.sum() <= 0:
        return []
    r = ranked(grades)
    confidence = tables.model.calibration.confidence
    expected, _ = measured(lambda: expected_performance_from_sums(r.n, r.p, r.p2).auc)
    realised = realised_auc(r, confidence)
    if realised is None or expected is None:
        reason = (
            "no default or no survivor in the cohort" if realised is None else "no expected AUC"
        )
        return [
            FigureRecord(name, None, PERFORMANCE, segment=segment, reason=reason)
            for name in ("auc_vs_expected", "auc_change_unexplained")
        ]
    auc, se = realised
    z = (auc - expected) / se if se > 0 else math.nan
    out = [
        FigureRecord(
            "auc_vs_expected",
            auc - expected,
            PERFORMANCE,
            segment=segment,
            params={"realised": auc, "expected": expected, "standard_error": se}
            | ({"z": z, "p": _p_two_sided(z)} if math.isfinite(z) else {}),
        )
    ]
    out.append(_unexplained(tables, segment, auc, se, float(expected)))
    return out


def _unexplained(
    tables: RunTables, segment: str, auc: float, se: float, expected: float
) -> FigureRecord:
    base = tables.baseline
    base_expected = base.figure("expected_auc", segment=segment)
    base_auc = base.figure(PD_BINS_AUC, segment=segment)
    if base_expected is None or base_auc is None or None in (base_expected.value, base_auc.value):
        return FigureRecord(
            "auc_change_unexplained",
            None,
            PERFORMANCE,
            segment=segment,
            reason="the baseline has no expected and realised AUC on its PD bins"
            + (" for this segment" if segment else ""),
        )
    explained = expected - float(base_expected.value or 0.0)
    change = auc - float(base_auc.value or 0.0)
    unexplained = change - explained
    base_se = float(base_auc.params.get("standard_error", 0.0))
    joint = math.sqrt(se**2 + base_se**2)
    z = unexplained / joint if joint > 0 else math.nan
    params: dict[str, Any] = {
        "change": change,
        "explained": explained,
        "realised": auc,
        "expected": expected,
        "baseline_realised": base_auc.value,
        "baseline_expected": base_expected.value,
        "standard_error": joint,
    }
    if math.isfinite(z):
        params |= {"z": z, "p": _p_two_sided(z)}
    return FigureRecord(
        "auc_change_unexplained", unexplained, PERFORMANCE, segment=segment, params=params
    )


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[Any]]:
    """Expected figures of the current population and the performance cohort per segment,
    and the cohort's realised AUC against them; nothing when the model has no PD."""
    figures: list[FigureRecord] = []
    for segment in tables.segments():
        figures += expected_figures(tables, CURRENT, segment)
        figures += expected_figures(tables, PERFORMANCE, segment)
        figures += against_expected(tables, segment)
    return figures, []
