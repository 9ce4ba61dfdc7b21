"""A process keeps one engine per source: the sources of one URL share it, closing a source
closes its pool only, and readings one after another keep no more objects alive (SQLAlchemy's
per-dialect caches filled once, not once a run). The table reflected at each reading is the
one reflected before while its columns, keys and indexes are the same, so that the engine's
compiled statements are found again; a column or a unique index added is seen."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, Table, create_engine, text

from riskmon.collect import Source, collect
from riskmon.collect.exclusions import keyed_by
from riskmon.collect.shared_engines import MAX_ENGINES, shared_engine

from .loans import load, loan_frame, model_config
from .test_collect import request

#: readings of the same source before the objects alive are counted, and after
WARM_READINGS, MORE_READINGS = 3, 6
#: how many more objects may be alive after MORE_READINGS readings than after WARM_READINGS:
#: the collector's and the interpreter's own bookkeeping; a new engine a reading kept about
#: 3,000 objects more on PostgreSQL (its reflection queries), so 6 readings 18,000
LIVE_OBJECTS_SLACK = 500


@pytest.fixture
def sqlite_loans(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=5, n=200))
    return url


def test_the_sources_of_one_url_share_an_engine_and_close_only_its_pool(
    sqlite_loans: str,
) -> None:
    model = model_config(sqlite_loans)
    with Source(model) as first:
        first.check_columns()
        assert first.engine.pool.checkedin() == 1  # the reading gave its connection back
    assert first.engine.pool.checkedin() == 0  # closed with the source
    with Source(model) as second:
        assert second.engine is first.engine
        second.check_columns()  # reads again through a new pool
        assert second.engine.pool.checkedin() == 1


def test_another_url_or_password_is_another_engine(tmp_path: Path, sqlite_loans: str) -> None:
    other = f"sqlite:///{tmp_path / 'other.db'}"
    load(other, loan_frame(seed=6, n=50))
    with Source(model_config(sqlite_loans)) as a, Source(model_config(other)) as b:
        assert a.engine is not b.engine
    first = shared_engine(("test", "postgresql://u:one@h/db"), lambda: _engine(tmp_path, "one"))
    second = shared_engine(("test", "postgresql://u:two@h/db"), lambda: _engine(tmp_path, "two"))
    assert first is not second


def test_at_most_max_engines_are_kept_the_least_recently_used_let_go(tmp_path: Path) -> None:
    made: list[Engine] = []

    def make(i: int) -> Callable[[], Engine]:
        def create() -> Engine:
            engine = _engine(tmp_path, str(i))
            made.append(engine)
            return engine

        return create

    first = shared_engine(("bound", 0), make(0))
    for i in range(1, MAX_ENGINES):
        shared_engine(("bound", i), make(i))
    assert shared_engine(("bound", 0), make(0)) is first  # used again: now the most recent
    shared_engine(("bound", MAX_ENGINES), make(MAX_ENGINES))  # one too many: ("bound", 1) goes
    assert shared_engine(("bound", 0), make(0)) is first
    assert len(made) == MAX_ENGINES + 1
    shared_engine(("bound", 1), make(1))
    assert len(made) == MAX_ENGINES + 2  # made again


def test_a_forked_child_makes_its_own_engine(sqlite_loans: str) -> None:
    model = model_config(sqlite_loans)
    with Source(model) as parent:
        parent.check_columns()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one byte, 1 if it got a new engine that reads
        try:
            with Source(model) as child:
                child.check_columns()
                os.write(write, b"1" if child.engine is not parent.engine else b"0")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"1"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    with Source(model) as again:
        assert again.engine is parent.engine  # the parent's is still kept


@pytest.mark.postgres
def test_readings_one_after_another_keep_no_more_objects_alive(postgres_url: str) -> None:
    load(postgres_url, loan_frame(seed=7, n=300))
    model = model_config(postgres_url)

    def live_after(readings: int) -> int:
        for _ in range(readings):
            with Source(model) as source:
                source.check_columns()  # reflects the table: PostgreSQL's catalogue queries
        gc.collect()
        return len(gc.get_objects())

    warm = live_after(WARM_READINGS)
    assert live_after(MORE_READINGS) - warm < LIVE_OBJECTS_SLACK


def _reflected(model_url: str) -> Table:
    with Source(model_config(model_url)) as source:
        table = source.check_columns()
    assert isinstance(table, Table)
    return table


def test_a_table_reflected_again_is_the_same_table_until_it_changes(sqlite_loans: str) -> None:
    first = _reflected(sqlite_loans)
    assert _reflected(sqlite_loans) is first
    assert not keyed_by(first, ["loan_id", "score_date"])
    with create_engine(sqlite_loans).begin() as connection:  # the owner adds a unique index
        connection.execute(text("CREATE UNIQUE INDEX by_id ON loans (loan_id, score_date)"))
    keyed = _reflected(sqlite_loans)
    assert keyed is not first
    assert keyed_by(keyed, ["loan_id", "score_date"])
    with create_engine(sqlite_loans).begin() as connection:  # and a column
        connection.execute(text("ALTER TABLE loans ADD COLUMN note VARCHAR(20)"))
    widened = _reflected(sqlite_loans)
    assert "note" in widened.columns
    assert "note" not in keyed.columns
    assert _reflected(sqlite_loans) is widened


def test_collects_one_after_another_compile_their_statements_once(
    database: tuple[str, str],
) -> None:
    dialect, url = database
    load(url, loan_frame(seed=8, n=400))
    model = model_config(url)
    with Source(model) as source:
        if not source.engine.dialect.supports_statement_cache:
            pytest.skip(f"{dialect}'s SQLAlchemy dialect compiles every statement anew")
    cached = []
    for _ in range(3):
        with Source(model) as source:
            collect(source, request())
            cache = source.engine._compiled_cache
            assert cache is not None
            cached.append(len(cache))
    assert cached[0] > 0
    assert cached[2] == cached[1] == cached[0]  # the same statements found again


def _engine(tmp_path: Path, name: str) -> Engine:
    return create_engine(f"sqlite:///{tmp_path / name}.db")
