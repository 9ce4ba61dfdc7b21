"""What a source reading ran: each statement's hash and the rows it returned.

:class:`Ledger` listens to one connection (``after_execute``): for each statement it keeps the
SHA-256 of its SQL text with its bound values, as the database received them, and counts the
rows riskmon fetched from its result, as they are fetched (the result's fetch strategy is
wrapped, which counts rows in every way they are read: all at once, one by one, in chunks).
A run stores the list with its provenance, so that a figure can be traced to the statements
whose count tables it was computed from.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, event
from sqlalchemy.engine import CursorResult


@dataclass
class StatementEntry:
    """One statement: its hash and the rows read from its result so far."""

    sql_sha256: str
    rows: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"sql_sha256": self.sql_sha256, "rows": self.rows}


def statement_hash(sql: str, parameters: Any) -> str:
    """The SHA-256 of a statement's SQL text and its bound values (as JSON, values that JSON
    cannot hold as their text).

    >>> statement_hash("SELECT 1", {}) == statement_hash("SELECT 1", {})
    True
    >>> statement_hash("SELECT ?", [1]) != statement_hash("SELECT ?", [2])
    True
    """
    bound = json.dumps(parameters, sort_keys=True, default=str)
    return hashlib.sha256(f"{sql}\n{bound}".encode("utf-8", "surrogatepass")).hexdigest()


class _Counting:
    """A result's fetch strategy that counts the rows it hands out (SQLAlchemy's own strategy
    does the fetching)."""

    def __init__(self, inner: Any, entry: StatementEntry) -> None:
        self.inner = inner
        self.entry = entry

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def yield_per(self, result: Any, cursor: Any, num: int) -> None:
        result.cursor_strategy = self.inner
        self.inner.yield_per(result, cursor, num)
        self.inner = result.cursor_strategy  # a buffered strategy may replace it
        result.cursor_strategy = self

    def fetchone(self, result: Any, cursor: Any, hard_close: bool = False) -> Any:
        row = self.inner.fetchone(result, cursor, hard_close)
        self.entry.rows += row is not None
        return row

    def fetchmany(self, result: Any, cursor: Any, size: int | None = None) -> Any:
        rows = self.inner.fetchmany(result, cursor, size)
        self.entry.rows += len(rows)
        return rows

    def fetchall(self, result: Any, cursor: Any) -> Any:
        rows = self.inner.fetchall(result, cursor)
        self.entry.rows += len(rows)
        return rows


class Ledger:
    """The statements run on one connection while it is listened to."""

    def __init__(self) -> None:
        self.entries: list[StatementEntry] = []

    def _executed(self, conn: Connection, context: Any, result: Any) -> None:
        entry = StatementEntry(statement_hash(context.statement, context.parameters))
        self.entries.append(entry)
        if isinstance(result, CursorResult) and result.returns_rows:
            result.cursor_strategy = _Counting(result.cursor_strategy, entry)  # type: ignore[assignment]

    def listen(self, connection: Connection) -> None:
        """Record every statement ``connection`` runs from now on."""

        def after_execute(
            conn: Connection, _clause: Any, _multi: Any, _params: Any, _opts: Any, result: Any
        ) -> None:
            self._executed(conn, result.context, result)

        event.listen(connection, "after_execute", after_execute)

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.entries]
