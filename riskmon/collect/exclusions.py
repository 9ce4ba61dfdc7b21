"""Each population's loans read and left out, and the loans whose PD is not one, counted where
the loans live (a pass by day: per day population, so that a day's cells hold them).

The loans that repeat an id and score date are counted by a ``GROUP BY`` on both (a statement
that sorts or hashes every loan of the windows) unless the table's own key rules them out: a
primary key, unique constraint or unique index (on columns, without a predicate) within those
two columns, on an engine that enforces it. Their count is 0 then, as the statement would find.

The counts run before a collect's other statements: those reading a window they find nothing to
leave out of do not test its loans again (:func:`known_usable`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from sqlalchemy import Connection, FromClause, Index, Table, UniqueConstraint

from riskmon.collect.engines import EngineProfile
from riskmon.collect.request import CollectRequest
from riskmon.collect.selection import (
    QueryColumns,
    duplicate_counts,
    exclusion_counts,
    invalid_pd_counts,
    statement_groups,
)
from riskmon.records import Exclusions


def exclusions(
    connection: Connection, loans: FromClause, request: CollectRequest, engine: EngineProfile
) -> tuple[dict[str, Exclusions], CollectRequest]:
    """Per population, the loans read, those left out and the used ones that repeat an id and
    score date (none when the request names no score column); and ``request`` with the
    populations it found nothing to leave out of marked (:func:`known_usable`), which the
    count of repeats reads already."""
    if request.score is None:
        return {}, known_usable(request, {}, engine)
    out = {p.name: Exclusions(0) for p in request.populations}
    for group in statement_groups(request):
        cols = QueryColumns(loans, request, group)
        statement = exclusion_counts(cols, loans.c[request.score])
        # unweighted, the statement has no weight columns: those counts stay 0
        for code, read, null, non_finite, *rest in connection.execute(statement).all():
            counts = [int(n or 0) for n in rest]
            out_of_range = counts.pop(0) if request.score_range is not None else None
            ead_approach = counts.pop() if request.ead_approach is not None else None
            weights = dict(zip(("invalid_weight", "zero_weight"), counts, strict=False))
            out[cols.population_name(code)] = Exclusions(
                int(read),
                null_score=int(null or 0),
                non_finite_score=int(non_finite or 0),
                out_of_range=out_of_range,
                ead_approach=ead_approach,
                **weights,
            )
    checked = known_usable(request, out, engine)
    if request.id is None:
        return out, checked
    out = {name: replace(counts, duplicates=0) for name, counts in out.items()}
    if engine.enforces_keys and keyed_by(loans, (request.id, request.score_date)):
        return out, checked  # the table's key rules repeats out
    for group in statement_groups(checked):
        cols = QueryColumns(loans, checked, group)
        with engine.per_loan(connection):
            statement = duplicate_counts(
                cols, loans.c[request.id], side_by_side=engine.union_in_parallel
            )
            repeated = connection.execute(statement).all()
        for code, n in repeated:
            name = cols.population_name(code)
            out[name] = replace(out[name], duplicates=int(n or 0))
    return out, checked


def known_usable(
    request: CollectRequest, excluded: dict[str, Exclusions], engine: EngineProfile
) -> CollectRequest:
    """``request`` with its populations none of whose loans ``excluded`` counts as left out
    marked :attr:`~.CollectRequest.all_usable`, so that the statements reading them after the
    count do not test each loan's score and weight again (5–10 % of a run's database time on
    1M loans on PostgreSQL, benchmarks/whole.md). Only on an engine whose statements of one
    reading see one snapshot: elsewhere a loan written after the count would be counted
    unchecked."""
    if not engine.one_snapshot:
        return request
    usable = frozenset(name for name, counts in excluded.items() if counts.used == counts.read)
    return replace(request, all_usable=usable)


def keyed_by(loans: FromClause, columns: Collection[str]) -> bool:
    """Whether the reflected table ``loans`` has a primary key, a unique constraint or a unique
    index made of ``columns`` only (or some of them): no two of its rows share their values
    where none is NULL. False for a query or a table read as of a version (no constraints)."""
    if not isinstance(loans, Table):
        return False
    keys = [{c.name for c in loans.primary_key.columns}]
    unique = [c for c in loans.constraints if isinstance(c, UniqueConstraint)]
    keys += [{c.name for c in u.columns} for u in unique]
    keys += [{c.name for c in i.columns} for i in loans.indexes if _unique_on_columns(i)]
    names = set(columns)
    return any(key and key <= names for key in keys)


def _unique_on_columns(index: Index) -> bool:
    """A unique index on columns (no expression) and on every row (no ``WHERE``)."""
    if not index.unique or len(index.expressions) != len(index.columns):
        return False
    return all(options.get("where") is None for options in index.dialect_options.values())


def invalid_pds(connection: Connection, loans: FromClause, read: CollectRequest) -> dict[str, int]:
    """Per day population, the loans whose PD is not one (a PD the collect does not refuse:
    what the PD sums count over all populations, kept per day)."""
    if read.pd is None or read.pd.strict or not any(v.sums for v in read.variables):
        return {}
    out: dict[str, int] = {}
    for group in statement_groups(read):
        cols = QueryColumns(loans, read, group)
        for code, n in connection.execute(invalid_pd_counts(cols)).all():
            out[cols.population_name(code)] = int(n or 0)
    return out


def with_copies(request: CollectRequest, excluded: dict[str, Exclusions]) -> dict[str, Exclusions]:
    """``excluded`` with the counts of each population that is a copy of another (its loans,
    :attr:`~.request.Population.copy_of`): those of the population it copies."""
    copies = {c: p for p, cs in request.copies().items() for c in cs if p in excluded}
    return {**excluded, **{copy: excluded[of] for copy, of in copies.items()}}
