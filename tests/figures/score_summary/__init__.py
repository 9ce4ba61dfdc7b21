"""An example figure family kept outside riskmon, written against riskmon's public catalog API
only: the mean and standard deviation of the score in the current population, against the
baseline's, with an AMBER rule, a report section, a summary line and a history column.

``tests/figures/test_example_family.py`` adds it to the catalog, freezes a baseline, runs,
renders and reads the history, so that docs/ARCHITECTURE.md's walk-through stays true.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from riskmon.config import Thresholds
from riskmon.figures import (
    Family,
    FigureSpec,
    Formula,
    Headline,
    HistoryColumn,
    Judge,
    Rule,
    RunTables,
    RunView,
    Section,
)
from riskmon.records import BASELINE, CURRENT, SCORE, BinRecord, FigureRecord, Status

RULE = "score_shift"
#: the rule's default level: the mean moved by half a baseline standard deviation
DEFAULT_LEVELS = {"amber": 0.5}


def _moments(tables: RunTables, population: str, segment: str) -> tuple[float, float] | None:
    """The mean and standard deviation of the score over a population's ranking table."""
    scores, _ = tables.ranking(population, segment)
    total = np.asarray(scores.total, dtype=float)
    if scores.values is None or total.sum() <= 0:
        return None
    values = np.asarray(scores.values, dtype=float)
    mean = float(np.average(values, weights=total))
    return mean, math.sqrt(float(np.average((values - mean) ** 2, weights=total)))


def _figures(tables: RunTables, read: str, stored: str) -> list[FigureRecord]:
    out = []
    for segment in tables.segments():
        found = _moments(tables, read, segment) if tables.has(read, SCORE, segment) else None
        reason = None if found is not None else "no scored loans"
        for name, value in zip(("score_mean", "score_sd"), found or (None, None), strict=True):
            out.append(FigureRecord(name, value, stored, segment=segment, reason=reason))
    return out


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    return _figures(tables, CURRENT, CURRENT), []


def freeze(tables: RunTables) -> list[FigureRecord]:
    """The baseline's mean and spread, over every loan of the development window."""
    return _figures(tables, BASELINE, BASELINE)


def levels(thresholds: Thresholds) -> dict[str, float]:
    """The rule's levels: its defaults, as ``thresholds.rules.score_shift`` may set them."""
    return thresholds.levels_of(RULE, dict(DEFAULT_LEVELS))


def judge(judge: Judge, segment: str) -> None:
    now = judge.figures.get("score_mean", CURRENT, segment=segment)
    base_mean = judge.baseline.figure("score_mean", segment=segment)
    base_sd = judge.baseline.figure("score_sd", segment=segment)
    chosen = levels(judge.thresholds)
    values = [f.value if f is not None else None for f in (now, base_mean, base_sd)]
    if values[0] is None or values[1] is None or not values[2]:
        message = "not evaluable: no score mean now or no baseline spread"
        judge.add(RULE, Status.NOT_EVALUABLE, None, chosen, message, segment=segment)
        return
    shift = abs(values[0] - values[1]) / values[2]
    status = Status.AMBER if shift >= chosen["amber"] else Status.GREEN
    message = f"score mean moved by {shift:.2f} baseline standard deviations"
    judge.add(RULE, status, shift, chosen, message, segment=segment)


@dataclass(frozen=True)
class ScoreSummary:
    mean: float | None
    sd: float | None
    base_mean: float | None
    base_sd: float | None
    status: str | None


def section(run: RunView) -> ScoreSummary | None:
    mean = run.figures.value("score_mean", CURRENT)
    if mean is None and run.figures.get("score_mean", CURRENT) is None:
        return None
    base_mean, base_sd = run.base("score_mean"), run.base("score_sd")
    return ScoreSummary(
        mean=mean,
        sd=run.figures.value("score_sd", CURRENT),
        base_mean=base_mean.value if base_mean else None,
        base_sd=base_sd.value if base_sd else None,
        status=run.alerts.status(RULE),
    )


FAMILY = Family(
    name="score_summary",
    order=1000,
    figures=(
        FigureSpec("score_mean", CURRENT, "segment", "mean score"),
        FigureSpec("score_sd", CURRENT, "segment", "score standard deviation"),
        FigureSpec("score_mean", BASELINE, "segment", "baseline mean score"),
        FigureSpec("score_sd", BASELINE, "segment", "baseline score standard deviation"),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            RULE,
            "segment",
            "score mean against the baseline",
            levels,
            lambda chosen: f"amber ≥ {chosen['amber']:g} baseline standard deviations",
            judge,
            baseline=("score_mean", "score_sd"),
            finding="The mean score has moved from the baseline's",
            worse="higher",
        ),
    ),
    sections=(
        Section(
            "score_summary", "Score summary", "score-summary", 1000, "_score_summary.html", section
        ),
    ),
    headlines=(Headline(1000, "score_mean", "Mean score", "score_mean", CURRENT, rule=RULE),),
    history=(HistoryColumn(1000, "score_mean", "", CURRENT),),
    templates=Path(__file__).parent / "templates",
    formulas=(
        Formula(
            1000,
            "Score mean shift",
            "|mean now − mean<sub>baseline</sub>| / sd<sub>baseline</sub>, in baseline "
            "standard deviations",
        ),
    ),
)
