"""What one collect statement selects: the loans in its populations' windows, and the
population, segment and label columns it groups them by.

Both ways of collecting read the loans through a :class:`QueryColumns` — the SQL shapes of
:mod:`.pushdown` group on it, the chunked reader of :mod:`.stream` selects it — so that both
tag the same rows with the same population.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Double,
    FromClause,
    Integer,
    Select,
    and_,
    case,
    cast,
    func,
    literal,
    null,
    or_,
    select,
    union_all,
)

from riskmon.collect.days import as_day, ranges
from riskmon.collect.moments import moment_measures
from riskmon.collect.request import CollectRequest, PdSource, Population, Variable
from riskmon.collect.usable import finite, flagged, in_range, usable_rows
from riskmon.plan import ONE_DAY


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


def statement_groups(request: CollectRequest) -> list[list[Population]]:
    """The populations each statement of ``request`` reads: no two overlapping windows in
    one; a request by day, one run of consecutive days each, so that each statement's ``WHERE``
    is one range of score dates (an index range scan, where ``OR``-ed ranges made PostgreSQL
    scan the table)."""
    if not request.by_day:
        return disjoint_groups(request.populations)
    groups: list[list[Population]] = []
    for population in sorted(request.populations, key=lambda p: p.window.start):
        last = groups[-1][-1] if groups else None
        if last is not None and last.window.end + ONE_DAY == population.window.start:
            groups[-1].append(population)
        else:
            groups.append([population])
    return groups


@dataclass(frozen=True)
class CellSums:
    """The sums a statement's rows carry after the counts: the PD sums (led by the count of
    invalid PDs), then the target's moments (led by the count of invalid targets)."""

    pd: bool = False
    moments: bool = False


class QueryColumns:
    """The expressions one statement groups by."""

    def __init__(self, loans: FromClause, request: CollectRequest, group: Sequence[Population]):
        c = loans.c
        self.request = request
        self.date = c[request.score_date]
        # a model without a binary outcome (LGD, CCF, EAD) has no label: NULL on every row,
        # selected but not grouped on (a constant in GROUP BY means a position to some engines)
        label = c[request.label] if request.label is not None else cast(null(), Integer)
        self.label = label.label("label")
        self.grouped_label = [self.label] if request.label is not None else []
        self.weight = c[request.weight] if request.weight else None
        self.segments = [c[name].label(f"segment_{i}") for i, name in enumerate(request.segments)]
        # each row's population as its position in the group (see population_name): one
        # window, a constant, not grouped on; several, a CASE that is grouped on. An integer
        # rather than the population's name, because grouping on text costs more (DuckDB:
        # about a third of each GROUP BY, benchmarks/collect.md)
        self.population_names = [p.name for p in group]
        self.windows = [p.window for p in group]
        self._by_day: dict[dt.date, str] | None = None
        if request.by_day:
            # day populations: the score date itself is grouped on, and read back as a day
            self._by_day = {p.window.start: p.name for p in group}
            self.population = self.date.label("population")
            self.grouped_population = [self.population]
            self.in_windows = or_(*(w.contains(self.date) for w in ranges(self._by_day)))
        else:
            self.population = (
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
            self.in_windows = or_(*(p.window.contains(self.date) for p in group))
        score = c[request.score] if request.score else None
        self.flag = c[request.ead_approach] if request.ead_approach else None
        # what a loan must satisfy to count; nothing where every loan was counted usable
        self.checked = not set(self.population_names) <= request.all_usable
        usable = usable_rows(
            score,
            self.weight,
            exclude=request.exclude_invalid,
            score_range=request.score_range,
            flag=self.flag,
        )
        self.usable = usable if self.checked else []
        self.where = and_(self.in_windows, *self.usable)
        self.loans = loans
        self.pd = None if request.pd is None else pd_expression(c[request.pd.column], request.pd)
        # the continuous target and its prediction, the score, as doubles
        self.target: ColumnElement[Any] | None = None
        self.prediction: ColumnElement[Any] | None = None
        self.downturn: ColumnElement[Any] | None = None
        if request.target is not None and request.score is not None:
            self.target = cast(c[request.target], Double)
            self.prediction = cast(c[request.score], Double)
            if request.downturn is not None:
                self.downturn = cast(c[request.downturn], Double)

    def population_name(self, code: Any) -> str:
        """The name of the population a row's ``population`` column codes."""
        if self._by_day is not None:
            return self._by_day[as_day(code)]
        return self.population_names[int(code)]

    def column(self, variable: Variable) -> ColumnElement[Any]:
        """The source column ``variable`` is read from (the PD, for a variable binned on it)."""
        if variable.on_pd and self.pd is not None:
            return self.pd
        return self.loans.c[variable.column]

    def measures(self, *, check_weights: bool = True) -> list[ColumnElement[Any]]:
        """Row count and summed weight; the invalid-weight count only where it is read (once
        per population: every variable sees the same rows) and can be other than 0 (neither
        left out by the ``WHERE`` nor ruled out by :attr:`CollectRequest.all_usable`)."""
        out: list[ColumnElement[Any]] = [func.count().label("n")]
        if self.weight is not None:
            counted = check_weights and self.checked and not self.request.exclude_invalid
            invalid: ColumnElement[Any] = (
                func.sum(case((or_(self.weight.is_(None), self.weight < 0), 1), else_=0))
                if counted
                else literal(0)
            )
            out += [func.sum(self.weight).label("w"), invalid.label("bad_weights")]
        return out

    def cell_sums(self, variables: Sequence[Variable]) -> CellSums:
        """The sums the rows of ``variables`` carry: the PD sums when one of them has
        ``sums`` (and the request a PD), the moments when one has ``moments`` (and a target)."""
        return CellSums(
            pd=self.pd is not None and any(v.sums for v in variables),
            moments=self.target is not None and any(v.moments for v in variables),
        )

    def extra_measures(
        self,
        which: CellSums,
        *,
        of: Variable | None = None,
        pd: ColumnElement[Any] | None = None,
        target: ColumnElement[Any] | None = None,
        prediction: ColumnElement[Any] | None = None,
        weight: ColumnElement[Any] | None = None,
        downturn: ColumnElement[Any] | None = None,
    ) -> list[ColumnElement[Any]]:
        """The sums ``which`` asks for, in that order; with ``of`` (the one variable the rows
        are of), NULLs for those it does not ask for. The other arguments stand for the loans'
        own columns when the sums are taken over a subquery."""
        out: list[ColumnElement[Any]] = []
        if which.pd:
            out += self.sum_measures(summed=of is None or of.sums, pd=pd, weight=weight)
        if which.moments:
            y = self.target if target is None else target
            s = self.prediction if prediction is None else prediction
            u = self.downturn if downturn is None else downturn
            assert y is not None
            assert s is not None
            w = self.weight if weight is None else weight
            summed = of is None or of.moments
            # led by the count of realised targets NaN or infinite, which fail the collect
            bad = and_(y.is_not(None), ~finite(y))
            invalid = func.sum(case((bad, 1), else_=0)) if summed else cast(null(), Double)
            out += [invalid.label("m_bad"), *moment_measures(y, s, w, summed=summed, downturn=u)]
        return out

    def sum_measures(
        self,
        *,
        summed: bool,
        pd: ColumnElement[Any] | None = None,
        weight: ColumnElement[Any] | None = None,
    ) -> list[ColumnElement[Any]]:
        """The PD sums of a cell (see :data:`~riskmon.metrics.PD_SUMS`), led by the count of
        rows whose PD is NULL or outside [0, 1]; NULLs where ``summed`` is false (a statement
        whose rows are not summed, in a ``UNION ALL`` with one whose rows are). Nothing when
        the request sums no PD. ``pd`` and ``weight`` stand for the loans' own columns when
        the sums are taken over a subquery."""
        if self.pd is None:
            return []
        names = ["bad_pd", "p", "p2", "p3", "p4"]
        if self.weight is not None:
            names += ["w2", "wp", "wp2"]
        if not summed:
            return [cast(null(), Double).label(name) for name in names]
        p = self.pd if pd is None else pd
        w = self.weight if weight is None else weight
        valid = and_(p.is_not(None), p >= 0, p <= 1)
        out: list[ColumnElement[Any]] = [func.sum(case((valid, 0), else_=1)), func.sum(p)]
        out += [func.sum(p * p), func.sum(p * p * p), func.sum(p * p * p * p)]
        if w is not None:
            out += [func.sum(w * w), func.sum(w * p), func.sum(w * p * p)]
        return [expression.label(name) for expression, name in zip(out, names, strict=True)]


def exclusion_counts(cols: QueryColumns, score: ColumnElement[Any]) -> Select[Any]:
    """A statement counting, per population, the loans read and those left out, each once:
    no score, else a score NaN or infinite, else a score outside the request's
    ``score_range``, else a weight NULL or negative, else a weight of 0, else a facility under
    the EAD approach (the columns in :class:`~riskmon.records.Exclusions`' order; none for the
    weights when unweighted, none for the flag without ``ead_approach``)."""
    one, zero = literal(1, Integer()), literal(0, Integer())
    measures: list[ColumnElement[Any]] = [func.count()]
    measures.append(func.sum(case((score.is_(None), one), else_=zero)))
    not_finite = and_(score.is_not(None), ~finite(score))
    measures.append(func.sum(case((not_finite, one), else_=zero)))
    bounds = cols.request.score_range
    scored = finite(score)
    if bounds is not None:
        measures.append(func.sum(case((and_(scored, ~in_range(score, bounds)), one), else_=zero)))
        scored = and_(scored, in_range(score, bounds))
    weight = cols.weight
    if weight is not None:
        invalid = and_(scored, or_(weight.is_(None), weight < 0))
        measures += [
            func.sum(case((invalid, one), else_=zero)),
            func.sum(case((and_(scored, weight == 0), one), else_=zero)),
        ]
        scored = and_(scored, weight > 0)
    if cols.flag is not None:
        measures.append(func.sum(case((and_(scored, flagged(cols.flag)), one), else_=zero)))
    return (
        select(cols.population, *measures)
        .select_from(cols.loans)
        .where(cols.in_windows)
        .group_by(*cols.grouped_population)
    )


def numeric_columns(request: CollectRequest) -> list[str]:
    """The columns read as numbers: binned on numeric bins (not on the PD, which is cast), the
    weight and the continuous target (cast, where text would be read as a number)."""
    out: list[str] = []
    for variable in request.variables:
        for v in (variable, variable.crossed):
            binning = None if v is None else v.binning
            if v is not None and binning is not None and binning.kind == "numeric" and not v.on_pd:
                out.append(v.column)
    if request.weight:
        out.append(request.weight)
    if request.target:
        out.append(request.target)
    return list(dict.fromkeys(out))


def text_counts(cols: QueryColumns, columns: Sequence[str]) -> Select[Any]:
    """A statement counting, per column, the rows whose value is text (SQLite's ``typeof``)."""
    one, zero = literal(1, Integer()), literal(0, Integer())
    c = cols.loans.c
    return (
        select(*(func.sum(case((func.typeof(c[n]) == "text", one), else_=zero)) for n in columns))
        .select_from(cols.loans)
        .where(cols.where)
    )


def duplicate_counts(
    cols: QueryColumns, loan_id: ColumnElement[Any], *, side_by_side: bool = False
) -> Select[Any]:
    """A statement counting, per population, the used loans that repeat the id and score date
    of another: one ``GROUP BY`` on (id, score date), its groups of more than one summed; with
    ``side_by_side`` (windows, not days) one per population, joined by ``UNION ALL``, so that an
    engine running a union's branches in parallel (PostgreSQL) hashes each window apart."""
    one = literal(1, Integer())
    if side_by_side and cols.grouped_population and not cols.request.by_day:
        branches = [
            select(literal(i, Integer()).label("population"), func.count().label("n"))
            .select_from(cols.loans)
            .where(window.contains(cols.date), *cols.usable, loan_id.is_not(None))
            .group_by(loan_id, cols.date)
            .having(func.count() > one)
            for i, window in enumerate(cols.windows)
        ]
        repeated = union_all(*branches).subquery("repeated")
    else:
        repeated = (
            select(cols.population, func.count().label("n"))
            .select_from(cols.loans)
            .where(cols.where, loan_id.is_not(None))
            .group_by(*cols.grouped_population, loan_id, cols.date)
            .having(func.count() > one)
            .subquery("repeated")
        )
    r = repeated.c
    return select(r.population, func.sum(r.n - one)).group_by(r.population)


def invalid_pd_counts(cols: QueryColumns) -> Select[Any]:
    """Per population, the used loans whose PD is NULL or outside [0, 1] (a day population's
    share of what the PD sums' leading count counts over every population)."""
    assert cols.pd is not None
    valid = and_(cols.pd.is_not(None), cols.pd >= 0, cols.pd <= 1)
    return (
        select(cols.population, func.sum(case((valid, 0), else_=1)))
        .select_from(cols.loans)
        .where(cols.where)
        .group_by(*cols.grouped_population)
    )


def pd_expression(column: ColumnElement[Any], source: PdSource) -> ColumnElement[Any]:
    """Each loan's PD as SQL: the column (as a double), or its points mapped to a PD."""
    value = cast(column, Double)
    if not source.from_points:
        return value
    assert source.odds is not None
    assert source.pdo is not None
    assert source.points is not None
    slope = literal(math.log(2.0) / source.pdo, Double)
    odds = literal(source.odds, Double) * func.exp((value - literal(source.points, Double)) * slope)
    return literal(1.0, Double) / (literal(1.0, Double) + odds)
