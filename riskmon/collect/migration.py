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
riskmon knows runs it (no ``FULL OUTER JOIN``, which MariaDB lacks). Streaming: the tagged rows
read in obligor order, a chunk at a time, each obligor's rows completed across chunk boundaries,
so memory holds one chunk; the database sorts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
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

from riskmon.collect.binsql import bin_expression, category_text
from riskmon.collect.engines import EngineProfile
from riskmon.collect.selection import QueryColumns, disjoint_groups
from riskmon.collect.tables import (
    CollectRequest,
    ColumnDataError,
    Migrations,
    MigrationTables,
    Variable,
    segment_key,
)
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
    _count_unlinked(connection, loans, request, tally)
    return tally


def _count_unlinked(
    connection: Connection, loans: FromClause, request: MigrationRequest, tally: Tally
) -> None:
    for code, n in connection.execute(_unlinked(loans, request)).all():
        tally.no_obligor[int(code)] += int(n)


# --------------------------------------------------------------------------- streaming

#: rows per chunk of the streaming reader
DEFAULT_CHUNK_ROWS = 20_000


def stream(
    connection: Connection,
    loans: FromClause,
    request: MigrationRequest,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> Tally:
    """Count the migrations from the rows, read in obligor order a chunk at a time."""
    tables = request.tables
    cols = QueryColumns(loans, tables, tables.populations)
    obligor = loans.c[request.obligor]
    grade = request.grade
    raw = cols.loans.c[grade.column]
    assert grade.binning is not None
    value = category_text(raw) if grade.binning.kind == "categorical" else raw
    weight = [] if cols.weight is None else [cols.weight]
    query = (
        select(obligor, cols.population, cols.date, value, cols.label, *weight, *cols.segments)
        .select_from(loans)
        .where(cols.where, obligor.is_not(None))
        .order_by(obligor, cols.population, cols.date)
    )
    names = ["obligor", "snapshot", "score_date", "value", "label"]
    names += ["w"] if weight else []
    names += [f"segment_{i}" for i in range(len(tables.segments))]
    tally = Tally(request)
    assign = _assigner(request)
    result = connection.execution_options(stream_results=True, yield_per=chunk_rows).execute(query)
    held: pd.DataFrame | None = None
    for chunk in result.partitions(chunk_rows):
        frame = pd.DataFrame.from_records(list(chunk), columns=names)
        if held is not None:
            frame = pd.concat([held, frame], ignore_index=True)
        # the last obligor of the chunk may go on in the next one
        last = frame["obligor"].iloc[-1]
        ends = (frame["obligor"] == last).to_numpy()
        held = frame[ends]
        _add_obligors(tally, frame[~ends], assign)
    if held is not None:
        _add_obligors(tally, held, assign)
    _count_unlinked(connection, loans, request, tally)
    return tally


def _assigner(request: MigrationRequest) -> Callable[[Any], Any]:
    """Each value's grade bin, as the SQL of :func:`bin_expression` assigns it."""
    grade = request.grade
    binning = grade.binning
    assert binning is not None
    pd_source = request.tables.pd

    def assign(values: Any) -> Any:
        if grade.on_pd and pd_source is not None:
            numbers = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(float)
            values = pd_source.of(numbers)
        try:
            return binning.assign(np.asarray(values, dtype=object))
        except InvalidDataError as exc:
            raise ColumnDataError(grade.column, str(exc)) from None

    return assign


def _add_obligors(tally: Tally, frame: pd.DataFrame, assign: Callable[[Any], Any]) -> None:
    """Add the whole obligors of ``frame`` (rows sorted by obligor, snapshot, score date)."""
    if frame.empty:
        return
    frame = frame.assign(snapshot=frame["snapshot"].astype(int), grade=assign(frame["value"]))
    frame = frame.drop(columns="value")
    by = ["obligor", "snapshot"]
    latest = frame[frame["score_date"] == frame.groupby(by)["score_date"].transform("max")]
    rows = latest.groupby(by).size().rename("rows")
    first = latest.groupby(by).head(1).set_index(by).join(rows)
    wide = first.unstack("snapshot")  # noqa: PD010 (one row per cell: nothing to aggregate)
    fields = [c for c in first.columns if c != "score_date"]
    wide = wide.reindex(columns=pd.MultiIndex.from_product([fields, [START, END]]))
    present = [wide[("rows", i)].notna().to_numpy() for i in (START, END)]
    side = np.where(present[START], START, END)
    n_segments = sum(c.startswith("segment_") for c in fields)
    keys = pd.DataFrame(
        {
            "p0": present[START],
            "p1": present[END],
            "d0": present[START] & (wide[("rows", START)].fillna(0).to_numpy() > 1),
            "d1": present[END] & (wide[("rows", END)].fillna(0).to_numpy() > 1),
            "g0": wide[("grade", START)].to_numpy(dtype=object),
            "g1": wide[("grade", END)].to_numpy(dtype=object),
            "y0": wide[("label", START)].to_numpy(dtype=object),
        }
        | {
            f"segment_{i}": np.where(
                side == START,
                wide[(f"segment_{i}", START)].to_numpy(dtype=object),
                wide[(f"segment_{i}", END)].to_numpy(dtype=object),
            )
            for i in range(n_segments)
        }
    )
    for column in keys.columns[4:]:
        keys[column] = [_none(v) for v in keys[column]]
    w = None
    if "w" in fields:
        chosen = np.where(side == START, wide[("w", START)], wide[("w", END)])
        values = pd.to_numeric(pd.Series(chosen), errors="coerce").to_numpy(np.float64)
        invalid = np.isnan(values) | (values < 0)
        tally.invalid_weights += int(invalid.sum())
        w = np.where(invalid, 0.0, values)
    summed = keys.assign(n=1, w=1.0 if w is None else w)
    grouped = summed.groupby(list(keys.columns), dropna=False, sort=False)[["n", "w"]].sum()
    for combination, (n, weight) in grouped.iterrows():
        p0, p1, d0, d1, g0, g1, y0, *segments = (_none(v) for v in combination)
        tally.add(
            present=(bool(p0), bool(p1)),
            duplicate=(bool(d0), bool(d1)),
            grades=(g0, g1),
            label=y0,
            segment_values=segments,
            n=int(n),
            w=None if w is None else float(weight),
        )


def _none(value: Any) -> Any:
    """A value as SQL returns it: NULL (NaN, None, NA) as None, numpy scalars as Python's."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _weight(value: Any) -> float | None:
    number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
    return None if pd.isna(number) or number < 0 else float(number)
