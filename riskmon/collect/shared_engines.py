"""One engine per source a process reads, kept for the process's life.

SQLAlchemy means an :class:`~sqlalchemy.engine.Engine` to live as long as the process, and keeps
caches per engine and per dialect: each engine's compiled statements, and on PostgreSQL the
catalogue queries of reflection, memoised with ``functools.lru_cache`` on the dialect's methods
(so each cache holds the dialect it was filled for until later entries evict it). A new engine
for every run fills them anew each time, and what the earlier engines filled stays referenced
until evicted: a process running one date after another (``riskmon backfill``, the scheduler)
kept about 3,450 more objects alive with each run, which every later full collection of the
garbage collector walked (sqlalchemy#4560 describes the same with many engines). Each
:class:`~riskmon.collect.source.Source` therefore takes its engine from here, keyed by all the
engine is made of, and gives its connections back when it closes (``Engine.dispose``: the pool
closed and replaced, no connection left open between runs; the dialect, its caches and the
engine's listeners stay).

A source's table is reflected at each reading as before (a column, key or index added since
is seen), but :func:`kept_table` hands back the table reflected before when nothing it
describes changed: SQLAlchemy's cache keys hold the ``Table`` object itself, so a new one each
run would make every statement of the run new to the kept engine's cache of compiled statements
(500 of them kept, 13 more each run of the benchmark's model).

At most :data:`MAX_ENGINES` are kept, the least recently used let go first. A forked child
starts with none (its parent's pooled connections are left to the parent).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import ClassVar

from sqlalchemy import Engine, Table, UniqueConstraint

#: the most engines kept at once (distinct source URLs and connect arguments): a configuration
#: rarely reads from more, and an engine let go is made again when needed
MAX_ENGINES = 32

_Tables = weakref.WeakKeyDictionary[Engine, dict[Hashable, tuple[Hashable, Table]]]


class _Kept:
    """This process's engines, and the lock that guards them."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    engines: ClassVar[OrderedDict[Hashable, Engine]] = OrderedDict()
    #: per engine, the tables reflected through it by (schema, name), with what they describe
    tables: ClassVar[_Tables] = _Tables()


def shared_engine(key: Hashable, create: Callable[[], Engine]) -> Engine:
    """The engine kept for ``key``, made by ``create`` (and kept) the first time; ``create``
    runs under the lock, so that two threads asking for one source get one engine."""
    with _Kept.lock:
        engine = _Kept.engines.get(key)
        if engine is None:
            engine = _Kept.engines[key] = create()
            while len(_Kept.engines) > MAX_ENGINES:
                _Kept.engines.popitem(last=False)
        else:
            _Kept.engines.move_to_end(key)
        return engine


def kept_table(engine: Engine, reflected: Table) -> Table:
    """``reflected`` (just reflected through ``engine``), or the table reflected through it
    before when that one describes the same columns, keys and indexes."""
    described = _described(reflected)
    with _Kept.lock:
        tables = _Kept.tables.setdefault(engine, {})
        kept = tables.get((reflected.schema, reflected.name))
        if kept is not None and kept[0] == described:
            return kept[1]
        tables[(reflected.schema, reflected.name)] = (described, reflected)
        return reflected


def _described(table: Table) -> Hashable:
    """What a reading uses of a reflected table: its columns (name, type, nullable), its
    primary key, its unique constraints and its indexes (columns or expressions, uniqueness,
    each dialect's options such as a partial index's ``WHERE``)."""
    columns = tuple((c.name, repr(c.type), c.nullable) for c in table.columns)
    primary = tuple(c.name for c in table.primary_key.columns)
    unique = sorted(
        tuple(c.name for c in u.columns)
        for u in table.constraints
        if isinstance(u, UniqueConstraint)
    )
    indexes = sorted(
        (
            str(i.name),
            bool(i.unique),
            tuple(str(e) for e in i.expressions),
            repr(sorted((d, sorted(map(repr, o.items()))) for d, o in i.dialect_options.items())),
        )
        for i in table.indexes
    )
    return columns, primary, tuple(unique), tuple(indexes)


def _forget_in_child() -> None:
    # the child must not close or reuse the parent's pooled connections: each pool is let go
    # without closing them (SQLAlchemy's advice for engines that cross a fork); the lock is
    # new, as another thread of the parent may have held it
    for engine in _Kept.engines.values():
        engine.dispose(close=False)
    _Kept.engines = OrderedDict()
    _Kept.tables = _Tables()
    _Kept.lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)
