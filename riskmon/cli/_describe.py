"""What ``riskmon config check`` says of a model: every setting that changes what its runs
compute or judge, one line per concern."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from riskmon.config import Calibration, ModelConfig


def _calibration(calibration: Calibration) -> str:
    """Whether calibration is on, where the PD comes from, and the grades."""
    from riskmon.config import GradeColumn

    if calibration.enabled is False:
        return "off (calibration.enabled: false)"
    if calibration.points_to_pd is not None:
        p = calibration.points_to_pd
        pd = (
            f"PD from points ({p.points:g} points at {p.odds:g}:1 odds, {p.pdo:g} points to double)"
        )
    elif calibration.pd is not None:
        pd = f"PD column {calibration.pd}"
    else:
        pd = "PD the score"
    grades = calibration.grades
    if isinstance(grades, GradeColumn):
        shown = f"grade column {grades.column} (order {', '.join(grades.order)})"
    elif grades is not None:
        shown = f"master scale, PD upper edges {', '.join(f'{g:g}' for g in grades)}"
    else:
        shown = "the score's baseline bins"
    on = (
        "on"
        if calibration.enabled or calibration.pd is not None or calibration.points_to_pd
        else "on when the score is a PD"
    )
    return (
        f"{on}; {pd}; grades: {shown}; default correlation {calibration.default_correlation:g}, "
        f"confidence {calibration.confidence:g}"
    )


def _cutoff(calibration: Calibration) -> str:
    if calibration.cutoff is None:
        return "none"
    costs = calibration.costs
    priced = (
        f" (costs: a bad accepted {costs.false_accept:g}, a good declined {costs.false_decline:g})"
        if costs is not None
        else ""
    )
    return f"{calibration.cutoff:g}{priced}"


def _migration(model: ModelConfig) -> str:
    rating = model.rating
    if not rating.migration:
        return "off"
    return f"on, over {model.migration_horizon}, judged from {rating.min_rerated} re-rated obligors"


def model_lines(model: ModelConfig) -> list[str]:
    """The lines ``config check`` prints under ``model NAME:``."""
    columns = model.columns
    segments = ", ".join(columns.segments) or "none"
    challengers = (
        ", ".join(
            c.label + (f" (column {c.column})" if c.column != c.label else "")
            for c in model.challengers
        )
        or "none"
    )
    t = model.thresholds
    return [
        f"  score: {columns.score} ({model.score_direction}), label: {columns.label}, "
        f"weight: {columns.weight or 'none'}, segments: {segments}",
        f"  characteristics: {len(model.characteristics)}; "
        f"baseline {model.baseline.start} to {model.baseline.end}; "
        f"stability window {model.stability_window}, "
        f"performance window {model.performance_window}",
        f"  challengers: {challengers}",
        f"  calibration: {_calibration(model.calibration)}",
        f"  cut-off: {_cutoff(model.calibration)}",
        f"  rating migration: {_migration(model)}",
        f"  thresholds: KS {t.ks[0]}-{t.ks[1]}, PSI {t.psi.amber}/{t.psi.red}, "
        f"CSI {t.csi.amber}/{t.csi.red}; consecutive: {t.consecutive} (RED runs in a row "
        f"before an alert is RED); schedule: {model.schedule or 'on demand'}",
    ]
