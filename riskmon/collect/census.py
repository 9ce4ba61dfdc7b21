"""The levels of a categorical characteristic that fall in its last bin — levels the baseline
never had, or, where the baseline kept only its most frequent levels, every other level — named
with their loans, the largest first.

One statement per characteristic, on the database, in every strategy: the rows of the bin
(:func:`~riskmon.collect.binsql.bin_expression`, so at most ``bins.max_levels`` bound
parameters however many levels there are) grouped on the level's text, the number of levels
counted over that grouping (``COUNT(*) OVER ()``) and only the largest returned.

But where the binning statements group a categorical on its text (``packed`` on an engine
whose collation compares text exactly), their rows already hold every level of the census
population with its loans and weight: its census is counted off them (:class:`LevelTally`),
without a statement of its own.

A pass by day (:mod:`.days`) keeps the levels of an unseen bin per score day instead, every one
of them (:func:`day_levels`: a day's new levels are few), and sums the days of the census's
window (:func:`summed`): the same levels and counts as one statement over the window. An
"other" bin, which may hold thousands of levels a day, is still read over the whole window.

Levels of equal loans are ordered by their text: by the engine's collation where a statement
reads the census, by Python's comparison where the census is counted off rows or days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, FromClause, Select, func, select

from riskmon.collect.binsql import bin_expression, category_text
from riskmon.collect.daycells import DayCells
from riskmon.collect.days import days_of, split_name
from riskmon.collect.request import CollectRequest, Variable
from riskmon.collect.selection import QueryColumns, statement_groups
from riskmon.records import LevelCensus, LevelCount

#: levels named per characteristic whose bins hold every baseline level (the unseen bin)
LARGEST = 10
#: levels read at most from an "other" bin, to tell the baseline's own from new ones
OTHER_LIMIT = 100_000


def _levels(cols: QueryColumns, variable: Variable, *, by_population: bool) -> Select[Any]:
    """Each level of ``variable``'s last bin among the rows of ``cols``: (level, loans,
    weight), led by the row's population with ``by_population``."""
    binning = variable.binning
    assert binning is not None
    assert binning.unseen_index is not None
    column = cols.column(variable)
    level = category_text(column).label("level")
    weight = func.sum(cols.weight) if cols.weight is not None else func.count()
    populations = [cols.population] if by_population else []
    return (
        select(*populations, level, func.count().label("n"), weight.label("w"))
        .select_from(cols.loans)
        .where(cols.where, bin_expression(column, binning) == binning.unseen_index)
        .group_by(*(cols.grouped_population if by_population else []), level)
    )


def census_statement(cols: QueryColumns, variable: Variable, limit: int) -> Select[Any]:
    """The largest ``limit`` levels of ``variable``'s last bin among the rows of ``cols``:
    (level, loans, weight, levels in all)."""
    grouped = _levels(cols, variable, by_population=False).subquery("levels")
    return (
        select(grouped.c.level, grouped.c.n, grouped.c.w, func.count().over().label("n_levels"))
        .order_by(grouped.c.n.desc(), grouped.c.level)
        .limit(limit)
    )


def _largest(
    loans: Mapping[str, int], weight: Mapping[str, float], limit: int, n_levels: int
) -> LevelCensus:
    """The ``limit`` levels of the most loans (ties by their text) of ``n_levels`` in all."""
    largest = sorted(loans, key=lambda level: (-loans[level], level))[:limit]
    return LevelCensus(
        tuple(LevelCount(level, loans[level], weight[level]) for level in largest), n_levels
    )


def _limit(variable: Variable) -> int:
    assert variable.binning is not None
    return OTHER_LIMIT if variable.binning.other else LARGEST


class LevelTally:
    """The census of the variables a statement grouped on their text, counted off its rows:
    per variable, the loans and weight of each level of its last bin in the census population
    (what :func:`census` reads with a statement of its own)."""

    def __init__(self, request: CollectRequest) -> None:
        self.population = request.census_population
        chosen = {v.name: v for v in request.variables}
        self._wanted = {n: chosen[n] for n in request.census if _counted(chosen.get(n))}
        self._loans: dict[str, dict[str, int]] = {}
        self._weight: dict[str, dict[str, float]] = {}

    def watch(
        self, texts: Sequence[tuple[int, Variable]], populations: Collection[str]
    ) -> list[tuple[int, str, int]]:
        """Of the variables a statement over ``populations`` groups on their text (each with
        its position among a row's keys), those whose census its rows give: (position, name,
        the last bin)."""
        if self.population not in populations:
            return []
        out: list[tuple[int, str, int]] = []
        for i, variable in texts:
            binning = variable.binning
            if variable.name in self._wanted and binning and binning.unseen_index is not None:
                self._loans.setdefault(variable.name, {})
                self._weight.setdefault(variable.name, {})
                out.append((i, variable.name, binning.unseen_index))
        return out

    def add(self, name: str, level: str, loans: int, weight: float) -> None:
        """A row's ``loans`` and ``weight`` of ``level`` of ``name``'s last bin."""
        counted, weighed = self._loans[name], self._weight[name]
        counted[level] = counted.get(level, 0) + loans
        weighed[level] = weighed.get(level, 0.0) + weight

    def censuses(self) -> dict[str, LevelCensus]:
        """The census of each variable watched."""
        return {
            name: _largest(loans, self._weight[name], _limit(self._wanted[name]), len(loans))
            for name, loans in self._loans.items()
        }


def _counted(variable: Variable | None) -> bool:
    binning = None if variable is None else variable.binning
    return binning is not None and binning.kind == "categorical"


def daily(request: CollectRequest) -> list[str]:
    """The census's variables whose levels a day's cells keep: those whose last bin holds the
    levels the baseline never had (an "other" bin is read over the whole window)."""
    chosen = {v.name: v for v in request.variables}
    return [
        name
        for name in request.census
        if _counted(chosen.get(name)) and not chosen[name].binning.other  # type: ignore[union-attr]
    ]


def census(
    connection: Connection,
    loans: FromClause,
    request: CollectRequest,
    *,
    skip: Collection[str] = (),
    counted: Mapping[str, LevelCensus] | None = None,
) -> dict[str, LevelCensus]:
    """Each of ``request.census``'s categorical variables but ``skip``: the levels of its last
    bin in the population ``request.census_population``, read by a statement unless
    ``counted`` (a :class:`LevelTally`'s) holds them already."""
    counted = counted or {}
    population = next((p for p in request.populations if p.name == request.census_population), None)
    if population is None:
        return {}
    cols = QueryColumns(loans, request, [population])
    out: dict[str, LevelCensus] = {}
    chosen = {v.name: v for v in request.variables}
    for name in request.census:
        variable = chosen.get(name)
        if name in counted:
            out[name] = counted[name]
            continue
        if name in skip or variable is None or not _counted(variable):
            continue
        rows = connection.execute(census_statement(cols, variable, _limit(variable))).all()
        out[name] = LevelCensus(
            tuple(LevelCount(str(r[0]), int(r[1]), float(r[2])) for r in rows),
            int(rows[0][3]) if rows else 0,
        )
    return out


def day_levels(
    connection: Connection, loans: FromClause, read: CollectRequest, request: CollectRequest
) -> dict[str, dict[str, list[LevelCount]]]:
    """Per day population of ``request.census_population`` in ``read`` (a pass by day), the
    levels of each :func:`daily` variable's last bin: all of them, none when the day has none."""
    names = daily(request)
    days = [
        p for p in read.populations if names and split_name(p.name)[0] == request.census_population
    ]
    out: dict[str, dict[str, list[LevelCount]]] = {p.name: {n: [] for n in names} for p in days}
    if not days:
        return out
    chosen = {v.name: v for v in read.variables}
    census_days = replace(read, populations=days)
    for group in statement_groups(census_days):
        cols = QueryColumns(loans, census_days, group)
        for name in names:
            for code, level, n, w in connection.execute(
                _levels(cols, chosen[name], by_population=True)
            ):
                out[cols.population_name(code)][name].append(
                    LevelCount(str(level), int(n), float(w))
                )
    return out


def summed(
    request: CollectRequest, days: Mapping[tuple[str, dt.date], DayCells]
) -> dict[str, LevelCensus]:
    """The census of each :func:`daily` variable summed over the cells of the census's window
    (``days`` holds every day of it): as :func:`census` reads it over the window, the largest
    first (ties by the level's text)."""
    names = daily(request)
    population = next((p for p in request.populations if p.name == request.census_population), None)
    if population is None or not names:
        return {}
    loans: dict[str, dict[str, int]] = {name: {} for name in names}
    weight: dict[str, dict[str, float]] = {name: {} for name in names}
    for day in days_of(population.window):
        kept = days[(population.name, day)].levels
        for name in names:
            for count in kept[name]:
                loans[name][count.level] = loans[name].get(count.level, 0) + count.n
                weight[name][count.level] = weight[name].get(count.level, 0.0) + count.weight
    return {name: _largest(loans[name], weight[name], LARGEST, len(loans[name])) for name in names}
