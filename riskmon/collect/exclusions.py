"""Each population's loans read and left out, and the loans whose PD is not one, counted where
the loans live (a pass by day: per day population, so that a day's cells hold them)."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import Connection, FromClause

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
) -> dict[str, Exclusions]:
    """Per population, the loans read, those left out and the used ones that repeat an id and
    score date (none when the request names no score column)."""
    if request.score is None:
        return {}
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
        if request.id is None:
            continue
        with engine.per_loan(connection):
            repeated = connection.execute(duplicate_counts(cols, loans.c[request.id])).all()
        for name in cols.population_names:
            out[name] = replace(out[name], duplicates=0)
        for code, n in repeated:
            name = cols.population_name(code)
            out[name] = replace(out[name], duplicates=int(n or 0))
    return out


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
