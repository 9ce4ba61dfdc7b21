"""A statement executed with ``chunked_rows`` (:mod:`riskmon.collect.chunked`) on a real
PostgreSQL: the same rows as a whole result, never more than a chunk held by libpq, an empty
result, a result left unread or failing half-way, and a driver that cannot chunk."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Connection, Engine, Executable, create_engine, event, text
from sqlalchemy.exc import DBAPIError

from riskmon.collect.chunked import CHUNKED_ROWS, chunk_results
from riskmon.collect.ledger import Ledger

pytestmark = pytest.mark.postgres

SERIES = text("SELECT g, g * 0.5 AS half, 'r' || g AS name FROM generate_series(1, :n) AS g")


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    made = create_engine(postgres_url)
    assert chunk_results(made)
    yield made
    made.dispose()


def _read(connection: Connection, statement: Executable, into: list[object]) -> None:
    """Every row of ``statement``'s result into ``into``, 100 at a time."""
    with connection.execute(statement) as result:
        for batch in result.partitions(100):
            into.extend(batch)


def _series(n: int, **options: int) -> Executable:
    return SERIES.bindparams(n=n).execution_options(**options)


def test_a_chunked_result_holds_every_row_and_libpq_only_a_chunk_of_them(engine: Engine) -> None:
    n, chunk = 25_003, 1_000
    with engine.connect() as connection:
        whole = connection.execute(_series(n)).all()
        ledger = Ledger()
        ledger.listen(connection)
        held = []
        read = []
        with connection.execute(_series(n, **{CHUNKED_ROWS: chunk})) as result:
            assert list(result.keys()) == ["g", "half", "name"]
            for batch in result.partitions(3_001):
                read.extend(batch)
                held.append(result.cursor.pgresult.ntuples)
        assert read == whole
        assert len(whole) == n
        assert max(held) == chunk  # libpq never held more than one chunk
        assert ledger.entries[0].rows == n
        # the same connection goes on: the next statement is whole again
        assert connection.execute(text("SELECT count(*) FROM generate_series(1, 7)")).scalar() == 7


def test_fetchone_fetchall_and_iteration_read_a_chunked_result_in_order(engine: Engine) -> None:
    with engine.connect() as connection:
        result = connection.execute(_series(2_500, **{CHUNKED_ROWS: 100}))
        first = result.fetchone()
        some = result.fetchmany(150)
        rest = result.fetchall()
        assert [first, *some, *rest] == connection.execute(_series(2_500)).all()
        raw = connection.connection.driver_connection
        assert raw is not None
        cursor = raw.cursor()
        cursor.chunk_rows = 7
        cursor.execute("SELECT g FROM generate_series(1, 30) AS g")
        assert [row[0] for row in cursor] == list(range(1, 31))
        cursor.close()


def test_an_empty_chunked_result_returns_no_rows_and_the_connection_goes_on(
    engine: Engine,
) -> None:
    with engine.connect() as connection:
        with connection.execute(_series(0, **{CHUNKED_ROWS: 100})) as result:
            assert not result.returns_rows
        assert connection.execute(text("SELECT 1")).scalar() == 1


def test_a_result_left_unread_is_cancelled_and_the_connection_takes_the_next_statement(
    engine: Engine,
) -> None:
    """Ten million rows asked for, one chunk read: closing the result cancels the statement
    rather than receiving the rest (which ends its transaction, as an error would), and the
    connection takes the next one at once."""
    with engine.connect() as connection:
        started = time.monotonic()
        with connection.execute(_series(10_000_000, **{CHUNKED_ROWS: 1_000})) as result:
            assert len(result.fetchmany(10)) == 10
        with pytest.raises(DBAPIError, match="transaction is aborted"):
            connection.execute(text("SELECT 2"))
        connection.rollback()
        assert connection.execute(text("SELECT 2")).scalar() == 2
        assert time.monotonic() - started < 30


def _bounded(connection: Connection, action: Callable[[], object]) -> object:
    """``action()`` on a thread of its own, failing the test if it has not returned within
    30 s (a connection waiting on a stream left open would wait for good): the connection is
    then invalidated (closed without a rollback, which would wait too), so that the test's
    teardown does not wait on it either."""
    done: list[object] = []
    failed: list[BaseException] = []

    def call() -> None:
        try:
            done.append(action())
        except BaseException as exc:  # handed to the test below
            failed.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(30.0)
    if thread.is_alive():
        connection.invalidate()
        pytest.fail("the connection was still waiting after 30 s")
    if failed:
        raise failed[0]
    return done[0]


def _leave_open(connection: Connection) -> None:
    """A chunked result of ten million rows, one chunk read, then dropped unclosed: its
    cursor and its stream hold each other, so dropping it closes nothing until the garbage
    collector runs (paused by the tests that call this)."""
    result = connection.execute(_series(10_000_000, **{CHUNKED_ROWS: 1_000}))
    assert len(result.fetchmany(3)) == 3


@pytest.mark.parametrize("then", ["statement", "rollback", "commit", "back_to_the_pool"])
def test_a_stream_left_open_does_not_hold_the_connection(engine: Engine, then: str) -> None:
    """psycopg holds a connection while a stream is open on it: a result dropped unread, or an
    error between a statement and its reading, must not leave the next statement, a commit,
    a rollback or the pool's reset waiting on it."""
    gc.disable()
    try:
        with engine.connect() as connection:
            _leave_open(connection)
            if then == "statement":  # the dropped statement's stream is cancelled first
                with pytest.raises(DBAPIError, match="transaction is aborted"):
                    _bounded(connection, lambda: connection.execute(text("SELECT 5")))
                _bounded(connection, connection.rollback)
            elif then == "rollback":
                _bounded(connection, connection.rollback)
            elif then == "commit":
                _bounded(connection, connection.commit)
                _bounded(connection, connection.rollback)  # the cancel may have aborted it
            else:  # back to the pool, whose reset rolls the connection back
                _bounded(connection, connection.close)
                assert engine.pool.checkedin() == 1
                with engine.connect() as again:  # the pooled connection serves again
                    assert _bounded(again, lambda: again.execute(text("SELECT 6")).scalar()) == 6
                return
            assert _bounded(connection, lambda: connection.execute(text("SELECT 5")).scalar()) == 5
    finally:
        gc.enable()


def test_an_error_between_a_chunked_statement_and_its_reading_leaves_the_connection_usable(
    engine: Engine,
) -> None:
    """A listener failing after the statement ran (as a signal's exception could arrive
    there): the result never reaches the caller, whose rollback must still go through."""

    def fail(_conn: object, clause: object, *_: object) -> None:
        if "generate_series" in str(clause):
            raise RuntimeError("failed after the statement ran")

    gc.disable()
    try:
        with engine.connect() as connection:
            event.listen(connection, "after_execute", fail)
            with pytest.raises(RuntimeError, match="after the statement ran"):
                connection.execute(_series(10_000_000, **{CHUNKED_ROWS: 1_000}))
            event.remove(connection, "after_execute", fail)
            _bounded(connection, connection.rollback)
            assert _bounded(connection, lambda: connection.execute(text("SELECT 7")).scalar()) == 7
    finally:
        gc.enable()


def test_executemany_leaves_the_next_statement_whole(engine: Engine) -> None:
    with engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        cursor = raw.cursor()
        cursor.execute("CREATE TEMPORARY TABLE t (g integer)")
        cursor.chunk_rows = 2
        cursor.executemany("INSERT INTO t VALUES (%s)", [(1,), (2,), (3,)])
        cursor.execute("SELECT g FROM t WHERE g > 5")  # an empty result, described as whole
        assert cursor.description is not None
        assert cursor.fetchall() == []
        cursor.close()


def test_a_statement_failing_after_its_first_chunks_raises_and_the_connection_recovers(
    engine: Engine,
) -> None:
    failing = text(
        "SELECT g, 1.0 / (5000 - g) AS x FROM generate_series(1, 6000) AS g"
    ).execution_options(**{CHUNKED_ROWS: 100})
    with engine.connect() as connection:
        read: list[object] = []
        with pytest.raises(DBAPIError, match="division by zero"):
            _read(connection, failing, read)
        assert 0 < len(read) < 5000
        connection.rollback()
        assert connection.execute(text("SELECT 3")).scalar() == 3


def test_a_cancel_from_another_thread_ends_a_chunked_read(engine: Engine) -> None:
    """The read deadline cancels through the DBAPI connection from its watchdog thread: a
    chunked read waiting on the server ends with the cancel, not at the statement's end."""
    slow = text(
        "SELECT g, pg_sleep(CASE WHEN g = 3 THEN 60 ELSE 0 END) FROM generate_series(1, 5) AS g"
    ).execution_options(**{CHUNKED_ROWS: 1})
    with engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        timer = threading.Timer(1.0, raw.cancel)
        timer.start()
        started = time.monotonic()
        try:
            with pytest.raises(DBAPIError, match="cancel"):
                _read(connection, slow, [])
        finally:
            timer.cancel()
        assert time.monotonic() - started < 30
        connection.rollback()
        assert connection.execute(text("SELECT 4")).scalar() == 4


def test_a_driver_that_cannot_chunk_is_left_as_it_is() -> None:
    engine = create_engine("sqlite://")
    assert not chunk_results(engine)
    with engine.connect() as connection:
        rows = connection.execute(_series_sqlite().execution_options(**{CHUNKED_ROWS: 2})).all()
    assert rows == [(1,), (2,), (3,)]


def _series_sqlite() -> Executable:
    return text("SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3")
