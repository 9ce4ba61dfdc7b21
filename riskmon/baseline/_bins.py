"""A baseline's bins, fitted on the development window: equal-frequency edges for the score
and each numeric characteristic (by loan count; missing values in their own bin), one bin per
level for categorical characteristics (plus the missing and unseen bins), the score's ranking
grid and the coarse grids a challenger is crossed on.

One ``GROUP BY`` per variable over the development window counts the loans per distinct value
(categorical columns by their text in the database); the bins are fitted on those counts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, func, select

from riskmon.collect import Source, SourceColumn, category_text, required_columns, usable_rows
from riskmon.config import MAX_GRADES, Characteristic, ModelConfig
from riskmon.errors import InvalidDataError
from riskmon.metrics import Binning, fit_binning, numeric_values
from riskmon.plan import DateWindow
from riskmon.records import BACKTEST_GRADE, CHALLENGER_GRID, SCORE, challenger_variable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FrozenBins:
    """The bins a baseline freezes: the score's, the score's ranking grid, each characteristic's."""

    binnings: dict[str, Binning]  # variable -> binning, SCORE included
    ranking_grid: Binning | None  # None: rank the score on its distinct values
    score_top: float  # the largest baseline score (values the grid's last cell)
    n_distinct_scores: int
    score_bottom: float | None = None  # the smallest (None: a baseline frozen without it)
    #: a categorical characteristic's baseline levels beyond its ``bins.max_levels`` most
    #: frequent (in its "other" bin): a run tells them from levels the baseline never had
    other_levels: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _column(model: ModelConfig, characteristic: str) -> SourceColumn:
    index = [c.name for c in model.characteristics].index(characteristic)
    return next(c for c in required_columns(model) if c.key == f"characteristics[{index}]")


def _value_counts(
    source: Source, loans: Any, window: DateWindow, expression: ColumnElement[Any]
) -> tuple[list[Any], np.ndarray]:
    value = expression.label("v")
    model = source.model
    weight = loans.c[model.columns.weight] if model.columns.weight else None
    usable = usable_rows(
        loans.c[model.columns.score],
        weight,
        exclude=model.on_invalid == "exclude",
        score_range=model.score_range,
        flag=loans.c[flag] if (flag := model.columns.ead_approach) else None,
    )
    query = (
        select(value, func.count().label("n"))
        .select_from(loans)
        .where(window.contains(loans.c[model.columns.score_date]), *usable)
        .group_by(value)
    )
    with source.reading() as connection:
        rows = connection.execute(query).all()
    values = [row[0] for row in rows]
    counts = np.asarray([int(row[1]) for row in rows], dtype=np.float64)
    return values, counts


def fit_bins(model: ModelConfig, source: Source) -> FrozenBins:
    """Fit the score's and every characteristic's bins on the development window."""
    loans = source.check_columns()
    window = DateWindow(model.baseline.start, model.baseline.end)
    scores, counts = _value_counts(source, loans, window, loans.c[model.columns.score])
    score_column = next(c for c in required_columns(model) if c.key == "columns.score")
    if not scores:
        raise source.error(f"no loans scored in the baseline window {window}")
    if any(s is None for s in scores):
        n_null = int(sum(c for s, c in zip(scores, counts, strict=True) if s is None))
        raise source.error(
            f"expected a score on every baseline loan, got {n_null} with NULL", column=score_column
        )
    try:
        values = numeric_values(np.asarray(scores, dtype=object))
    except InvalidDataError as exc:
        raise source.error(str(exc), column=score_column) from None
    if model.score_range is not None:  # with on_invalid: exclude, the reading left them out
        low, high = model.score_range
        outside = (values < low) | (values > high)
        if outside.any():
            raise source.error(
                f"expected scores within score_range [{low:g}, {high:g}], got "
                f"{int(counts[outside].sum())} baseline loan(s) outside",
                column=score_column,
            )
    binnings = {
        SCORE: fit_binning(values, kind="numeric", n_bins=model.bins.score, sample_weight=counts)
    }
    grid = None
    if values.size > model.bins.max_distinct_scores:
        grid = fit_binning(
            values, kind="numeric", n_bins=model.bins.score_grid, sample_weight=counts
        )
    if model.challengers:
        binnings |= _challenger_binnings(model, source, loans, window, values, counts)
    other_levels: dict[str, tuple[str, ...]] = {}
    for characteristic in model.characteristics:
        binning, others = _characteristic_binning(model, source, loans, window, characteristic)
        binnings[characteristic.name] = binning
        if others is not None:
            other_levels[characteristic.name] = others
    grades = _grade_binning(model, source, loans, window)
    if grades is not None:
        binnings[BACKTEST_GRADE] = grades
    return FrozenBins(
        binnings,
        grid,
        float(values.max()),
        int(values.size),
        float(values.min()),
        other_levels,
    )


def _grade_binning(
    model: ModelConfig, source: Source, loans: Any, window: DateWindow
) -> Binning | None:
    """An LGD, CCF or EAD model's grades (``columns.grade``) in the initial sample, ordered by
    their mean estimate there (lowest first; ties by name), each a bin; None without a grade
    column, or with more than ``MAX_GRADES`` grades (the back-test then takes the ECB's
    segments of the estimate, and says so)."""
    column = model.columns.grade
    if column is None or model.kind == "pd":
        return None
    grade = category_text(loans.c[column])
    score = loans.c[model.columns.score]
    query = (
        select(grade.label("g"), func.avg(score).label("m"))
        .select_from(loans)
        .where(window.contains(loans.c[model.columns.score_date]), grade.is_not(None))
        .group_by(grade)
    )
    with source.reading() as connection:
        rows = connection.execute(query).all()
    if not rows or len(rows) > MAX_GRADES:
        log.info(
            "model %s: %d grades in column %r in the initial sample; back-tested per ECB segment",
            model.name,
            len(rows),
            column,
        )
        return None
    ordered = sorted(rows, key=lambda r: (float("inf") if r[1] is None else float(r[1]), str(r[0])))
    return Binning("categorical", levels=tuple((str(r[0]),) for r in ordered), other=True)


def _characteristic_binning(
    model: ModelConfig,
    source: Source,
    loans: Any,
    window: DateWindow,
    characteristic: Characteristic,
) -> tuple[Binning, tuple[str, ...] | None]:
    """A characteristic's bins: the scorecard's own attributes when the configuration gives
    them, else fitted on the development window; its special values, each a bin of its own,
    left out of the fit. For a categorical one with an "other" bin, the baseline's levels in it."""
    column = loans.c[characteristic.source_column]
    if characteristic.kind == "categorical":
        special = tuple(str(v) for v in characteristic.special_values)
        levels, level_counts = _value_counts(source, loans, window, category_text(column))
        ordinary = [i for i, v in enumerate(levels) if v is None or str(v) not in special]
        if characteristic.explicit:
            binning = Binning(
                "categorical", levels=characteristic.level_groups, other=True, special=special
            )
        else:
            binning = replace(
                fit_binning(
                    np.asarray([levels[i] for i in ordinary], dtype=object),
                    kind="categorical",
                    sample_weight=level_counts[ordinary],
                    max_levels=model.bins.max_levels,
                ),
                special=special,
            )
        if not binning.other:
            return binning, None
        kept = {level for group in binning.levels for level in group} | set(special)
        return binning, tuple(sorted({str(v) for v in levels if v is not None} - kept))
    numbers = tuple(float(v) for v in characteristic.special_values)
    if characteristic.explicit:
        return Binning("numeric", edges=characteristic.edges, special=numbers), None
    raw, raw_counts = _value_counts(source, loans, window, column)
    try:
        x = numeric_values(np.asarray(raw, dtype=object))
    except InvalidDataError as exc:
        raise source.error(str(exc), column=_column(model, characteristic.name)) from None
    ordinary_values = ~np.isin(x, numbers)
    fitted = fit_binning(
        x[ordinary_values],
        kind="numeric",
        n_bins=model.bins.characteristics,
        sample_weight=raw_counts[ordinary_values],
    )
    return replace(fitted, special=numbers), None


def _challenger_binnings(
    model: ModelConfig,
    source: Source,
    loans: Any,
    window: DateWindow,
    scores: np.ndarray,
    counts: np.ndarray,
) -> dict[str, Binning]:
    """The coarse grid of the score and each challenger's, on which a run crosses them:
    ``bins.challenger_grid`` equal-frequency cells each. A challenger without a score in the
    baseline window gets none (its figures then say so)."""
    cells = model.bins.challenger_grid
    out = {CHALLENGER_GRID: fit_binning(scores, kind="numeric", n_bins=cells, sample_weight=counts)}
    for i, challenger in enumerate(model.challengers):
        raw, raw_counts = _value_counts(source, loans, window, loans.c[challenger.column])
        present = [j for j, value in enumerate(raw) if value is not None]
        if not present:
            log.warning(
                "%s: challenger %r has no score in the baseline window; it is not compared",
                model.name,
                challenger.label,
            )
            continue
        column = next(c for c in required_columns(model) if c.key == f"challengers[{i}].column")
        try:
            x = numeric_values(np.asarray([raw[j] for j in present], dtype=object))
        except InvalidDataError as exc:
            raise source.error(str(exc), column=column) from None
        out[challenger_variable(challenger.label)] = fit_binning(
            x, kind="numeric", n_bins=cells, sample_weight=raw_counts[present]
        )
    return out
