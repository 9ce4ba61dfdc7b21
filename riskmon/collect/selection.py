"""What one collect statement selects: the loans in its populations' windows, and the
population, segment and label columns it groups them by.

Both ways of collecting read the loans through a :class:`QueryColumns` — the SQL shapes of
:mod:`.pushdown` group on it, the chunked reader of :mod:`.stream` selects it — so that both
tag the same rows with the same population.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, FromClause, Integer, case, func, literal, or_

from riskmon.collect.tables import CollectRequest, Population, Variable


def disjoint_groups(populations: Sequence[Population]) -> list[list[Population]]:
    """Populations grouped so that no two windows in a group overlap."""
    groups: list[list[Population]] = []
    for population in populations:
        for group in groups:
            if all(
                population.window.end < other.window.start
                or other.window.end < population.window.start
                for other in group
            ):
                group.append(population)
                break
        else:
            groups.append([population])
    return groups


class QueryColumns:
    """The expressions one statement groups by."""

    def __init__(self, loans: FromClause, request: CollectRequest, group: Sequence[Population]):
        c = loans.c
        self.request = request
        self.date = c[request.score_date]
        self.label = c[request.label].label("label")
        self.weight = c[request.weight] if request.weight else None
        self.segments = [c[name].label(f"segment_{i}") for i, name in enumerate(request.segments)]
        # each row's population as its position in the group (see population_name): one
        # window, a constant, not grouped on; several, a CASE that is grouped on. An integer
        # rather than the population's name, because grouping on text costs more (DuckDB:
        # about a third of each GROUP BY, benchmarks/collect.md)
        self.population_names = [p.name for p in group]
        self.population: ColumnElement[Any] = (
            literal(0, Integer()).label("population")
            if len(group) == 1
            else case(
                *(
                    (p.window.contains(self.date), literal(i, Integer()))
                    for i, p in enumerate(group)
                )
            ).label("population")
        )
        self.grouped_population = [] if len(group) == 1 else [self.population]
        self.where = or_(*(p.window.contains(self.date) for p in group))
        self.loans = loans

    def population_name(self, code: Any) -> str:
        """The name of the population a row's ``population`` column codes."""
        return self.population_names[int(code)]

    def column(self, variable: Variable) -> ColumnElement[Any]:
        """The source column ``variable`` is read from."""
        return self.loans.c[variable.column]

    def measures(self, *, check_weights: bool = True) -> list[ColumnElement[Any]]:
        """Row count and summed weight; the invalid-weight count only where it is read (once
        per population: every variable sees the same rows)."""
        out: list[ColumnElement[Any]] = [func.count().label("n")]
        if self.weight is not None:
            invalid: ColumnElement[Any] = (
                func.sum(case((or_(self.weight.is_(None), self.weight < 0), 1), else_=0))
                if check_weights
                else literal(0)
            )
            out += [func.sum(self.weight).label("w"), invalid.label("bad_weights")]
        return out
