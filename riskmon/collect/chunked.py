"""A statement's result received in chunks, on PostgreSQL through psycopg.

psycopg's cursor receives a whole result before ``execute`` returns: libpq holds it in memory,
about 24 bytes a value, until the cursor moves on (a freeze's grouped statement at 5,000
segments returned 449,464 rows of 11 values, 125 MB). A server-side cursor would bound it but
loses PostgreSQL's parallel plans (``benchmarks/whole.md``). libpq's chunked-rows mode (libpq
17, psycopg 3.2: :meth:`psycopg.Cursor.stream` with ``size``) keeps the plan, whose rows the
server sends in one go, and hands them over a chunk at a time.

:func:`chunk_results` puts an engine's psycopg connections on :class:`ChunkedCursor` (a
``psycopg.Cursor`` whose ``execute`` streams when asked); a statement executed with the
execution option ``chunked_rows=N`` is then received ``N`` rows at a time, read through
SQLAlchemy's result as any other (``fetchmany``, ``partitions``). Everywhere else (another
driver, an older libpq) the option changes nothing.

While a chunked result is open its statement runs on the server: the server's
``statement_timeout`` (``source.statement_timeout_seconds``) covers the statement until its
last row is received, riskmon's handling of the rows received before included (seconds at
5,000 segments, against a default limit of 600 s). A chunked result closed before its last
row cancels its statement, which ends the transaction as an error would where the server had
not finished (the rest is not received): riskmon reads every result through, and leaves one
unread only when an error ends the reading anyway. psycopg holds the connection while a
stream is open, so a stream left open (a result dropped unread, an error between the
statement and its reading) is closed before the connection runs another statement, commits,
rolls back or goes back to the pool: nothing waits on it. A chunked statement whose result
holds no rows has no description (libpq describes the columns with the first chunk): its
SQLAlchemy result returns no rows (``result.returns_rows`` is False), which the reader takes
for an empty result.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Iterator
from functools import cache
from itertools import chain, islice
from typing import Any

from sqlalchemy import Engine, event

#: the execution option asking for a statement's result in chunks of that many rows
CHUNKED_ROWS = "chunked_rows"

#: libpq's first version with chunked-rows mode, as ``psycopg.pq.version()`` gives it
_LIBPQ_CHUNKS = 170000


@cache
def _cursor_class() -> type[Any] | None:
    """The cursor class streaming in chunks, or None where the driver cannot."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the PostgreSQL extra not installed
        return None
    sized = "size" in inspect.signature(psycopg.Cursor.stream).parameters  # psycopg 3.2
    if not sized or psycopg.pq.version() < _LIBPQ_CHUNKS:
        return None

    class ChunkedCursor(psycopg.Cursor[Any]):
        """psycopg's cursor, receiving the next statement's result ``chunk_rows`` rows at a
        time when that is set (the next ``execute`` only)."""

        chunk_rows = 0
        _rows: Iterator[Any] | None = None  # the rows of the stream being read
        _stream: Any = None  # the stream's generator, closed when left unread

        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            rows, self.chunk_rows = self.chunk_rows, 0
            end_stream(self.connection)  # this cursor's or another's on the connection
            if not rows or kwargs.get("prepare"):
                return super().execute(query, params, **kwargs)
            stream = self.stream(query, params, binary=kwargs.get("binary"), size=rows)
            # the first row runs the statement: its error raises here, as execute's would,
            # and its first chunk describes the columns
            self._stream = stream
            _open[self.connection] = weakref.ref(self)
            first = next(stream, None)
            self._rows = None if first is None else chain((first,), stream)
            return self

        def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
            self.chunk_rows = 0
            end_stream(self.connection)
            super().executemany(query, params_seq, **kwargs)

        def fetchone(self) -> Any:
            if self._rows is None:
                return super().fetchone()
            return next(self._rows, None)

        def fetchmany(self, size: int = 0) -> list[Any]:
            if self._rows is None:
                return super().fetchmany(size)
            return list(islice(self._rows, size or self.arraysize))

        def fetchall(self) -> list[Any]:
            if self._rows is None:
                return super().fetchall()
            return list(self._rows)

        def __next__(self) -> Any:
            if self._rows is None:
                return super().__next__()
            return next(self._rows)

        def close(self) -> None:
            self._end_rows()
            super().close()

        def _end_rows(self) -> None:
            """Close a stream left unread: psycopg cancels the statement and reads what
            arrived, so that the connection takes the next one."""
            stream, self._stream, self._rows = self._stream, None, None
            if stream is not None:
                stream.close()

    return ChunkedCursor


#: each psycopg connection's cursor whose stream was opened last (a stream holds the
#: connection: psycopg runs nothing else on it until the stream is closed)
_open: weakref.WeakKeyDictionary[Any, weakref.ref[Any]] = weakref.WeakKeyDictionary()


def end_stream(dbapi_connection: Any) -> None:
    """Close the stream open on ``dbapi_connection``, if any (:class:`ChunkedCursor`), so that
    the connection can run a statement, commit or roll back; its result then returns no more
    rows."""
    held = _open.pop(dbapi_connection, None)
    cursor = None if held is None else held()
    if cursor is not None:
        cursor._end_rows()


def chunk_results(engine: Engine) -> bool:
    """Let ``engine``'s statements ask for their results in chunks (``chunked_rows``); False,
    and nothing changed, where its driver cannot."""
    if engine.dialect.driver != "psycopg":
        return False
    cursor_class = _cursor_class()
    if cursor_class is None:
        return False

    def connected(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.cursor_factory = cursor_class

    def before_cursor_execute(
        _conn: Any, cursor: Any, _sql: Any, _params: Any, context: Any, _many: bool
    ) -> None:
        rows = context.execution_options.get(CHUNKED_ROWS) if context is not None else None
        if rows and isinstance(cursor, cursor_class):
            cursor.chunk_rows = int(rows)

    def before_end(conn: Any, *_: Any) -> None:  # a commit or a rollback of the connection
        # an invalidated connection has closed its DBAPI connection, streams and all (and
        # would try to reconnect if asked for it)
        if not conn.invalidated and not conn.closed:
            end_stream(conn.connection.dbapi_connection)

    def before_reset(dbapi_connection: Any, *_: Any) -> None:  # back to the pool
        end_stream(dbapi_connection)

    event.listen(engine, "connect", connected)
    event.listen(engine, "before_cursor_execute", before_cursor_execute)
    event.listen(engine, "commit", before_end)
    event.listen(engine, "rollback", before_end)
    event.listen(engine.pool, "reset", before_reset)
    return True
