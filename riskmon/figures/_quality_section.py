"""The data-quality section of the model run report: loans read and left out, per population,
and each characteristic's missing and unseen rates against the baseline's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from riskmon.figures._views import RunView
from riskmon.records import CURRENT, PERFORMANCE, FigureRecord


@dataclass(frozen=True)
class QualityRow:
    """Section 9: one characteristic's missing and unseen values."""

    name: str
    missing_rate: float | None
    base_missing_rate: float | None
    change: float | None
    status: str | None
    unseen_rate: float | None
    #: levels the baseline never had: how many, and the largest with their loans
    unseen_levels: int | None = None
    largest: tuple[tuple[str, int], ...] = ()
    #: the share of the "other" bin, for a characteristic that kept its most frequent levels
    other_share: float | None = None


@dataclass(frozen=True)
class WaterfallRow:
    """One population's loans: read, left out and why, used."""

    population: str
    read: int
    null_score: int
    non_finite_score: int
    invalid_weight: int
    zero_weight: int
    used: int
    share: float | None
    duplicates: int | None = None
    #: loans scored outside the model's score_range (None: no range configured)
    out_of_range: int | None = None


@dataclass(frozen=True)
class DataQuality:
    rows: tuple[QualityRow, ...]
    unmatured_share: float | None
    n_unmatured: int | None
    n_scored: int | None
    waterfall: tuple[WaterfallRow, ...] = ()
    exclusions_status: str | None = None
    duplicates_status: str | None = None


def _unseen(figure: FigureRecord | None) -> dict[str, Any]:
    """A quality row's unseen levels, from the stored figure."""
    if figure is None:
        return {"unseen_rate": None}
    params = figure.params
    return {
        "unseen_rate": figure.value,
        "unseen_levels": params.get("n_levels"),
        "largest": tuple((str(level), int(n)) for level, n in params.get("largest", ())),
        "other_share": params.get("other_share"),
    }


def section(run: RunView) -> DataQuality:
    figures = run.figures
    rows = []
    for name in figures.variables("missing_rate"):
        now = figures.value("missing_rate", CURRENT, name)
        base = run.baseline.missing_rate(name) if run.baseline is not None else None
        rows.append(
            QualityRow(
                name=name,
                missing_rate=now,
                base_missing_rate=base,
                change=now - base if now is not None and base is not None else None,
                status=run.alerts.status("missing_rate_change", name),
                **_unseen(figures.get("unseen_rate", CURRENT, name)),
            )
        )
    unmatured = figures.get("unmatured_share", PERFORMANCE)
    params = unmatured.params if unmatured else {}
    waterfall = [
        WaterfallRow(
            population=name,
            read=int(f.params.get("read", 0)),
            null_score=int(f.params.get("null_score", 0)),
            non_finite_score=int(f.params.get("non_finite_score", 0)),
            invalid_weight=int(f.params.get("invalid_weight", 0)),
            zero_weight=int(f.params.get("zero_weight", 0)),
            used=int(f.params.get("used", 0)),
            share=f.value,
            duplicates=f.params.get("duplicate_ids"),
            out_of_range=f.params.get("out_of_range"),
        )
        for name, population in (("Current population", CURRENT), ("Cohort", PERFORMANCE))
        if (f := figures.get("excluded_share", population)) is not None
    ]
    return DataQuality(
        rows=tuple(rows),
        unmatured_share=unmatured.value if unmatured else None,
        n_unmatured=params.get("n_unmatured"),
        n_scored=params.get("n_scored"),
        waterfall=tuple(waterfall),
        exclusions_status=run.alerts.status("exclusions"),
        duplicates_status=run.alerts.status("duplicate_ids"),
    )
