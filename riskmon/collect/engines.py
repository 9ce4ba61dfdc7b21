"""Engine profiles: everything riskmon knows about one SQL engine it reads loans from.

The SQL riskmon writes is the same SQLAlchemy Core on every engine; a profile only chooses
(DESIGN.md, "Engines"): the collect shape measured fastest there (``benchmarks/collect.md``),
which optional SQL the engine takes (``GROUPING SETS``, grouping a categorical on its text), its
session settings, how a reading is guarded (read-only, under a statement timeout), how its
timeout error reads, and which snapshot one reading sees. :func:`profile_for` finds the profile
of a SQLAlchemy dialect name. An engine riskmon has not been tested on gets :data:`GENERIC`: the
``union_all`` shape any SQL engine runs, no setting or guard riskmon cannot vouch for, and a
warning, logged once per engine, naming the guards it goes without.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, Connection, func, literal, select, text, true

from riskmon.collect.fingerprint import duckdb_row_hash, postgresql_row_hash, sqlite_row_hash
from riskmon.collect.profile import (
    GENERIC,
    CollectShape,
    EngineProfile,
    existing_file,
    group_by_position,
)
from riskmon.collect.warehouses import BIGQUERY, DATABRICKS, NOT_SNAPSHOT, SNOWFLAKE, SPARK, TRINO

log = logging.getLogger(__name__)

#: DuckDB's memory limit when the source URL sets none (``?memory_limit=...``). DuckDB runs in
#: riskmon's process and by default may take 80 % of RAM, keeping every block it has read; the
#: default collect strategy needs little (riskmon peaks at about 230-265 MB with it on 1M-10M
#: loans, benchmarks/collect.md); a larger GROUP BY spills to DuckDB's temporary directory
#: (beside the file), and the union_all and grouping_sets shapes fail with a hint to raise it
DUCKDB_MEMORY_LIMIT = "64MB"
#: DuckDB's memory limit while it groups per loan or obligor (migrations, duplicate ids), unless
#: the URL sets one: the window functions and aggregates spill to the temporary directory
#: beyond it, but fail below about 100 MB; riskmon peaks at about 200-300 MB with it on 1M-10M
#: obligor-snapshots (benchmarks/migration.md)
DUCKDB_PER_LOAN_MEMORY_LIMIT = "128MB"

#: planner settings for the collect statements on PostgreSQL, local to the read-only
#: transaction. The grouped result is small by construction (bins x segments x labels), but the
#: planner estimates the groups of a ``CASE`` from the distinct values of the column inside it,
#: so with the default ``work_mem`` it sorts every row (spilling to disk) instead of hashing.
#: Hash aggregation still spills to disk if a table really is large. Where the server compiles
#: a statement just in time (``jit``, on by default, over ``jit_above_cost``), it compiles it
#: without inlining or optimising, the costly parts of compiling (one statement of 22 ``CASE``
#: trees took 14.0 s with JIT and 6.6 s without: benchmarks/collect.md); the plain compilation
#: saves about 3 % of the packed statements' time at 1M loans (benchmarks/whole.md)
POSTGRESQL_SETTINGS = {
    "enable_sort": "off",
    "jit_inline_above_cost": "-1",
    "jit_optimize_above_cost": "-1",
}

#: PostgreSQL's ``work_mem`` at least while a statement groups per loan or obligor (the count
#: of repeated ids and score dates, the rating migrations): with the default 4MB a window of
#: 500,000 loans spills its hash table to disk (the count at 1M loans: 0.60 s against 0.76 s,
#: benchmarks/whole.md). A larger setting of the server, database, role or URL is kept; local
#: to the read-only transaction, and restored after the statement
POSTGRESQL_PER_LOAN_WORK_MEM = "32MB"

#: how many SQLite virtual-machine steps run between two checks of the time limit
SQLITE_PROGRESS_STEPS = 10_000


#: the longest riskmon lets a driver take to open a connection, within the read deadline
CONNECT_SECONDS = 30.0
#: TCP keepalive on a PostgreSQL connection: first probe after this many idle seconds, then
#: one every KEEPALIVE_INTERVAL, the connection dead after KEEPALIVE_COUNT unanswered
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 30, 10, 3


# ---------------------------------------------------------------------- PostgreSQL
def _postgresql_guard(connection: Connection, seconds: float) -> None:
    # one snapshot for every statement of the transaction: a collect pass may run several,
    # and loans written in between must not count in some tables only
    connection.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"))
    ms = max(1, int(seconds * 1000))
    connection.execute(text("SELECT set_config('statement_timeout', :ms, true)"), {"ms": str(ms)})


def _postgresql_time_zone(connection: Connection, zone: str) -> None:
    connection.execute(select(func.set_config(literal("TimeZone"), literal(zone), true())))


def _postgresql_tuning(connection: Connection) -> None:
    for name, value in POSTGRESQL_SETTINGS.items():
        connection.execute(select(func.set_config(literal(name), literal(value), true())))


@contextmanager
def _postgresql_per_loan_memory(connection: Connection) -> Iterator[None]:
    before = connection.execute(select(func.current_setting("work_mem"))).scalar_one()
    at_least = text(
        "SELECT set_config('work_mem', :least, true) "
        "WHERE pg_size_bytes(current_setting('work_mem')) < pg_size_bytes(:least)"
    )
    connection.execute(at_least, {"least": POSTGRESQL_PER_LOAN_WORK_MEM})
    try:
        yield
    finally:
        with suppress(Exception):  # a failed statement's error is the one to report
            restore = func.set_config(literal("work_mem"), literal(before), true())
            connection.execute(select(restore))


POSTGRESQL = EngineProfile(
    name="postgresql",
    dialects=frozenset({"postgresql"}),
    enforces_keys=True,
    default_shape="packed",
    snapshot="PostgreSQL REPEATABLE READ, READ ONLY transaction: one snapshot",
    one_snapshot=True,
    read_only=True,
    statement_timeout=True,
    grouping_sets=True,
    categories_by_text=True,
    union_in_parallel=True,
    guard=_postgresql_guard,
    tuning=_postgresql_tuning,
    session_time_zone=_postgresql_time_zone,
    per_loan_settings=_postgresql_per_loan_memory,
    timeout_markers=("statement timeout",),
    row_hash=postgresql_row_hash,
)


# ---------------------------------------------------------------------- MySQL, MariaDB
def _mysql_read_only(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("SET SESSION TRANSACTION READ ONLY")
    cursor.close()


def _mysql_guard(connection: Connection, seconds: float) -> None:
    if getattr(connection.dialect, "is_mariadb", False):
        connection.execute(text("SET SESSION max_statement_time = :s"), {"s": seconds})
    else:
        ms = max(1, int(seconds * 1000))
        connection.execute(text("SET SESSION max_execution_time = :ms"), {"ms": ms})


def _mysql_time_zone(connection: Connection, zone: str) -> None:
    # an offset needs no time zone tables on the server; a named zone does
    value = "+00:00" if zone == "UTC" else zone
    connection.execute(text("SET SESSION time_zone = :zone"), {"zone": value})


MYSQL = EngineProfile(
    name="mysql",
    dialects=frozenset({"mysql", "mariadb"}),
    enforces_keys=True,
    default_shape="union_all",
    # riskmon sets no isolation level here: it relies on the server's default
    snapshot="MySQL/MariaDB read-only session, InnoDB's default REPEATABLE READ: one snapshot",
    one_snapshot=True,
    read_only=True,
    statement_timeout=True,
    # the default collations ignore case, so a categorical's bin is decided by the CASE of
    # binsql, never by grouping on its text
    categories_by_text=False,
    on_connect=_mysql_read_only,
    guard=_mysql_guard,
    session_time_zone=_mysql_time_zone,
    timeout_markers=("interrupted", "max_statement_time", "max_execution_time"),
)


# ---------------------------------------------------------------------- SQLite
def _sqlite_read_only(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only = ON")
    cursor.close()


def _sqlite_guard(connection: Connection, seconds: float) -> None:
    connection.exec_driver_sql("PRAGMA query_only = ON")
    # the sqlite3 module opens no transaction for a SELECT, so each statement would read its
    # own snapshot; an explicit one holds a single snapshot until the rollback
    connection.exec_driver_sql("BEGIN")
    raw = connection.connection.dbapi_connection
    deadline = time.monotonic() + seconds
    raw.set_progress_handler(  # type: ignore[union-attr]
        lambda: int(time.monotonic() > deadline), SQLITE_PROGRESS_STEPS
    )


def _sqlite_read_only_url(url: URL) -> URL:
    path = existing_file(url)
    if path is None or url.query.get("uri"):
        return url
    # SQLite's own read-only mode: a file that vanishes meanwhile is an error, never created
    return url.set(
        database=f"file:{quote(str(path))}", query={**url.query, "mode": "ro", "uri": "true"}
    )


def _duckdb_existing_file(url: URL) -> URL:
    existing_file(url)  # opened read-only (connect_args), which DuckDB refuses for no file
    return url


SQLITE = EngineProfile(
    name="sqlite",
    dialects=frozenset({"sqlite"}),
    enforces_keys=True,
    # SQLite's GROUP BY is slower than aggregating a streamed read with numpy
    default_shape="stream",
    snapshot="SQLite one read transaction (query_only): one snapshot",
    one_snapshot=True,
    read_only=True,
    statement_timeout=True,
    on_connect=_sqlite_read_only,
    reading_url=_sqlite_read_only_url,
    guard=_sqlite_guard,
    text_in_numbers=True,
    timeout_markers=("interrupted",),
    row_hash=sqlite_row_hash,
)


# ---------------------------------------------------------------------- DuckDB
def _duckdb_connect_args() -> dict[str, Any]:
    # the file opened read-only (DuckDB has no per-statement timeout; see the README), and
    # DuckDB, which runs inside riskmon's process, under a memory limit (a URL's own wins)
    return {"read_only": True, "config": {"memory_limit": DUCKDB_MEMORY_LIMIT}}


@contextmanager
def _duckdb_per_loan_memory(connection: Connection) -> Iterator[None]:
    # a memory limit set in the URL is the user's: kept
    if "memory_limit" in connection.engine.url.query:
        yield
        return
    connection.exec_driver_sql(f"SET memory_limit = '{DUCKDB_PER_LOAN_MEMORY_LIMIT}'")
    try:
        yield
    finally:
        with suppress(Exception):  # a failed statement's error is the one to report
            connection.exec_driver_sql(f"SET memory_limit = '{DUCKDB_MEMORY_LIMIT}'")


DUCKDB = EngineProfile(
    name="duckdb",
    dialects=frozenset({"duckdb"}),
    enforces_keys=True,
    default_shape="packed",
    snapshot="DuckDB file opened read-only: no one writes it while riskmon reads",
    one_snapshot=True,
    read_only=True,
    statement_timeout=False,
    grouping_sets=True,
    categories_by_text=True,
    marginals_in_sql=True,
    # DuckDB materializes a CTE read more than once (PostgreSQL would too, but into a
    # tuplestore read without parallel workers)
    keys_once=True,
    reflects_tables=False,  # duckdb-engine cannot reflect a table on DuckDB 2
    connect_args=_duckdb_connect_args,
    per_loan_settings=_duckdb_per_loan_memory,
    reading_url=_duckdb_existing_file,
    row_hash=duckdb_row_hash,
    out_of_memory_hint=(
        f"; DuckDB's memory_limit is {DUCKDB_MEMORY_LIMIT} unless the source URL sets one: "
        "raise it there (e.g. ?memory_limit=1GB), or use the default strategy, which needs "
        "the least"
    ),
)


# ---------------------------------------------------------------------- the drivers' own waits
def driver_timeouts(url: URL, deadline: float) -> dict[str, Any]:
    """``connect_args`` bounding what the source's driver waits for, within the read deadline
    (``deadline`` seconds), where the driver has settings for it: psycopg's connect timeout,
    TCP keepalive and ``tcp_user_timeout`` (a peer that stops acknowledging), PyMySQL's
    connect, read and write timeouts. A setting the URL gives itself is left to it."""
    backend, driver = url.get_backend_name(), url.get_driver_name()
    connect = min(CONNECT_SECONDS, deadline)
    options: dict[str, Any] = {}
    if backend == "postgresql" and driver in ("psycopg", "psycopg2"):
        options = {
            "connect_timeout": max(2, math.ceil(connect)),  # whole seconds, libpq's least 2
            "keepalives": 1,
            "keepalives_idle": KEEPALIVE_IDLE,
            "keepalives_interval": KEEPALIVE_INTERVAL,
            "keepalives_count": KEEPALIVE_COUNT,
            "tcp_user_timeout": math.ceil(connect * 1000),
        }
    elif backend in ("mysql", "mariadb") and driver == "pymysql":
        # a socket timeout per read or write: never shorter than the deadline itself
        options = {"connect_timeout": connect, "read_timeout": deadline, "write_timeout": deadline}
    return {key: value for key, value in options.items() if key not in url.query}


#: DuckDB's error for a file another process has open for writing
_DUCKDB_LOCKED = re.compile(
    r'Could not set lock on file "(?P<file>[^"]+)": Conflicting lock is held in (?P<holder>.+?)'
    r"(?:\. See also|\.?$)",
    re.M,
)


def connect_failure(exc: BaseException) -> str | None:
    """Why a connection could not be made, in riskmon's words where the driver's mislead:
    a DuckDB file locked by another process (None: the driver's message says it)."""
    locked = _DUCKDB_LOCKED.search(str(getattr(exc, "orig", None) or exc))
    if locked is None:
        return None
    return (
        f"the DuckDB file {locked['file']} is locked by another process, {locked['holder']}, "
        "which has it open for writing; DuckDB lets no other process open the file meanwhile, "
        "not even to read it: run riskmon once that process has closed it"
    )


#: the engines riskmon is run against in its tests, then those it compiles for
PROFILES: tuple[EngineProfile, ...] = (
    POSTGRESQL,
    MYSQL,
    SQLITE,
    DUCKDB,
    SPARK,
    DATABRICKS,
    TRINO,
    SNOWFLAKE,
    BIGQUERY,
)
_BY_DIALECT = {dialect: profile for profile in PROFILES for dialect in profile.dialects}
_warned: set[str] = set()  # dialects whose generic profile was already warned about


def profile_for(dialect_name: str, *, warn: bool = True) -> EngineProfile:
    """The profile of the engine SQLAlchemy names ``dialect_name`` (``engine.dialect.name``).

    An engine riskmon has no profile for gets :data:`GENERIC`, with a warning logged the first
    time each such engine is asked for (``warn=False``: not now, e.g. while the name is only
    read off a URL whose engine may not load).
    """
    profile = _BY_DIALECT.get(dialect_name)
    if profile is not None:
        return profile
    if warn and dialect_name not in _warned:
        _warned.add(dialect_name)
        log.warning(
            "riskmon is untested on the %r engine: it reads it with the %s collect shape, with %s",
            dialect_name,
            GENERIC.default_shape,
            " and ".join(GENERIC.missing_guards),
        )
    return GENERIC


__all__ = [
    "BIGQUERY",
    "DATABRICKS",
    "DUCKDB",
    "DUCKDB_MEMORY_LIMIT",
    "GENERIC",
    "MYSQL",
    "NOT_SNAPSHOT",
    "POSTGRESQL",
    "POSTGRESQL_PER_LOAN_WORK_MEM",
    "POSTGRESQL_SETTINGS",
    "PROFILES",
    "SNOWFLAKE",
    "SPARK",
    "SQLITE",
    "TRINO",
    "CollectShape",
    "EngineProfile",
    "connect_failure",
    "driver_timeouts",
    "group_by_position",
    "profile_for",
]
