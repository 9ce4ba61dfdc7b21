"""Collect: the count tables of a run, computed where the loans live.

:func:`collect` reads one :class:`CollectRequest` from a :class:`Source` with the strategy
chosen for its dialect — SQL pushdown (one of the query shapes of :mod:`.pushdown`) or the
streaming reader (:mod:`.stream`) — checks what came back (labels 0/1/NULL, no NULL scores,
non-negative weights) and returns :class:`CollectedTables`. Every strategy returns the same
tables on the same data.
"""

from __future__ import annotations

from typing import Literal

from riskmon.collect import pushdown, stream
from riskmon.collect.source import Source, SourceColumn, required_columns
from riskmon.collect.tables import (
    Aggregate,
    CollectedTables,
    CollectRequest,
    ColumnDataError,
    Population,
    PopulationCounts,
    Variable,
    assemble,
    check_labels,
    check_raw_keys,
    missing_in_bins,
)
from riskmon.errors import SourceError
from riskmon.records import ALL

Strategy = Literal["auto", "packed", "grouping_sets", "union_all", "per_variable", "stream"]
STRATEGIES: tuple[Strategy, ...] = (
    "auto",
    "packed",
    "grouping_sets",
    "union_all",
    "per_variable",
    "stream",
)

#: the strategy "auto" picks per dialect, from the measurements in benchmarks/collect.md
DEFAULT_STRATEGY: dict[str, Strategy] = {
    "postgresql": "packed",
    "duckdb": "packed",
    "sqlite": "stream",
    "mysql": "union_all",
    "mariadb": "union_all",
}
FALLBACK_STRATEGY: Strategy = "union_all"


def resolve_strategy(strategy: Strategy, dialect: str) -> Strategy:
    """The strategy to use on ``dialect``; "auto" looks it up, anything else is checked."""
    if strategy == "auto":
        return DEFAULT_STRATEGY.get(dialect, FALLBACK_STRATEGY)
    if strategy == "grouping_sets" and dialect not in pushdown.GROUPING_SETS_DIALECTS:
        raise SourceError(f"strategy 'grouping_sets' is not available on {dialect}")
    return strategy


def collect(
    source: Source, request: CollectRequest, *, strategy: Strategy = "auto"
) -> CollectedTables:
    """Every count table ``request`` asks for, read from ``source``."""
    loans = source.check_columns()
    chosen = resolve_strategy(strategy, source.engine.dialect.name)
    with source.reading() as connection:
        if chosen == "stream":
            try:
                aggregate, invalid_weights = stream.run(connection, loans, request)
            except ColumnDataError as exc:
                raise source.error(str(exc), column=_column(source, exc.column)) from None
        else:
            assert chosen != "auto"
            aggregate, invalid_weights = pushdown.run(connection, loans, request, chosen)
    _validate(source, request, aggregate, invalid_weights)
    return assemble(request, aggregate)


def _column(source: Source, name: str) -> SourceColumn:
    return next(c for c in required_columns(source.model) if c.name == name)


def _validate(
    source: Source, request: CollectRequest, aggregate: Aggregate, invalid_weights: int
) -> None:
    bad_labels = check_labels(aggregate)
    if bad_labels:
        raise source.error(
            f"expected label values 0, 1 or NULL, got {bad_labels[:5]!r}",
            column=_column(source, request.label),
        )
    if invalid_weights and request.weight is not None:
        raise source.error(
            f"expected non-negative, non-NULL weights, got {invalid_weights} row(s) without",
            column=_column(source, request.weight),
        )
    score = source.model.columns.score
    column = _column(source, score)
    null_scores, not_numbers = check_raw_keys(request, aggregate)
    if not_numbers:
        raise source.error(f"expected numeric scores, got {not_numbers[:5]!r}", column=column)
    null_scores += missing_in_bins(request, aggregate, score)
    if null_scores:
        raise source.error(
            f"expected a score on every loan, got {null_scores} row(s) with NULL", column=column
        )


__all__ = [
    "ALL",
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "CollectRequest",
    "CollectedTables",
    "Population",
    "PopulationCounts",
    "Source",
    "Strategy",
    "Variable",
    "collect",
    "resolve_strategy",
]
