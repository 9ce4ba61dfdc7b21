"""The data-quality family's figures: the populations' sizes, the loans left out and why (the
waterfall), the cohort's unmatured share and overlap with the development window, and each
characteristic's missing and unseen rates; the rules, the report section and the declaration are
in :mod:`riskmon.figures.quality`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from riskmon.figures._family import characteristics
from riskmon.figures._views import RunTables
from riskmon.metrics import CountTable
from riskmon.records import CURRENT, PERFORMANCE, BinRecord, FigureRecord


def share_figure(
    table: CountTable,
    index: int | None,
    *,
    name: str,
    variable: str,
    population: str,
    segment: str = "",
) -> FigureRecord:
    """The weighted share of one bin (the missing bin, the unseen bin) of a table."""
    total = float(table.total.sum())
    if index is None or total <= 0:
        return FigureRecord(
            name,
            None,
            population,
            variable=variable,
            segment=segment,
            reason="no loans" if total <= 0 else "no such bin",
        )
    return FigureRecord(
        name, float(table.total[index]) / total, population, variable=variable, segment=segment
    )


def _in_sample(tables: RunTables) -> FigureRecord | None:
    """The share of the performance cohort's days inside the development window."""
    cohort = tables.window(PERFORMANCE)
    if cohort is None:
        return None
    development = tables.model.baseline
    first, last = max(cohort.start, development.start), min(cohort.end, development.end)
    overlap = max(0, (last - first).days + 1)
    days = (cohort.end - cohort.start).days + 1
    params = {
        "cohort": str(cohort),
        "development": f"{development.start} to {development.end}",
        "days": overlap,
    }
    return FigureRecord("cohort_in_sample", overlap / days, PERFORMANCE, params=params)


def _excluded(tables: RunTables, population: str) -> FigureRecord | None:
    """The share of a population's loans left out for invalid data, and the whole waterfall."""
    counts = tables.exclusions(population)
    if counts is None:
        return None
    params = {
        "read": counts.read,
        "null_score": counts.null_score,
        "non_finite_score": counts.non_finite_score,
        "invalid_weight": counts.invalid_weight,
        "zero_weight": counts.zero_weight,
        "used": counts.used,
    }
    if counts.duplicates is not None:
        params["duplicate_ids"] = counts.duplicates
    if counts.out_of_range is not None:
        params["out_of_range"] = counts.out_of_range
    share = counts.invalid / counts.read if counts.read else None
    reason = None if counts.read else "no loans scored in the window"
    return FigureRecord("excluded_share", share, population, reason=reason, params=params)


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    figures: list[FigureRecord] = []
    for population in (CURRENT, PERFORMANCE):
        excluded = _excluded(tables, population)
        if excluded is not None:
            figures.append(excluded)
    in_sample = _in_sample(tables)
    if in_sample is not None:
        figures.append(in_sample)
    for segment in tables.segments():
        current = tables.rows(CURRENT, segment)
        if current is not None:
            figures.append(FigureRecord("n_rows", float(current[0]), CURRENT, segment=segment))
        cohort = tables.rows(PERFORMANCE, segment)
        if cohort is None:
            continue
        n_rows, n_unlabeled = cohort
        figures.append(
            FigureRecord(
                "unmatured_share",
                n_unlabeled / n_rows if n_rows else None,
                PERFORMANCE,
                segment=segment,
                reason=None if n_rows else "no loans in the performance window",
                params={"n_unmatured": n_unlabeled, "n_scored": n_rows},
            )
        )
    for name in characteristics(tables.model):
        current_table = tables.table(CURRENT, name)
        binning = current_table.binning
        assert binning is not None
        figures.append(
            share_figure(
                current_table,
                binning.missing_index,
                name="missing_rate",
                variable=name,
                population=CURRENT,
            )
        )
        if binning.unseen_index is not None:
            figures.append(_unseen_figure(tables, name, current_table))
    return figures, []


#: unseen levels named in a figure's parameters (the largest first)
NAMED_LEVELS = 10


def _unseen_figure(tables: RunTables, name: str, table: CountTable) -> FigureRecord:
    """The weighted share of the current loans whose level the baseline never had, with the
    largest such levels named. Where the baseline kept only its most frequent levels, its
    other levels share the "other" bin with new ones, told apart by the levels it froze."""
    binning = table.binning
    assert binning is not None
    assert binning.unseen_index is not None
    census = tables.levels(name)
    figure = share_figure(
        table, binning.unseen_index, name="unseen_rate", variable=name, population=CURRENT
    )
    if figure.value is None:  # no loans now
        return figure
    if census is None:
        if not binning.other:
            return figure
        return replace(
            figure,
            value=None,
            reason="the levels of the other bin were not read: new ones are not told apart",
        )
    if not binning.other:
        unseen = list(census.levels)
        n_levels = census.n_levels
        params: dict[str, Any] = {}
    else:
        if not census.complete:
            return replace(
                figure,
                value=None,
                reason=(
                    f"{census.n_levels:,} levels in the other bin, more than are read "
                    f"({len(census.levels):,}): new ones are not told apart"
                ),
            )
        known = tables.baseline.other_levels(name)
        unseen = [c for c in census.levels if c.level not in known]
        n_levels = len(unseen)
        total = float(table.total.sum())
        figure = replace(figure, value=sum(c.weight for c in unseen) / total if total > 0 else None)
        params = {
            "other_share": float(table.total[binning.unseen_index]) / total if total > 0 else None,
            "other_levels": census.n_levels,
        }
    largest = [[c.level, c.n] for c in unseen[:NAMED_LEVELS]]
    return replace(figure, params=params | {"n_levels": n_levels, "largest": largest})
