"""Rating migrations: each obligor's grade now against its grade one horizon earlier.

Counted where the loans live (:mod:`riskmon.collect.migration`) when ``rating.migration`` is on:
for every obligor scored in the current window, or one horizon (``rating.horizon``, default the
performance window) before it, its grade at both ends. The grades are the rating family's
(calibration's master scale or grade column, else the score's baseline bins), best first.

The matrix (per segment, whole population first) has the K grades as rows (start) and columns
(end), plus margins: a row for obligors without a grade at the start and one for those that
*appeared*; columns for *no grade* at the end, *left* (not scored now) and *defaulted* (the start
row's label is 1). Obligors with duplicate rows on their latest score date, and rows without an
obligor, are counted apart (whole population).

Figures (current population, per segment), on the K × K graded part:

- ``migration_rerated``: obligors graded at both ends (a count);
- ``migration_mwb_upper`` and ``migration_mwb_lower``: the ECB's matrix weighted bandwidth of
  downgrades and upgrades (the baseline's in the params: the same matrix over the last stability
  window of the baseline, one horizon back);
- ``migration_within_one``: the share of obligors that kept their grade or moved one grade;
- ``migration_stability_p``: the ECB stability test read the way a warning needs it — each cell
  two or more grades off the diagonal tested for holding *more* obligors than its neighbour
  nearer the diagonal (p = Φ(z), the test's 1 − p); the smallest such p, Bonferroni-adjusted for
  the cells tested, with every cell in the params;
- with a weight, ``migration_mwb_upper_exposure`` and ``migration_mwb_lower_exposure``.

Frozen with a baseline (population ``baseline``, per segment): ``migration_rerated`` and the
bandwidths (with a weight, by exposure too) of the migrations into the baseline's last stability
window, which a run's bandwidths are compared with.

Rules (whole population; NOT_EVALUABLE when fewer than ``rating.min_rerated`` obligors were
re-rated): ``migration_bandwidth`` — the larger relative change of the two MWBs against the
baseline's, levels ``thresholds.migration_bandwidth``; ``migration_stability`` — p-value levels
``thresholds.migration_stability`` on ``migration_stability_p``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.charts import Chart, HeatMap, heat_map, trend_chart
from riskmon.config import PValueLevels
from riskmon.figures._family import (
    Family,
    FigureSpec,
    HistoryColumn,
    Judge,
    Rule,
    Section,
    amber_red,
    band_levels,
    banded,
    describe_p,
    p_levels,
    p_status,
)
from riskmon.figures._formulas import MIGRATION_FORMULAS
from riskmon.figures._migration_figures import (
    COLUMN_MARGINS,
    ROW_MARGINS,
    adjusted_p,
    compute,
    freeze,
)
from riskmon.figures._views import RunView
from riskmon.records import (
    BASELINE,
    CURRENT,
    MIGRATION,
    FigureRecord,
    Status,
)

# --------------------------------------------------------------------------- rules


def _not_enough(judge: Judge, rule: str, levels: dict[str, Any]) -> bool:
    """NOT_EVALUABLE (and True) when too few obligors were re-rated, now or at the baseline."""
    n = judge.figures.get("migration_rerated", CURRENT)
    if n is None:
        return True  # the model counts no migrations
    least = int(n.params.get("min_rerated", 1))
    count = int(n.value or 0)
    reason = None
    if count < least:
        reason = (
            f"only {count} obligors graded at both ends of the {n.params.get('horizon')} horizon "
            f"(rating.min_rerated: {least})"
        )
    if reason is not None:
        judge.add(rule, Status.NOT_EVALUABLE, None, levels, reason)
        return True
    return False


def _judge_bandwidth(judge: Judge, _: str) -> None:
    levels = amber_red(judge.thresholds.migration_bandwidth)
    if _not_enough(judge, "migration_bandwidth", levels):
        return
    n = judge.figures.get("migration_rerated", CURRENT)
    assert n is not None
    base_n = n.params.get("baseline_rerated")
    least = int(n.params.get("min_rerated", 1))
    if base_n is None or base_n < least:
        reason = n.params.get("baseline_reason") or (
            f"only {int(base_n or 0)} obligors graded at both ends at the baseline "
            f"(rating.min_rerated: {least})"
        )
        judge.add("migration_bandwidth", Status.NOT_EVALUABLE, None, levels, reason)
        return
    changes: list[tuple[float, str, float, float]] = []
    for side, word in (("upper", "downgrades"), ("lower", "upgrades")):
        f = judge.figures.get(f"migration_mwb_{side}", CURRENT)
        now, before = (f.value, f.params.get("baseline")) if f is not None else (None, None)
        if now is None or before is None or before <= 0:
            continue
        changes.append((abs(now - before) / before, word, now, before))
    if not changes:
        reason = "the matrix weighted bandwidth is not defined now or at the baseline"
        judge.add("migration_bandwidth", Status.NOT_EVALUABLE, None, levels, reason)
        return
    change, word, now, before = max(changes)
    band = judge.thresholds.migration_bandwidth
    message = (
        f"matrix weighted bandwidth of {word} {now:.4f} against the baseline's {before:.4f} "
        f"({(now - before) / before:+.0%})"
    )
    judge.add("migration_bandwidth", banded(change, band.amber, band.red), change, levels, message)


def _judge_stability(judge: Judge, _: str) -> None:
    levels = p_levels(judge.thresholds.migration_stability)
    if _not_enough(judge, "migration_stability", levels):
        return
    p = judge.figures.get("migration_stability_p", CURRENT)
    if p is None or p.value is None:
        reason = (p.reason if p is not None else None) or "no cell could be tested"
        judge.add("migration_stability", Status.NOT_EVALUABLE, None, levels, reason)
        return
    status = p_status(p.value, judge.thresholds.migration_stability)
    cells = p.params.get("cells", [])
    worst = min(cells, key=lambda c: c["p"]) if cells else None
    message = f"stability test of the migration matrix: adjusted p = {p.value:.3g}"
    if worst is not None:
        message += (
            f" (least stable cell: grade {worst['from']} → {worst['to']}, z = {worst['z']:.2f} "
            f"against its neighbour nearer the diagonal; {len(cells)} cells tested)"
        )
    judge.add("migration_stability", status, p.value, levels, message)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class MigrationSection:
    """The migration matrix now, its bandwidths and stability, and their trends."""

    grades: str
    horizon: str
    rerated: FigureRecord
    upper: FigureRecord | None
    lower: FigureRecord | None
    upper_exposure: FigureRecord | None
    lower_exposure: FigureRecord | None
    within_one: FigureRecord | None
    within_one_exposure: FigureRecord | None
    stability: FigureRecord | None
    #: the cells whose adjusted p is below ``flag_level`` (each with its ``p_adjusted``)
    flagged: list[dict[str, Any]]
    flag_level: float
    bandwidth_status: str | None
    stability_status: str | None
    heat: HeatMap
    trend: Chart


def _flagged(run: RunView, stability: FigureRecord | None) -> tuple[float, list[dict[str, Any]]]:
    """The level cells are flagged at (the ``migration_stability`` rule's AMBER level, as its
    alert stored it) and the cells whose adjusted p, the p the rule judges, is below it, each
    with its ``p_adjusted``."""
    alert = run.alerts.get("migration_stability")
    level = float(
        (alert.thresholds.get("amber") if alert is not None else None) or PValueLevels().amber
    )
    cells = stability.params.get("cells", []) if stability else []
    adjusted = [{**c, "p_adjusted": adjusted_p(c["p"], len(cells))} for c in cells]
    return level, [c for c in adjusted if c["p_adjusted"] < level]


def section(run: RunView) -> MigrationSection | None:
    f = run.figures
    rerated = f.get("migration_rerated", CURRENT)
    if rerated is None:
        return None
    labels = [str(x) for x in rerated.params.get("labels", [])]
    k = len(labels)
    counts = np.zeros((k + len(ROW_MARGINS), k + len(COLUMN_MARGINS)))
    for b in run.bins.get(CURRENT, MIGRATION):
        counts[int(b.extra["row"]), int(b.extra["col"])] = b.n_total
    stability = f.get("migration_stability_p", CURRENT)
    level, flagged = _flagged(run, stability)
    n_tested = len(stability.params.get("cells", [])) if stability else 0
    upper_series, _ = run.history.series("migration_mwb_upper", CURRENT)
    trend = trend_chart(
        "Matrix weighted bandwidth over time (upper: downgrades)",
        upper_series,
        y_label="MWB",
        digits=4,
    )
    return MigrationSection(
        grades=str(rerated.params.get("grades", "")),
        horizon=str(rerated.params.get("horizon", "")),
        rerated=rerated,
        upper=f.get("migration_mwb_upper", CURRENT),
        lower=f.get("migration_mwb_lower", CURRENT),
        upper_exposure=f.get("migration_mwb_upper_exposure", CURRENT),
        lower_exposure=f.get("migration_mwb_lower_exposure", CURRENT),
        within_one=f.get("migration_within_one", CURRENT),
        within_one_exposure=f.get("migration_within_one_exposure", CURRENT),
        stability=stability,
        flagged=flagged,
        flag_level=level,
        bandwidth_status=run.alerts.status("migration_bandwidth"),
        stability_status=run.alerts.status("migration_stability"),
        heat=heat_map(
            f"Migrations over {rerated.params.get('horizon', 'the horizon')}, grade then → now",
            counts.tolist(),
            row_labels=[*(str(i + 1) for i in range(k)), *ROW_MARGINS],
            column_labels=[*(str(i + 1) for i in range(k)), "none", "left", "def."],
            grades=k,
            flagged=[(c["from"] - 1, c["to"] - 1) for c in flagged],
            legend=(
                f"Outlined: a cell whose adjusted p (Bonferroni over the {n_tested} cells "
                f"tested) is below {level:g}, the migration_stability rule's AMBER level"
                if n_tested
                else ""
            ),
        ),
        trend=trend,
    )


FAMILY = Family(
    name="migration",
    order=60,
    figures=(
        FigureSpec("migration_rerated", CURRENT, "segment", "Obligors re-rated", count=True),
        FigureSpec("migration_mwb_upper", CURRENT, "segment", "MWB of downgrades"),
        FigureSpec("migration_mwb_lower", CURRENT, "segment", "MWB of upgrades"),
        FigureSpec(
            "migration_mwb_upper_exposure", CURRENT, "segment", "MWB of downgrades, by exposure"
        ),
        FigureSpec(
            "migration_mwb_lower_exposure", CURRENT, "segment", "MWB of upgrades, by exposure"
        ),
        FigureSpec("migration_within_one", CURRENT, "segment", "Share within one grade"),
        FigureSpec(
            "migration_within_one_exposure", CURRENT, "segment", "Share within one grade, exposure"
        ),
        FigureSpec("migration_stability_p", CURRENT, "segment", "Migration stability test p"),
        FigureSpec("migration_rerated", BASELINE, "segment", "Obligors re-rated", count=True),
        FigureSpec("migration_mwb_upper", BASELINE, "segment", "MWB of downgrades"),
        FigureSpec("migration_mwb_lower", BASELINE, "segment", "MWB of upgrades"),
        FigureSpec(
            "migration_mwb_upper_exposure", BASELINE, "segment", "MWB of downgrades, by exposure"
        ),
        FigureSpec(
            "migration_mwb_lower_exposure", BASELINE, "segment", "MWB of upgrades, by exposure"
        ),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            "migration_bandwidth",
            "run",
            "migration matrix weighted bandwidth against the baseline's",
            lambda t: amber_red(t.migration_bandwidth),
            band_levels,
            _judge_bandwidth,
            baseline=("migration_rerated", "migration_mwb_upper", "migration_mwb_lower"),
            finding="Obligors change grade more (or less) than they did at the baseline",
            worse="higher",
        ),
        Rule(
            "migration_stability",
            "run",
            "migration cells holding more than their neighbour nearer the diagonal",
            lambda t: p_levels(t.migration_stability),
            describe_p,
            _judge_stability,
            tested="p",
            finding=(
                "Grade migrations do not fall away from the diagonal: cells hold more obligors "
                "than their neighbour nearer it"
            ),
        ),
    ),
    sections=(Section("migration", "Migrations", "migration", 39, "_migration.html", section),),
    history=(HistoryColumn(26, "migration_mwb_upper", "", CURRENT),),
    formulas=MIGRATION_FORMULAS,
)
