"""Collect: the count tables of a run, computed where the loans live.

:func:`collect` reads one :class:`CollectRequest` from a :class:`Source` with the strategy
its engine's profile (:mod:`.engines`) chooses — SQL pushdown (one of the query shapes of
:mod:`.pushdown`) or the streaming reader (:mod:`.stream`) — checks what came back (labels
0/1/NULL, no NULL scores, non-negative weights) and returns :class:`CollectedTables`. Every
strategy returns the same tables on the same data.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Literal

from sqlalchemy import Connection, FromClause, func, select
from sqlalchemy.sql.sqltypes import NullType

from riskmon.collect import grouped, migration, migration_stream, stream
from riskmon.collect.aggregate import Aggregate
from riskmon.collect.binsql import category_text
from riskmon.collect.census import census, daily, day_levels, summed
from riskmon.collect.checks import check_cells, overflowing_sum
from riskmon.collect.daycells import DayCells
from riskmon.collect.days import DayPlan, merge, split
from riskmon.collect.engines import PROFILES, EngineProfile, profile_for
from riskmon.collect.exclusions import exclusions, invalid_pds, with_copies
from riskmon.collect.fingerprint import recheck
from riskmon.collect.migration import MigrationRequest
from riskmon.collect.migration_tables import Migrations, MigrationTables
from riskmon.collect.request import CollectRequest, ColumnDataError, PdSource, Population, Variable
from riskmon.collect.selection import (
    QueryColumns,
    numeric_columns,
    statement_groups,
    text_counts,
)
from riskmon.collect.source import Source, SourceColumn, required_columns
from riskmon.collect.tables import CollectedTables, PopulationCounts, assemble
from riskmon.collect.usable import usable_rows
from riskmon.collect.vintages import VintageRequest
from riskmon.collect.vintages import run as vintage_pass
from riskmon.errors import SourceError
from riskmon.records import ALL, Exclusions

Strategy = Literal["auto", "packed", "grouping_sets", "union_all", "per_variable", "stream"]
STRATEGIES: tuple[Strategy, ...] = (
    "auto",
    "packed",
    "grouping_sets",
    "union_all",
    "per_variable",
    "stream",
)

#: the strategy "auto" picks per dialect: each known engine profile's default shape (from the
#: measurements in benchmarks/collect.md); any other dialect gets the generic profile's
DEFAULT_STRATEGY: dict[str, Strategy] = {
    dialect: profile.default_shape for profile in PROFILES for dialect in profile.dialects
}


def resolve_strategy(strategy: Strategy, dialect: str) -> Strategy:
    """The strategy to use on ``dialect``; "auto" looks it up, anything else is checked."""
    return _resolve(strategy, dialect, profile_for(dialect))


def _resolve(strategy: Strategy, dialect: str, engine: EngineProfile) -> Strategy:
    if strategy == "auto":
        return engine.default_shape
    if strategy == "grouping_sets" and not engine.grouping_sets:
        raise SourceError(f"strategy 'grouping_sets' is not available on {dialect}")
    return strategy


def collect(
    source: Source,
    request: CollectRequest,
    *,
    strategy: Strategy = "auto",
    migrations: MigrationRequest | None = None,
    vintages: VintageRequest | None = None,
    days: DayPlan | None = None,
) -> CollectedTables:
    """Every count table ``request`` asks for, read from ``source``; with ``migrations``, the
    obligors' migrations too, and with ``vintages`` the vintage curves (always a pushed-down
    ``GROUP BY``, :mod:`.vintages`), read in the same transaction (so on one snapshot where
    the engine gives one). With ``days``, only the fresh days are read and the stored days'
    cells added (:mod:`.days`); the fresh days' cells come back as ``day_cells``."""
    loans = source.check_columns(_request_columns(request))
    chosen = _resolve(strategy, source.engine.dialect.name, source.profile)
    tally = None
    with source.reading() as connection:
        if days is not None:  # the days whose rows did not change since they were read: kept
            columns = [
                c.name for c in [*required_columns(source.model), *_request_columns(request)]
            ]
            days = recheck(connection, loans, request.score_date, columns, days, source.profile)
        read = request.read() if days is None else days.reading(request)
        _refuse_text_target(source, connection, loans, read)
        # counted first: the populations nothing is left out of are read without the test
        excluded, read = exclusions(connection, loans, read, source.profile)
        shape = _by_day(chosen) if days is not None and strategy == "auto" else chosen
        aggregate, invalid_weights = _aggregate(source, connection, loans, read, shape)
        wholes = [] if days is None else days.whole(request)  # the raw values, whole windows
        raw = [_aggregate(source, connection, loans, whole, chosen) for whole in wholes]
        invalid_weights = max(invalid_weights, sum(invalid for _, invalid in raw))
        if migrations is not None:
            tally = _migrations(source, connection, loans, migrations, chosen)
        curves = {} if vintages is None else vintage_pass(connection, loans, vintages)
        invalid_pd = {} if days is None else invalid_pds(connection, loans, read)
        # the statements' row-counted census covers the windows only when they read them whole
        skip, counted = ((), aggregate.levels) if days is None else (daily(request), None)
        whole = read if days is None else request  # the windows (checked as read, if whole)
        levels = census(connection, loans, whole, skip=skip, counted=counted)
        day_census = {} if days is None else day_levels(connection, loans, read, request)
    fresh: dict[tuple[str, dt.date], DayCells] = {}
    if days is not None:
        fresh = split(aggregate, excluded, read.populations, invalid_pd, day_census, days.prints)
        merged, excluded = merge(request, {**days.stored, **fresh})
        levels |= summed(request, {**days.stored, **fresh})
        if request.pd is not None and request.pd.strict:  # any fails the collect: as read
            merged.invalid_pds = aggregate.invalid_pds
        merged.invalid_targets = aggregate.invalid_targets
        for window, _ in raw:
            merged.add_all(window)
        aggregate = merged
    _validate(source, request, aggregate, invalid_weights)
    _refuse_non_finite(source, request, excluded)
    tables = replace(
        assemble(request, aggregate),
        exclusions=with_copies(request, excluded),
        levels=levels,
        vintages=curves,
        day_cells=fresh if days is None else {**days.confirmed, **fresh},
        days_read={} if days is None else {p: len(d) for p, d in days.fresh.items()},
        days_unchanged={} if days is None else days.unchanged_days(),
    )
    if tally is None:
        return tables
    return replace(tables, migrations=_checked(source, migrations, tally))


def _by_day(chosen: Strategy) -> Strategy:
    """The shape a pass by day reads with: one ``GROUP BY`` per variable (``union_all``).
    ``packed`` returns the product of a pack's bins for every day (4.1 s against 10.4 s for
    ``packed``, 14 days of 30,000 loans on PostgreSQL); with the day in every grouping set,
    PostgreSQL sorts the rows once per set for ``grouping_sets`` (a night 2.1x slower than with
    ``union_all``; benchmarks/incremental.md)."""
    return "union_all" if chosen in ("packed", "grouping_sets") else chosen


def _aggregate(
    source: Source,
    connection: Connection,
    loans: FromClause,
    read: CollectRequest,
    chosen: Strategy,
) -> tuple[Aggregate, int]:
    """The aggregate rows of ``read`` and the rows with an invalid weight, read with
    ``chosen`` (none to read: nothing)."""
    if not read.populations:
        return Aggregate(), 0
    if chosen == "stream":
        try:
            return stream.run(connection, loans, read)
        except ColumnDataError as exc:
            raise source.error(str(exc), column=_column(source, exc.column, read)) from None
    assert chosen != "auto"
    if source.profile.text_in_numbers:
        _refuse_text(source, connection, loans, read)
    return grouped.run(connection, loans, read, chosen, source.profile)


def _refuse_non_finite(
    source: Source, request: CollectRequest, excluded: dict[str, Exclusions]
) -> None:
    """Where invalid loans fail the collect, a score NaN or infinite fails it too (it would
    sort above every bin edge), and so does one outside the score's range."""
    if request.exclude_invalid or request.score is None:
        return
    n = sum(e.non_finite_score for e in excluded.values())
    if n:
        raise source.error(
            f"expected a finite score on every loan, got {n} row(s) NaN or infinite",
            column=_column(source, request.score),
        )
    outside = sum(e.out_of_range or 0 for e in excluded.values())
    if outside and request.score_range is not None:
        low, high = request.score_range
        raise source.error(
            f"expected scores within score_range [{low:g}, {high:g}], got {outside} row(s) outside",
            column=_column(source, request.score),
        )


def _refuse_text(
    source: Source, connection: Connection, loans: FromClause, request: CollectRequest
) -> None:
    """Refuse text in a column read as numbers, as the streaming reader does (an engine whose
    numeric columns may hold text would compare it with the bin edges as a number)."""
    columns = numeric_columns(request)
    if not columns:
        return
    for group in statement_groups(request):
        cols = QueryColumns(loans, request, group)
        counts = connection.execute(text_counts(cols, columns)).one()
        for name, n in zip(columns, counts, strict=True):
            if not n:
                continue
            what = "values to bin"
            if name == request.target:
                what = "target values"
            elif name == request.weight:  # as the other readings say it of a weight
                raise source.error(
                    f"expected non-negative, non-NULL weights, got {int(n)} row(s) without",
                    column=_column(source, name),
                )
            column = loans.c[name]
            examples = connection.execute(
                select(column)
                .select_from(loans)
                .where(cols.where, func.typeof(column) == "text")
                .limit(5)
            ).scalars()
            raise source.error(
                f"Expected numeric {what}, got {list(examples)!r} ({int(n)} row(s) with text)",
                column=_column(source, name, request),
            )


#: the names drivers give text columns in a statement's description (DuckDB: ``VARCHAR``)
_TEXT_TYPES = frozenset({"VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR", "CHARACTER VARYING"})


def _refuse_text_target(
    source: Source, connection: Connection, loans: FromClause, request: CollectRequest
) -> None:
    """Refuse a target column of text whose type the source did not say (a table not
    reflected, a query): the driver names its type on a statement that reads no row (the
    moments' ``CAST`` would read text as a number, or fail without naming the column)."""
    if request.target is None:
        return
    column = loans.c[request.target]
    if not isinstance(column.type, NullType):
        return  # a type the source said, checked with the model's columns
    string = getattr(connection.dialect.dbapi, "STRING", None)
    probe = connection.execute(select(column).select_from(loans).limit(0))
    description = probe.cursor.description if probe.cursor is not None else None
    probe.close()
    type_code = description[0][1] if description else None
    if type_code is None:
        return
    # the DB-API's STRING type object where the driver has one, else the type's own name
    named = str(type_code).upper().split("(")[0].strip()
    if (string is not None and type_code == string) or named in _TEXT_TYPES:
        raise source.error(
            f"expected a numeric column, got type {type_code}",
            column=_column(source, request.target, request),
        )


def collect_migrations(
    source: Source, request: MigrationRequest, *, strategy: Strategy = "auto"
) -> MigrationTables:
    """Each obligor's grade at the start of the horizon against its grade at the end, counted
    per segment (:mod:`.migration`); the database counts them unless ``strategy`` is
    ``stream``."""
    loans = source.check_columns()
    chosen = _resolve(strategy, source.engine.dialect.name, source.profile)
    with source.reading() as connection:
        tally = _migrations(source, connection, loans, request, chosen)
    return _checked(source, request, tally)


def _migrations(
    source: Source,
    connection: Connection,
    loans: FromClause,
    request: MigrationRequest,
    chosen: Strategy,
) -> migration.Tally:
    try:
        if chosen == "stream":
            return migration_stream.stream(connection, loans, request)
        return migration.run(connection, loans, request, source.profile)
    except ColumnDataError as exc:
        raise source.error(str(exc), column=_column(source, exc.column)) from None


def _checked(
    source: Source, request: MigrationRequest | None, tally: migration.Tally
) -> MigrationTables:
    """The migrations counted, unless a label or a weight read with them is invalid."""
    assert request is not None
    if tally.bad_labels:
        raise source.error(
            f"expected label values 0, 1 or NULL, got {sorted(tally.bad_labels, key=repr)[:5]!r}",
            column=_column(source, request.tables.label or "label"),
        )
    weight = request.tables.weight
    if tally.invalid_weights and weight is not None:
        raise source.error(
            f"expected non-negative, non-NULL weights, got {tally.invalid_weights} obligor(s) "
            "without one in the migration's snapshots",
            column=_column(source, weight),
        )
    return tally.result()


def _request_columns(request: CollectRequest) -> list[SourceColumn]:
    """The columns a request reads beyond its model's configuration: the continuous target."""
    if request.target is None:
        return []
    return [SourceColumn("target", request.target, "numeric")]


def _column(source: Source, name: str, request: CollectRequest | None = None) -> SourceColumn:
    columns = required_columns(source.model)
    if request is not None:
        columns = [*_request_columns(request), *columns]
    # a column named twice (the PD is the score): the first key names it
    return next((c for c in columns if c.name == name), SourceColumn("?", name, "numeric"))


def _validate(
    source: Source, request: CollectRequest, aggregate: Aggregate, invalid_weights: int
) -> None:
    score = source.model.columns.score
    checked = check_cells(request, aggregate, score)
    if checked.bad_labels:
        raise source.error(
            f"expected label values 0, 1 or NULL, got {checked.bad_labels[:5]!r}",
            column=_column(source, request.label or "label"),
        )
    if invalid_weights and request.weight is not None:
        raise source.error(
            f"expected non-negative, non-NULL weights, got {invalid_weights} row(s) without",
            column=_column(source, request.weight),
        )
    column = _column(source, score)
    if checked.not_numbers:
        raise source.error(
            f"expected numeric scores, got {checked.not_numbers[:5]!r}", column=column
        )
    if checked.null_scores:
        raise source.error(
            f"expected a score on every loan, got {checked.null_scores} row(s) with NULL",
            column=column,
        )
    invalid_target = max(aggregate.invalid_targets.values(), default=0)
    if request.target is not None and invalid_target:
        raise source.error(
            f"expected a finite target (or NULL, not realised) on every loan, got "
            f"{invalid_target} row(s) NaN or infinite",
            column=_column(source, request.target, request),
        )
    if request.pd is not None and request.pd.strict and aggregate.invalid_pd:
        what = "PD" if not request.pd.from_points else "PD (from the points)"
        raise source.error(
            f"expected a {what} within [0, 1] on every loan, got {aggregate.invalid_pd} row(s) "
            f"NULL or outside",
            column=_column(source, request.pd.column),
        )
    overflow = overflowing_sum(request, aggregate, checked.weights)
    if overflow is not None:
        named = overflow.columns[0] if overflow.columns else None
        summed = None if named is None else _column(source, named, request)
        raise source.error(overflow.message(), column=summed)


__all__ = [
    "ALL",
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "CollectRequest",
    "CollectedTables",
    "DayCells",
    "DayPlan",
    "EngineProfile",
    "MigrationRequest",
    "MigrationTables",
    "Migrations",
    "PdSource",
    "Population",
    "PopulationCounts",
    "Source",
    "SourceColumn",
    "Strategy",
    "Variable",
    "VintageRequest",
    "category_text",
    "collect",
    "collect_migrations",
    "profile_for",
    "required_columns",
    "resolve_strategy",
    "usable_rows",
]
