"""Migration counts: each obligor's grade at the start of a horizon against its grade at its end.

A behavioural model re-scores the same obligors on every score date, so its source holds one row
per (obligor, score date). Two *snapshots* are read: the loans scored in the window one horizon
back (``start``) and in the window now (``end``). In each, an obligor's row is the one of its
latest score date; an obligor with more than one row on that date is a *duplicate*: it is left
out of the migrations and counted. A row without an obligor cannot be linked and is counted too.

Each obligor then counts once, in one cell ``(from, to)``:

- ``from`` its grade's bin at the start, or :data:`APPEARED` when it was not scored then;
- ``to`` :data:`DEFAULTED` when its start row's label is 1 (it defaulted within the performance
  window that the label covers), else its grade's bin at the end, or :data:`LEFT` when it is not
  scored now.

The bins are the grades' :class:`~riskmon.metrics.Binning` indices (the missing and unseen bins
included: an obligor without a grade is counted, not dropped). An obligor is counted in the
segments of its start row (of its end row when it appeared) and weighted by the start row's
weight (the end row's when it appeared).

Pushdown: one statement over both snapshots — each row tagged with its snapshot, ranked within
(obligor, snapshot) by score date (``RANK`` and ``COUNT`` window functions), the latest rows
pivoted to one row per obligor by a ``GROUP BY`` on the obligor, and those grouped again on
(from, to, segments): the database returns a few hundred rows, never the obligors. Every engine
riskmon knows runs it (no ``FULL OUTER JOIN``, which MariaDB lacks). Streaming, where the
statement cannot run, is :mod:`riskmon.collect.migration_stream`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Integer,
    Select,
    case,
    func,
    literal,
    or_,
    select,
)

from riskmon.collect.binsql import bin_expression
from riskmon.collect.engines import EngineProfile
from riskmon.collect.migration_tables import Migrations, MigrationTables
from riskmon.collect.request import CollectRequest, Variable
from riskmon.collect.selection import QueryColumns, disjoint_groups
from riskmon.collect.tables import segment_key
from riskmon.errors import InvalidDataError
from riskmon.records import ALL, MIGRATION_APPEARED, MIGRATION_DEFAULTED, MIGRATION_LEFT

APPEARED = MIGRATION_APPEARED
LEFT = MIGRATION_LEFT
DEFAULTED = MIGRATION_DEFAULTED
#: the snapshots, as their populations' positions in the request
START, END = 0, 1


@dataclass(frozen=True)
class MigrationRequest:
    """What a migration pass reads: two populations (the start and end snapshots, windows that
    do not overlap), one binned variable (the grades) and the column naming the obligor."""

    tables: CollectRequest
    obligor: str

    def __post_init__(self) -> None:
        start, end = self.tables.populations
        if len(disjoint_groups(self.tables.populations)) > 1:
            raise InvalidDataError(
                f"the migration's snapshots overlap: {start.window} and {end.window}"
            )
        (grade,) = self.tables.variables
        assert grade.binning is not None, "migrations are counted on a binned variable"

    @property
    def grade(self) -> Variable:
        return self.tables.variables[0]


class Tally:
    """Turns grouped rows (one per from/to/segments combination) into :class:`MigrationTables`."""

    def __init__(self, request: MigrationRequest):
        self.request = request
        self.segments: dict[str, Migrations] = {ALL: Migrations()}
        self.duplicates = [0, 0]
        self.no_obligor = [0, 0]
        self.invalid_weights = 0
        self.bad_labels: set[Any] = set()

    def add(
        self,
        *,
        present: tuple[bool, bool],
        duplicate: tuple[bool, bool],
        grades: tuple[Any, Any],
        label: Any,
        segment_values: Iterable[Any],
        n: int,
        w: float | None,
    ) -> None:
        if duplicate[START] or duplicate[END]:
            self.duplicates[START] += n if duplicate[START] else 0
            self.duplicates[END] += n if duplicate[END] else 0
            return
        if label is not None and not (label in (0, 1) and not isinstance(label, str)):
            self.bad_labels.add(label)
            return
        source = grades[START] if present[START] else None
        start = APPEARED if source is None else int(source)
        if present[START] and label is not None and int(label) == 1:
            end = DEFAULTED
        elif present[END]:
            end = int(grades[END])
        else:
            end = LEFT
        weight = float(n if w is None else w)
        rollups = [ALL]
        names = self.request.tables.segments
        rollups += [segment_key(c, v) for c, v in zip(names, segment_values, strict=True)]
        for segment in rollups:
            self.segments.setdefault(segment, Migrations()).add((start, end), n, weight)

    def result(self) -> MigrationTables:
        duplicates, unlinked = self.duplicates, self.no_obligor
        start, end = (str(p.window) for p in self.request.tables.populations)
        return MigrationTables(
            self.segments, (duplicates[0], duplicates[1]), (unlinked[0], unlinked[1]), (start, end)
        )


# --------------------------------------------------------------------------- pushdown


def _at(snapshot: ColumnElement[Any], which: int, value: ColumnElement[Any]) -> Any:
    """The value of a pivoted obligor's row in one snapshot (NULL when it has none there)."""
    return func.max(case((snapshot == literal(which, Integer), value)))


def statement(loans: FromClause, request: MigrationRequest) -> Select[Any]:
    """The one statement of a migration pass; its rows: present at the start, at the end,
    duplicate at the start, at the end, grade's bin at the start, at the end, the start's label,
    segments..., obligors, summed weight, invalid weights."""
    tables = request.tables
    cols = QueryColumns(loans, tables, tables.populations)
    obligor = loans.c[request.obligor]
    grade = request.grade
    assert grade.binning is not None
    weight = [] if cols.weight is None else [cols.weight.label("w")]
    tagged = (
        select(
            obligor.label("obligor"),
            cols.population.label("snapshot"),
            cols.date.label("score_date"),
            bin_expression(cols.column(grade), grade.binning).label("grade"),
            cols.label,
            *weight,
            *cols.segments,
        )
        .select_from(loans)
        .where(cols.where, obligor.is_not(None))
        .subquery("tagged")
    )
    t = tagged.c
    by_snapshot = (t.obligor, t.snapshot)
    ranked = select(
        tagged,
        func.rank().over(partition_by=by_snapshot, order_by=t.score_date.desc()).label("r"),
        func.count().over(partition_by=(*by_snapshot, t.score_date)).label("rows"),
    ).subquery("ranked")
    r = ranked.c
    n_segments = len(tables.segments)
    one = literal(1, Integer)
    pivot_columns = [
        _at(r.snapshot, START, one).label("p0"),
        _at(r.snapshot, END, one).label("p1"),
        _at(r.snapshot, START, r.rows).label("c0"),
        _at(r.snapshot, END, r.rows).label("c1"),
        _at(r.snapshot, START, r.grade).label("g0"),
        _at(r.snapshot, END, r.grade).label("g1"),
        _at(r.snapshot, START, r.label).label("y0"),
    ]
    if cols.weight is not None:
        pivot_columns += [
            _at(r.snapshot, START, r.w).label("w0"),
            _at(r.snapshot, END, r.w).label("w1"),
        ]
    for i in range(n_segments):
        pivot_columns += [
            _at(r.snapshot, START, r[f"segment_{i}"]).label(f"s0_{i}"),
            _at(r.snapshot, END, r[f"segment_{i}"]).label(f"s1_{i}"),
        ]
    pivot = select(*pivot_columns).where(r.r == one).group_by(r.obligor).subquery("obligors")
    p = pivot.c
    started = p.p0 == one
    keys: list[ColumnElement[Any]] = [
        p.p0,
        p.p1,
        case((p.c0 > one, one), else_=literal(0, Integer)).label("d0"),
        case((p.c1 > one, one), else_=literal(0, Integer)).label("d1"),
        p.g0,
        p.g1,
        p.y0,
    ]
    keys += [
        case((started, p[f"s0_{i}"]), else_=p[f"s1_{i}"]).label(f"segment_{i}")
        for i in range(n_segments)
    ]
    measures: list[ColumnElement[Any]] = [func.count().label("n")]
    if cols.weight is not None:
        w = case((started, p.w0), else_=p.w1)
        invalid = func.sum(case((or_(w.is_(None), w < 0), 1), else_=0))
        measures += [func.sum(w).label("w"), invalid.label("bad_weights")]
    return select(*keys, *measures).group_by(*keys)


def _unlinked(loans: FromClause, request: MigrationRequest) -> Select[Any]:
    """Rows without an obligor, per snapshot."""
    tables = request.tables
    cols = QueryColumns(loans, tables, tables.populations)
    obligor = loans.c[request.obligor]
    return (
        select(cols.population, func.count())
        .select_from(loans)
        .where(cols.where, obligor.is_(None))
        .group_by(cols.population)
    )


def run(
    connection: Connection, loans: FromClause, request: MigrationRequest, engine: EngineProfile
) -> Tally:
    """Count the migrations in the database (under the engine's migration settings)."""
    tally = Tally(request)
    s = len(request.tables.segments)
    weighted = request.tables.weight is not None
    with engine.per_loan(connection):
        rows = connection.execute(statement(loans, request)).all()
    for row in rows:
        p0, p1, d0, d1, g0, g1, y0 = row[:7]
        n, w = row[7 + s], (row[8 + s] if weighted else None)
        if weighted:
            tally.invalid_weights += int(row[9 + s] or 0)
        tally.add(
            present=(p0 is not None, p1 is not None),
            duplicate=(bool(d0), bool(d1)),
            grades=(g0, g1),
            label=y0,
            segment_values=row[7 : 7 + s],
            n=int(n),
            w=None if w is None else float(w),
        )
    count_unlinked(connection, loans, request, tally)
    return tally


def count_unlinked(
    connection: Connection, loans: FromClause, request: MigrationRequest, tally: Tally
) -> None:
    for code, n in connection.execute(_unlinked(loans, request)).all():
        tally.no_obligor[int(code)] += int(n)
