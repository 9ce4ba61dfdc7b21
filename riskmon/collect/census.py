"""The levels of a categorical characteristic that fall in its last bin — levels the baseline
never had, or, where the baseline kept only its most frequent levels, every other level — named
with their loans, the largest first.

One statement per characteristic, on the database in every strategy: the rows of the bin
(:func:`~riskmon.collect.binsql.bin_expression`, so at most ``bins.max_levels`` bound
parameters however many levels there are) grouped on the level's text, the number of levels
counted over that grouping (``COUNT(*) OVER ()``) and only the largest returned.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, FromClause, Select, func, select

from riskmon.collect.binsql import bin_expression, category_text
from riskmon.collect.request import CollectRequest, Variable
from riskmon.collect.selection import QueryColumns
from riskmon.records import LevelCensus, LevelCount

#: levels named per characteristic whose bins hold every baseline level (the unseen bin)
LARGEST = 10
#: levels read at most from an "other" bin, to tell the baseline's own from new ones
OTHER_LIMIT = 100_000


def census_statement(cols: QueryColumns, variable: Variable, limit: int) -> Select[Any]:
    """The largest ``limit`` levels of ``variable``'s last bin among the rows of ``cols``:
    (level, loans, weight, levels in all)."""
    binning = variable.binning
    assert binning is not None
    assert binning.unseen_index is not None
    column = cols.column(variable)
    level = category_text(column).label("level")
    weight = func.sum(cols.weight) if cols.weight is not None else func.count()
    grouped = (
        select(level, func.count().label("n"), weight.label("w"))
        .select_from(cols.loans)
        .where(cols.where, bin_expression(column, binning) == binning.unseen_index)
        .group_by(level)
        .subquery("levels")
    )
    return (
        select(grouped.c.level, grouped.c.n, grouped.c.w, func.count().over().label("n_levels"))
        .order_by(grouped.c.n.desc(), grouped.c.level)
        .limit(limit)
    )


def census(
    connection: Connection, loans: FromClause, request: CollectRequest
) -> dict[str, LevelCensus]:
    """Each of ``request.census``'s categorical variables: the levels of its last bin in the
    population ``request.census_population``."""
    population = next((p for p in request.populations if p.name == request.census_population), None)
    if population is None:
        return {}
    cols = QueryColumns(loans, request, [population])
    out: dict[str, LevelCensus] = {}
    chosen = {v.name: v for v in request.variables}
    for name in request.census:
        variable = chosen.get(name)
        if variable is None or variable.binning is None or variable.binning.kind != "categorical":
            continue
        limit = OTHER_LIMIT if variable.binning.other else LARGEST
        rows = connection.execute(census_statement(cols, variable, limit)).all()
        out[name] = LevelCensus(
            tuple(LevelCount(str(r[0]), int(r[1]), float(r[2])) for r in rows),
            int(rows[0][3]) if rows else 0,
        )
    return out
