"""The source columns a run of a model reads, each with the configuration key that names it."""

from __future__ import annotations

from dataclasses import dataclass

from riskmon.config import GradeColumn, ModelConfig


@dataclass(frozen=True)
class SourceColumn:
    """A column riskmon reads, with the configuration key that names it."""

    key: str  # e.g. "columns.score" or "characteristics[2]"
    name: str
    kind: str  # "date", "numeric", "label", "categorical", "id"


def required_columns(model: ModelConfig) -> list[SourceColumn]:
    """Every source column a run of ``model`` reads."""
    cols = model.columns
    out = [
        SourceColumn("columns.id", cols.id, "id"),
        SourceColumn("columns.score_date", cols.score_date, "date"),
        SourceColumn("columns.score", cols.score, "numeric"),
    ]
    if cols.label is not None:
        out.append(SourceColumn("columns.label", cols.label, "label"))
    out += [  # an LGD, CCF or EAD model's
        SourceColumn(f"columns.{key}", name, "numeric")
        for key in ("realised", "exposure", "downturn")
        if (name := getattr(cols, key)) is not None
    ]
    if cols.grade is not None:
        out.append(SourceColumn("columns.grade", cols.grade, "categorical"))
    if cols.ead_approach is not None:
        out.append(SourceColumn("columns.ead_approach", cols.ead_approach, "label"))
    if cols.weight:
        out.append(SourceColumn("columns.weight", cols.weight, "numeric"))
    out += [
        SourceColumn(f"columns.segments[{i}]", name, "categorical")
        for i, name in enumerate(cols.segments)
    ]
    out += [
        SourceColumn(f"characteristics[{i}]", c.source_column, c.kind)
        for i, c in enumerate(model.characteristics)
    ]
    calibration = model.calibration
    if calibration.pd is not None:
        out.append(SourceColumn("calibration.pd", calibration.pd, "numeric"))
    if isinstance(calibration.grades, GradeColumn):
        out.append(SourceColumn("calibration.grades.column", calibration.grades.column, "grade"))
    out += [
        SourceColumn(f"challengers[{i}].column", c.column, "numeric")
        for i, c in enumerate(model.challengers)
    ]
    if cols.default_date:
        out.append(SourceColumn("columns.default_date", cols.default_date, "date"))
    if cols.delinquency is not None:
        out += [
            SourceColumn(f"columns.delinquency.{key}", name, "date")
            for key, name in cols.delinquency.model_dump(exclude_none=True).items()
        ]
    if model.rating.migration and cols.obligor:
        out.append(SourceColumn("columns.obligor", cols.obligor, "id"))
    return out
