"""Characteristic analysis (Siddiqi, *Credit Risk Scorecards*, 2006, ch. 9): which of a
scorecard's characteristics moved its mean score since the baseline, and by how many points.

For a characteristic whose attributes carry points in the configuration (``bins`` with
``points``, ``attributes``, ``missing_points``, ``special``), per attribute a the baseline's
share e_a, the current share a_a and the contribution (a_a − e_a)·P_a; the characteristic's
index, ``points_shift`` (per characteristic, its ``variable``), is their sum: the shift of the
mean score that the characteristic causes. ``score_mean_shift`` is the observed shift of the
mean score (current population against the baseline's loans), with the sum of the
characteristics' indexes beside it and the difference; the difference is zero only when the
score is the sum of the configured points (plus a constant).

Rule ``points_shift``: AMBER when a characteristic's |points_shift| reaches
``thresholds.rules.points_shift.amber`` points (default 5), RED at ``red`` (default 10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.config import Characteristic, ModelConfig, Thresholds
from riskmon.figure_table import Figures
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Formula,
    Headline,
    Judge,
    Rule,
    Section,
    band_levels,
    banded,
    finite,
)
from riskmon.figures._views import BaselineView, RunTables, RunView
from riskmon.metrics import Binning, CountTable
from riskmon.records import BASELINE, CURRENT, BinRecord, FigureRecord, Status

RULE = "points_shift"
#: the rule's default levels, in points of the score
DEFAULT_LEVELS = {"amber": 5.0, "red": 10.0}


def configured_binning(characteristic: Characteristic) -> Binning:
    """The binning of a characteristic's configured attributes, as the baseline freezes it."""
    if characteristic.kind == "numeric":
        special = tuple(float(v) for v in characteristic.special_values)
        return Binning("numeric", edges=characteristic.edges, special=special)
    return Binning(
        "categorical",
        levels=characteristic.level_groups,
        other=True,
        special=tuple(str(v) for v in characteristic.special_values),
    )


def scored(model: ModelConfig) -> list[Characteristic]:
    """The characteristics whose attributes carry points."""
    return [c for c in model.characteristics if c.explicit and c.has_points]


def _shares(table: CountTable) -> np.ndarray | None:
    total = np.asarray(table.total, dtype=np.float64)
    grand = float(total.sum())
    return total / grand if grand > 0 else None


def _analysis(
    characteristic: Characteristic, baseline: BaselineView, actual: CountTable
) -> FigureRecord:
    name = characteristic.name

    def unavailable(reason: str) -> FigureRecord:
        return FigureRecord(RULE, None, CURRENT, variable=name, reason=reason)

    if baseline.binning(name) != configured_binning(characteristic):
        return unavailable(
            f"baseline version {baseline.version} froze other bins for {name} than its "
            f"configured attributes: freeze a new baseline"
        )
    expected, current = _shares(baseline.table(name)), _shares(actual)
    if expected is None or current is None:
        return unavailable("no loans in the baseline or the current population")
    points = characteristic.attribute_points()
    rows: list[dict[str, Any]] = []
    shift = 0.0
    unpointed: list[str] = []
    for i, label in enumerate(actual.labels):
        p = points[i]
        moved = float(current[i] - expected[i])
        contribution = None if p is None else moved * p
        if p is None and (current[i] > 0 or expected[i] > 0):
            unpointed.append(label)
        shift += contribution or 0.0
        row = {"label": label, "points": p, "expected": float(expected[i])}
        rows.append(row | {"actual": float(current[i]), "contribution": contribution})
    params: dict[str, Any] = {"attributes": rows}
    if unpointed:
        reason = f"loans in attributes without points: {', '.join(unpointed)}"
        return FigureRecord(RULE, None, CURRENT, variable=name, reason=reason, params=params)
    return FigureRecord(RULE, shift, CURRENT, variable=name, params=params)


def _mean_score(tables: RunTables, population: str) -> float | None:
    scores, _ = tables.ranking(population)
    total = np.asarray(scores.total, dtype=np.float64)
    if scores.values is None or total.sum() <= 0:
        return None
    return float(np.average(np.asarray(scores.values, dtype=np.float64), weights=total))


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """Each scored characteristic's ``points_shift`` and the observed ``score_mean_shift``."""
    chosen = scored(tables.model)
    if not chosen:
        return [], []
    figures = [_analysis(c, tables.baseline, tables.table(CURRENT, c.name)) for c in chosen]
    now = _mean_score(tables, CURRENT) if tables.has(CURRENT, "score") else None
    base = tables.baseline.figure("mean_score")
    before = base.value if base is not None else None
    shifts = [f.value for f in figures]
    params: dict[str, Any] = {"current_mean": now, "baseline_mean": before}
    if all(s is not None for s in shifts):
        params["explained"] = float(sum(s for s in shifts if s is not None))
    if now is None or before is None:
        reason = "no mean score in the current population or the baseline"
        figures.append(
            FigureRecord("score_mean_shift", None, CURRENT, reason=reason, params=params)
        )
        return figures, []
    observed = now - before
    if "explained" in params:
        params["unexplained"] = observed - params["explained"]
    figures.append(FigureRecord("score_mean_shift", observed, CURRENT, params=params))
    return figures, []


def freeze(tables: RunTables) -> list[FigureRecord]:
    """The mean score of the baseline's loans (every loan of the development window)."""
    if not scored(tables.model):
        return []
    mean = _mean_score(tables, BASELINE)
    reason = None if mean is not None else "no scored loans"
    return [FigureRecord("mean_score", mean, BASELINE, reason=reason)]


# --------------------------------------------------------------------------- rule


def levels(thresholds: Thresholds) -> dict[str, float]:
    """The rule's levels in points: its defaults, as ``thresholds.rules.points_shift`` sets."""
    return thresholds.levels_of(RULE, dict(DEFAULT_LEVELS))


def _judge(judge: Judge, variable: str) -> None:
    figure = judge.figures.get(RULE, CURRENT, variable)
    if figure is None:
        return  # a characteristic without points is not analysed
    chosen = levels(judge.thresholds)
    if figure.value is None:
        message = figure.reason or "points shift not available"
        judge.add(RULE, Status.NOT_EVALUABLE, None, chosen, message, variable)
        return
    size = abs(figure.value)
    status = banded(size, chosen["amber"], chosen["red"])
    message = f"{variable} moved the mean score by {figure.value:+.2f} points"
    judge.add(RULE, status, size, chosen, message, variable)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class AttributeRow:
    """One attribute of a characteristic in the characteristic analysis."""

    label: str
    points: float | None
    expected: float | None
    actual: float | None
    contribution: float | None


@dataclass(frozen=True)
class CharacteristicShift:
    """One characteristic's index and its attributes."""

    name: str
    shift: float | None
    reason: str | None
    status: str | None
    rows: tuple[AttributeRow, ...]


@dataclass(frozen=True)
class CharacteristicAnalysis:
    """The section: characteristics by |shift|, and the sum beside the observed shift."""

    characteristics: tuple[CharacteristicShift, ...]
    observed: float | None
    observed_reason: str | None
    explained: float | None
    unexplained: float | None
    current_mean: float | None
    baseline_mean: float | None


def _rows(params: dict[str, Any]) -> tuple[AttributeRow, ...]:
    return tuple(
        AttributeRow(r["label"], r["points"], r["expected"], r["actual"], r["contribution"])
        for r in params.get("attributes", ())
    )


def section(run: RunView) -> CharacteristicAnalysis | None:
    names = run.figures.variables(RULE)
    if not names:
        return None
    out = []
    for name in names:
        figure = run.figures.get(RULE, CURRENT, name)
        assert figure is not None
        out.append(
            CharacteristicShift(
                name,
                figure.value,
                figure.reason,
                run.alerts.status(RULE, name),
                _rows(figure.params),
            )
        )
    out.sort(key=lambda c: (c.shift is None, -abs(c.shift or 0.0), c.name))
    total = run.figures.get("score_mean_shift", CURRENT)
    params = total.params if total is not None else {}
    return CharacteristicAnalysis(
        tuple(out),
        total.value if total is not None else None,
        total.reason if total is not None else "not computed in this run",
        finite(params.get("explained")),
        finite(params.get("unexplained")),
        finite(params.get("current_mean")),
        finite(params.get("baseline_mean")),
    )


def _top_mover(figures: Figures) -> tuple[str, str] | None:
    """The summary's line of the characteristic that moved the mean score most."""
    known = [
        f
        for f in (figures.get(RULE, CURRENT, v) for v in figures.variables(RULE))
        if f is not None and f.value is not None
    ]
    if not known:
        return None
    top = max(known, key=lambda f: abs(f.value or 0.0))
    return f"Largest points shift ({top.variable})", top.variable


FORMULAS: Sequence[Formula] = (
    Formula(
        65,
        "Characteristic analysis",
        (
            "points shift of a characteristic = Σ<sub>a</sub> (a<sub>a</sub> − e<sub>a</sub>) · "
            "P<sub>a</sub> over its configured attributes a with points P<sub>a</sub>, e the "
            "baseline's and a the current shares: the shift of the mean score it causes "
            "(Siddiqi, 2006, ch. 9). Their sum equals the observed shift of the mean score only "
            "when the score is the sum of the configured points."
        ),
    ),
)

FAMILY = Family(
    name="scorecard",
    order=105,
    figures=(
        FigureSpec(RULE, CURRENT, "variable", "Points shift of a characteristic"),
        FigureSpec("score_mean_shift", CURRENT, "run", "Shift of the mean score"),
        FigureSpec("mean_score", BASELINE, "run", "Mean score of the baseline's loans"),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            RULE,
            "variable",
            "Points shift of each characteristic",
            levels,
            lambda chosen: band_levels(chosen) + " points (|shift|)",
            _judge,
            baseline=("mean_score",),
            finding="Characteristics have moved the mean score by many points",
            applies=lambda model: bool(scored(model)),
            worse="higher",
        ),
    ),
    sections=(
        Section(
            "scorecard",
            "Characteristic analysis",
            "characteristic-analysis",
            22,
            "_scorecard.html",
            section,
        ),
    ),
    headlines=(
        Headline(55, RULE, "", RULE, CURRENT, rule=RULE, with_baseline=False, choose=_top_mover),
    ),
    default_population={RULE: CURRENT, "score_mean_shift": CURRENT},
    formulas=tuple(FORMULAS),
)
