"""Engines for the metric store, with the per-dialect settings riskmon relies on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
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


@contextmanager
def opened_store(url: str) -> Iterator[Engine]:
    """An engine on the store at ``url``, disposed (its connections closed) afterwards."""
    engine = store_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()
