"""Engines for the metric store, with the per-dialect settings riskmon relies on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from riskmon.errors import StoreError
from riskmon.redact import database_url, mask_url, redact

#: how long SQLite waits for another writer before giving up, in milliseconds
SQLITE_BUSY_TIMEOUT_MS = 30_000


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # ON DELETE CASCADE only works with foreign keys on; WAL lets reports read during a run.
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def store_engine(url: str, **kwargs: Any) -> Engine:
    """An engine on the metric store at ``url`` (no connection is made yet)."""
    try:
        engine = create_engine(database_url(url), pool_pre_ping=True, **kwargs)
    except (ArgumentError, NoSuchModuleError, ImportError, ValueError) as exc:
        raise StoreError(
            f"cannot use metric store URL {mask_url(url)}: {redact(str(exc))}"
        ) from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def sqlite_file(engine: Engine) -> Path | None:
    """The file of a store on SQLite (None for another database, or one in memory)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return None if database.startswith("file:") else Path(database)


def _begin_immediate(connection: Connection) -> None:
    # IMMEDIATE: the write lock is taken at once, so a migration waits for a run writing
    # (busy_timeout) instead of failing half-way when it first writes
    connection.exec_driver_sql("BEGIN IMMEDIATE")


@contextmanager
def sqlite_transactional_ddl(connection: Connection) -> Iterator[Connection]:
    """``connection`` (on SQLite) with every transaction a real one, DDL included.

    pysqlite's own transaction handling begins a transaction before INSERT, UPDATE and
    DELETE only: a CREATE or ALTER TABLE runs outside any, committed at once, so a process
    killed half-way through a migration leaves its DDL without its version bump. As
    SQLAlchemy's documentation recommends for SQLite, pysqlite's handling is switched off
    (``isolation_level = None``) and each transaction SQLAlchemy begins emits ``BEGIN``.

    Foreign keys are off meanwhile, as SQLite's procedure for schema changes requires: a
    migration that rebuilds a table (Alembic's batch mode copies it, drops the old one and
    renames the copy) would otherwise delete the rows of every table referring to it
    ``ON DELETE CASCADE``. The migration checks them before it commits
    (:func:`foreign_key_violations`). The connection gets its settings back afterwards.
    """
    driver = connection.connection.driver_connection
    assert driver is not None, "a checked-out connection has its DBAPI connection"
    # PRAGMA foreign_keys is a no-op inside a transaction
    assert not connection.in_transaction(), "a migration connection starts outside one"
    saved = driver.isolation_level
    driver.isolation_level = None
    driver.execute("PRAGMA foreign_keys=OFF")
    event.listen(connection, "begin", _begin_immediate)
    try:
        yield connection
    finally:
        event.remove(connection, "begin", _begin_immediate)
        if connection.in_transaction():
            connection.rollback()
        driver.execute("PRAGMA foreign_keys=ON")
        driver.isolation_level = saved


def foreign_key_violations(connection: Connection, *, limit: int = 5) -> list[str]:
    """The rows of a SQLite store that refer to a row that does not exist, in words (at most
    ``limit``; empty on another database, whose foreign keys are never off)."""
    if connection.dialect.name != "sqlite":
        return []
    rows = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    return [
        f"{table} row {rowid} refers to a missing row of {parent}"
        for table, rowid, parent, _ in rows[:limit]
    ]


@contextmanager
def opened_store(url: str) -> Iterator[Engine]:
    """An engine on the store at ``url``, disposed (its connections closed) afterwards."""
    engine = store_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()
