"""Vintage curves counted by the database: one ``GROUP BY`` vintage × months on book.

Each loan scored in the request's window belongs to the vintage of its score month; for each
event (default, first 30+, 60+, 90+ days past due: a date column each) its MOB is the months
between the score month and the event's month, ``(year·12 + month)(event) − (year·12 +
month)(score)``, NULL when the event has not happened or happened after ``known_by`` (a run as
of a date knows nothing later). One statement groups the loans by their segment columns,
vintage, label and each event's MOB, counting rows and summing weights and the PD's Σp and Σp²;
:func:`run` folds its rows into a :class:`~riskmon.metrics.VintageTable` per segment (the whole
population, and each segment column on its own). An event before the score month counts at MOB
0; one later than ``max_mob`` is beyond the curve. The statement runs in the collect pass's
read transaction, after the count tables (:func:`riskmon.collect.collect`), whatever the
collect strategy: it is a plain ``GROUP BY`` on every engine.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import (
    Connection,
    Date,
    FromClause,
    Integer,
    case,
    cast,
    extract,
    func,
    literal,
    select,
)
from sqlalchemy.sql.elements import ColumnElement

from riskmon.collect.request import CollectRequest, Population
from riskmon.collect.selection import QueryColumns
from riskmon.collect.tables import segment_key
from riskmon.metrics import VintageTable
from riskmon.plan import ONE_DAY, DateWindow
from riskmon.records import ALL

#: the events of a vintage curve: the default, then the first delinquencies
EVENTS = ("default", "dpd30", "dpd60", "dpd90")


@dataclass(frozen=True)
class VintageRequest:
    """What a vintage pass reads: the collect request's columns (score date, label, weight,
    segments, PD), the vintages' ``window`` of score dates, the events' date columns
    (``events``: name → column), what is known by ``known_by``, and MOBs up to ``max_mob``."""

    request: CollectRequest
    window: DateWindow
    known_by: dt.date
    events: Mapping[str, str]
    max_mob: int = 12


def month_index(value: ColumnElement[Any]) -> ColumnElement[Any]:
    """year·12 + month − 1 of a date, as SQL."""
    year = cast(extract("year", value), Integer)
    month = cast(extract("month", value), Integer)
    return year * literal(12, Integer()) + month - literal(1, Integer())


def statement(loans: FromClause, vintage: VintageRequest) -> Any:
    """The one ``GROUP BY`` of a vintage pass."""
    cols = QueryColumns(loans, vintage.request, [Population("vintages", vintage.window, False)])
    start = month_index(cols.date)
    known = literal(vintage.known_by + ONE_DAY, Date())
    mobs = []
    for i, name in enumerate(vintage.events.values()):
        when = loans.c[name]
        mob = case((and_known(when, known), month_index(when) - start), else_=None)
        mobs.append(mob.label(f"mob_{i}"))
    keys = [*cols.segments, start.label("vintage"), cols.label, *mobs]
    measures: list[ColumnElement[Any]] = [func.count().label("n")]
    if cols.weight is not None:
        measures.append(func.sum(cols.weight).label("w"))
    if cols.pd is not None:
        measures += [func.sum(cols.pd).label("p"), func.sum(cols.pd * cols.pd).label("p2")]
    return select(*keys, *measures).where(cols.where).group_by(*keys)


def and_known(when: ColumnElement[Any], known: ColumnElement[Any]) -> ColumnElement[bool]:
    return when.is_not(None) & (when < known)


def run(
    connection: Connection, loans: FromClause, vintage: VintageRequest
) -> dict[str, VintageTable]:
    """The vintage tables per segment, counted by the database."""
    rows = connection.execute(statement(loans, vintage)).all()
    return fold(rows, vintage)


def _label(index: int) -> str:
    year, month = divmod(int(index), 12)
    return f"{year:04d}-{month + 1:02d}"


def fold(rows: Any, vintage: VintageRequest) -> dict[str, VintageTable]:
    """The statement's rows as one table per segment (rows: segments, vintage, label, MOBs,
    n, [w], [p, p2])."""
    request = vintage.request
    k = len(request.segments)
    events = list(vintage.events)
    first = vintage.window.start.year * 12 + vintage.window.start.month - 1
    last = vintage.window.end.year * 12 + vintage.window.end.month - 1
    count = last - first + 1
    m = vintage.max_mob + 1
    weighted = request.weight is not None
    summed = request.pd is not None
    tables: dict[str, dict[str, Any]] = {}

    def blank() -> dict[str, Any]:
        out: dict[str, Any] = {a: np.zeros(count) for a in ("n", "w", "p", "p2", "labeled", "bads")}
        out["events"] = {e: np.zeros((count, m)) for e in events}
        out["weights"] = {e: np.zeros((count, m)) for e in events}
        return out

    for row in rows:
        values = tuple(row)
        segments, (v, label), mobs = (
            values[:k],
            values[k : k + 2],
            values[k + 2 : k + 2 + len(events)],
        )
        rest = values[k + 2 + len(events) :]
        n = float(rest[0])
        w = float(rest[1] or 0.0) if weighted else n
        p, p2 = (float(rest[-2] or 0.0), float(rest[-1] or 0.0)) if summed else (0.0, 0.0)
        i = int(v) - first
        keys = [ALL, *(segment_key(c, s) for c, s in zip(request.segments, segments, strict=True))]
        for key in keys:
            t = tables.setdefault(key, blank())
            t["n"][i] += n
            t["w"][i] += w
            t["p"][i] += p
            t["p2"][i] += p2
            if label is not None:
                t["labeled"][i] += n
                t["bads"][i] += n if int(label) == 1 else 0.0
            for e, mob in zip(events, mobs, strict=True):
                if mob is not None and int(mob) < m:
                    t["events"][e][i, max(int(mob), 0)] += n
                    t["weights"][e][i, max(int(mob), 0)] += w
    labels = tuple(_label(first + i) for i in range(count))
    return {
        key: VintageTable(
            vintages=labels,
            n=t["n"],
            w=t["w"],
            p=t["p"],
            p2=t["p2"],
            labeled=t["labeled"],
            bads=t["bads"],
            events=t["events"],
            event_weights=t["weights"],
            max_mob=vintage.max_mob,
        )
        for key, t in tables.items()
    }
