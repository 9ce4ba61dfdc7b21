"""Fingerprints of the source's score days: whether a day read before still holds the rows it
held then.

A night reads again the days it read before they settled, for late or corrected rows
(:func:`riskmon.collect.days.fresh_days`); on most nights none came. Before reading, a pass
takes the fingerprint of each such day — its rows' count and the sum of a hash of each row's
columns (the columns the model reads), one ``GROUP BY`` on the score date per range of days —
and keeps the stored cells of the days whose fingerprint is the one stored with them
(:meth:`riskmon.collect.days.DayPlan.unchanged`). A late row changes the count; a corrected,
added or removed row changes the sum but where the hashes of the rows before and after
collide (about 2^-64 a row on PostgreSQL, DuckDB and Spark, 2^-40 on SQLite).

The fingerprint is taken in the reading's transaction, before the days are read: a row written
between the two is in the cells but not in the fingerprint, so the next night finds the day
changed and reads it again (never the other way round).

The hash is the engine's own (:attr:`~riskmon.collect.profile.EngineProfile.row_hash`) and sees
every value exactly: PostgreSQL hashes the row's text (a ``float8`` written to be read back
exactly), DuckDB and Spark hash the typed values, SQLite a Python function registered on the
connection (SQLite writes a ``REAL`` as text to 15 digits). An engine without one (MariaDB,
whose floats lose digits as text; the warehouses riskmon cannot test) reads those days again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    DECIMAL,
    Boolean,
    Connection,
    Date,
    DateTime,
    Float,
    FromClause,
    Integer,
    Numeric,
    String,
    Text,
    cast,
    func,
    literal,
    select,
)
from sqlalchemy.dialects.postgresql import CITEXT
from sqlalchemy.sql.elements import ColumnElement

from riskmon.collect.days import DayPlan, as_day, ranges
from riskmon.collect.profile import EngineProfile, RowHash


def recheck(
    connection: Connection,
    loans: FromClause,
    score_date: str,
    columns: Iterable[str],
    days: DayPlan,
    profile: EngineProfile,
) -> DayPlan:
    """``days`` once the fingerprints of its printed days are taken over ``columns`` (those of
    ``loans`` the model reads), where the engine hashes rows: the days whose rows did not
    change since they were read are kept, not read again (:meth:`DayPlan.unchanged`)."""
    if profile.row_hash is None or not days.printed:
        return days
    present = set(columns) & set(loans.c.keys())
    prints = fingerprints(connection, loans, score_date, present, days.printed, profile.row_hash)
    return days if prints is None else days.unchanged(prints)


def fingerprints(
    connection: Connection,
    loans: FromClause,
    score_date: str,
    columns: Iterable[str],
    days: Iterable[dt.date],
    row_hash: RowHash,
) -> dict[dt.date, str] | None:
    """Each of ``days``' fingerprint, ``"<rows>:<sum of the rows' hashes>"`` (``"0:0"``: no
    row), over ``columns`` of ``loans``; one statement per range of consecutive days, so that
    each reads one range of score dates (an index range scan on PostgreSQL). None: the server
    cannot hash rows."""
    wanted = sorted(set(days))
    date = loans.c[score_date]
    row = [loans.c[name] for name in sorted(set(columns) | {score_date})]
    expression = row_hash(connection, row)
    if expression is None:
        return None
    # summed exactly: a day of 30,000 64-bit hashes needs 79 bits (PyHive writes a Numeric
    # without its digits, a DECIMAL with them)
    hashed: ColumnElement[Any] = cast(expression, DECIMAL(38, 0))
    counts: dict[dt.date, list[int]] = {}
    for window in ranges(wanted):
        statement = (
            select(date, func.count(), func.sum(hashed)).where(window.contains(date)).group_by(date)
        )
        for value, n, total in connection.execute(statement):
            summed = counts.setdefault(as_day(value), [0, 0])
            summed[0] += int(n)
            summed[1] += int(total or 0)
    return {day: "{}:{}".format(*counts.get(day, (0, 0))) for day in wanted}


# ------------------------------------------------------------------------ the engines' hashes
#: the column types whose every value PostgreSQL hashes by equality (``hash_record_extended``
#: uses each type's extended hash function: one that GROUP BY would group by); any other type,
#: an explicit collation or a query's untyped columns: the row's text is hashed instead
_HASHED_BY_VALUE = (Integer, Numeric, Float, String, Date, DateTime, Boolean)


def _hashed_by_value(column: ColumnElement[Any]) -> bool:
    kind = column.type
    if isinstance(kind, String) and (kind.collation is not None or isinstance(kind, CITEXT)):
        return False  # citext hashes by value only from its version 1.6
    return isinstance(kind, _HASHED_BY_VALUE)


def postgresql_row_hash(
    connection: Connection, row: Sequence[ColumnElement[Any]]
) -> ColumnElement[Any] | None:
    """PostgreSQL: a 64-bit hash of the row. From PostgreSQL 14, where every column has a type
    hashed by value, ``hash_record_extended`` (about three times quicker than hashing the
    text) hashed once more: the record's hash is a linear sum of its values' hashes, so two
    rows exchanging a value would keep the day's sum. Otherwise the hash of the row's text (a
    record's text quotes what needs it and leaves NULL empty, so two rows have the same text
    only if their values are the same), its floats written to be read back exactly
    (``extra_float_digits`` 1, PostgreSQL's default, in the reading's transaction whatever the
    server's own setting). None before PostgreSQL 11, which has no ``hashtextextended``."""
    version = connection.dialect.server_version_info
    if version is not None and version < (11,):
        return None
    if version is not None and version >= (14,) and all(map(_hashed_by_value, row)):
        record = func.hash_record_extended(func.row(*row), literal(0))
        return func.hashint8extended(record, literal(0))
    connection.exec_driver_sql("SET LOCAL extra_float_digits = 1")
    return func.hashtextextended(cast(func.row(*row), Text), literal(0))


def duckdb_row_hash(
    connection: Connection, row: Sequence[ColumnElement[Any]]
) -> ColumnElement[Any]:
    """DuckDB: its 64-bit hash of the typed values, NULLs included."""
    return func.hash(*row)


def spark_row_hash(connection: Connection, row: Sequence[ColumnElement[Any]]) -> ColumnElement[Any]:
    """Spark SQL: its 64-bit xxHash of the typed values; it passes over a NULL, so each value
    is followed by whether it is NULL (a value moved to the next column changes the hash)."""
    return func.xxhash64(*(part for c in row for part in (c, c.is_(None))))


#: the name SQLite's row hash is registered under, on each reading's connection
SQLITE_ROW_HASH = "riskmon_row_hash"


def _sqlite_row_hash(*values: Any) -> int:
    """A 40-bit hash of the values as Python reads them (a day of 2^23 rows sums within
    SQLite's 64-bit integers)."""
    digest = hashlib.blake2b(repr(values).encode(), digest_size=5).digest()
    return int.from_bytes(digest, "big")


def sqlite_row_hash(
    connection: Connection, row: Sequence[ColumnElement[Any]]
) -> ColumnElement[Any]:
    """SQLite: a Python function over the row's values (registered on the connection first)."""
    driver = connection.connection.driver_connection
    assert driver is not None
    driver.create_function(SQLITE_ROW_HASH, -1, _sqlite_row_hash, deterministic=True)
    hashed: ColumnElement[Any] = getattr(func, SQLITE_ROW_HASH)(*row)
    return hashed
