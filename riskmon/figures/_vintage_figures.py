"""The vintage family's figures: each vintage's cumulative default rate by months on book
(and ever 30+/60+/90+ days past due) against the curve its PDs imply, from the vintage
``GROUP BY`` of the collect pass (:class:`~riskmon.metrics.VintageTable`); the default
timing σ(m) it expects with is learnt from the development window's matured vintages and
frozen with the baseline."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from riskmon.figures._family import finite
from riskmon.figures._views import RunTables
from riskmon.metrics import VintageTable, default_timing, vintage_curve
from riskmon.records import ALL, BASELINE, CURRENT, FigureRecord

#: the baseline figure holding σ(m), m = 0..max_mob, in its params
DEFAULT_TIMING = "default_timing"


def _months(label: str) -> int:
    year, month = label.split("-")
    return int(year) * 12 + int(month) - 1


def freeze(tables: RunTables) -> list[FigureRecord]:
    """σ(m) of the development window's vintages (whole population: the timing of defaults is
    taken as common to every segment; a segment's own would be noisier)."""
    curves = tables.vintages(ALL)
    if curves is None:
        return []
    cumulative = curves.cumulative("default")
    sigma = default_timing(cumulative, curves.bads)
    known = bool(np.isfinite(sigma).all())
    return [
        FigureRecord(
            DEFAULT_TIMING,
            float(curves.bads.sum()) if known else None,
            BASELINE,
            reason=None if known else "no 12-month default among the development's vintages",
            params={
                "sigma": [float(s) for s in sigma] if known else None,
                "vintages": len(curves.vintages),
                "max_mob": curves.max_mob,
            },
        )
    ]


def _sigma(tables: RunTables) -> tuple[list[float] | None, str | None]:
    figure = tables.baseline.figure(DEFAULT_TIMING)
    if figure is None:
        return None, "the baseline learnt no default timing (frozen without columns.default_date)"
    sigma = figure.params.get("sigma")
    if sigma is None:
        return None, figure.reason or "the baseline learnt no default timing"
    return [float(s) for s in sigma], None


def _vintage(
    tables: RunTables,
    t: VintageTable,
    i: int,
    segment: str,
    sigma: list[float] | None,
    why: str | None,
) -> list[FigureRecord]:
    label = t.vintages[i]
    n = float(t.n[i])
    if n <= 0:
        return []
    as_of = tables.window("current")
    reached = t.max_mob if as_of is None else _months(as_of.end.isoformat()[:7]) - _months(label)
    reached = min(max(reached, 0), t.max_mob)
    observed = t.cumulative("default")[i][: reached + 1]
    params: dict[str, Any] = {
        "mob": reached,
        "n": n,
        "observed": [float(v / n) for v in observed],
    }
    for event in t.events:
        if event != "default":
            params[event] = [float(v / n) for v in t.cumulative(event)[i][: reached + 1]]
    if tables.model.columns.weight:
        weighted = t.cumulative("default", weighted=True)[i][: reached + 1]
        params["observed_weighted"] = [float(v / t.w[i]) for v in weighted]
    figures = [
        FigureRecord(
            "vintage_cdr",
            float(observed[-1] / n),
            CURRENT,
            variable=label,
            segment=segment,
            params=params,
        )
    ]
    judged = [m for m in tables.model.vintages.mobs if m <= reached]
    reason = why or (
        None if judged else f"MOB {reached}: no MOB of {tables.model.vintages.mobs} reached yet"
    )
    if reason is None and sigma is not None and t.p[i] > 0:
        curve = vintage_curve(n, float(t.p[i]), float(t.p2[i]), observed, sigma[: reached + 1])
        params["expected"] = [float(v) for v in curve.expected]
        params["z"] = [finite(float(z)) for z in curve.z]
        m = judged[-1]
        z, p = float(curve.z[m]), float(curve.p_value[m])
        test = {
            "mob": m,
            "z": z,
            "observed": float(curve.observed[m]),
            "expected": float(curve.expected[m]),
            "n": n,
        }
        if math.isfinite(p):
            figures.append(
                FigureRecord(
                    "vintage_defaults", p, CURRENT, variable=label, segment=segment, params=test
                )
            )
            return figures
        reason = "no default expected by then (σ(m)·ΣPD = 0)"
    reason = reason or "no PD to expect defaults from"
    figures.append(
        FigureRecord(
            "vintage_defaults", None, CURRENT, variable=label, segment=segment, reason=reason
        )
    )
    return figures


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[Any]]:
    """Each vintage's curve and its test at the latest configured MOB it has reached, per
    segment; nothing without ``columns.default_date``."""
    sigma, why = _sigma(tables)
    if tables.pd_problem is not None:
        why = tables.pd_problem
    figures: list[FigureRecord] = []
    for segment in tables.segments():
        t = tables.vintages(segment)
        if t is None:
            continue
        for i in range(len(t.vintages)):
            figures += _vintage(tables, t, i, segment, sigma, why)
    return figures, []
