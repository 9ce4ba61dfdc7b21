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
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from sqlalchemy import URL, Connection, func, literal, select, text, true
from sqlalchemy.exc import DBAPIError

log = logging.getLogger(__name__)

#: how a collect pass reads the loans: a SQL shape of :mod:`.pushdown`, or :mod:`.stream`
CollectShape = Literal["packed", "grouping_sets", "union_all", "per_variable", "stream"]

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
#: so with the default ``work_mem`` it sorts every row (spilling to disk) instead of hashing;
#: and compiling the ``CASE`` trees just in time costs more than it saves. Hash aggregation
#: still spills to disk if a table really is large
POSTGRESQL_SETTINGS = {"enable_sort": "off", "jit": "off"}

#: how many SQLite virtual-machine steps run between two checks of the time limit
SQLITE_PROGRESS_STEPS = 10_000


def _no_connect_args() -> dict[str, Any]:
    return {}


def _existing_file(url: URL) -> Path | None:
    """The database file of a file engine's URL, which must exist (None: in memory)."""
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    path = Path(database).expanduser().absolute()
    if not path.is_file():
        raise FileNotFoundError(f"the database file {path} does not exist")
    return path


@dataclass(frozen=True)
class EngineProfile:
    """What riskmon does differently on one engine; the SQL itself is the same everywhere.

    ``guard`` begins each reading: it makes the transaction read-only and puts its statements
    under ``seconds`` where the engine can (``read_only`` and ``statement_timeout`` say whether
    the profile, with ``connect_args`` and ``on_connect``, guarantees each). ``snapshot`` says in
    a line what every statement of one reading sees.
    """

    name: str
    dialects: frozenset[str]  # the SQLAlchemy dialect names this profile serves
    default_shape: CollectShape  # what strategy "auto" picks
    snapshot: str
    read_only: bool = False
    statement_timeout: bool = False
    grouping_sets: bool = False  # the engine runs GROUP BY GROUPING SETS
    #: ``packed`` groups a categorical on its text, binned afterwards: only where the default
    #: collation compares text exactly, as Python does
    categories_by_text: bool = False
    marginals_in_sql: bool = False  # ``packed`` sums its combinations by GROUPING SETS
    keys_once: bool = False  # ``union_all`` computes every key once, in a CTE
    reflects_tables: bool = True  # the driver can reflect a table's columns
    #: ``connect_args`` for ``create_engine``, made fresh for each engine
    connect_args: Callable[[], dict[str, Any]] = _no_connect_args
    on_connect: Callable[[Any, Any], None] | None = None  # each new DBAPI connection
    #: the URL an engine is created on, from the configured one: a file engine opens its file
    #: read-only, and raises FileNotFoundError naming it rather than creating an empty one
    reading_url: Callable[[URL], URL] | None = None
    guard: Callable[[Connection, float], None] | None = None  # each reading, first thing
    tuning: Callable[[Connection], None] | None = None  # before the statements of a SQL shape
    #: a numeric column may hold text (SQLite's type affinity): the SQL shapes look for it first,
    #: as the streaming reader refuses it, rather than binning text as a large number
    text_in_numbers: bool = False
    #: sets the reading's session time zone (an IANA name), where the engine has one
    session_time_zone: Callable[[Connection, str], None] | None = None
    #: around a statement that groups per loan or per obligor (the migrations of
    #: :mod:`.migration`, the count of duplicate ids), the settings it needs
    per_loan_settings: Callable[[Connection], AbstractContextManager[None]] | None = None
    timeout_markers: tuple[str, ...] = ()  # lower-case text of the engine's timeout error
    out_of_memory_hint: str = ""

    def begin(self, connection: Connection, seconds: float, time_zone: str = "UTC") -> None:
        """Guard a new reading: read-only, its statements limited to ``seconds``, in
        ``time_zone`` where the engine has a session time zone."""
        if self.guard is not None:
            self.guard(connection, seconds)
        if self.session_time_zone is not None:
            self.session_time_zone(connection, time_zone)

    def tune(self, connection: Connection) -> None:
        """Set what the SQL shapes of :mod:`.pushdown` run best with, for the rest of the
        reading's transaction."""
        if self.tuning is not None:
            self.tuning(connection)

    def per_loan(self, connection: Connection) -> AbstractContextManager[None]:
        """The settings a statement grouping per loan or obligor runs under, restored
        afterwards."""
        if self.per_loan_settings is None:
            return nullcontext()
        return self.per_loan_settings(connection)

    def is_timeout(self, exc: DBAPIError) -> bool:
        """Whether ``exc`` is the engine cancelling a statement that outran its time limit."""
        message = str(exc.orig).lower()
        return any(marker in message for marker in self.timeout_markers)

    def error_hint(self, exc: DBAPIError) -> str:
        """What to add to the message of ``exc`` to say how to avoid it, if anything."""
        if self.out_of_memory_hint and "out of memory" in str(exc).lower():
            return self.out_of_memory_hint
        return ""

    @property
    def missing_guards(self) -> list[str]:
        """The guards a reading on this engine goes without, in words."""
        missing = [] if self.read_only else ["no read-only transaction"]
        if not self.statement_timeout:
            missing.append("no statement timeout (statement_timeout_seconds is not applied)")
        return missing


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


POSTGRESQL = EngineProfile(
    name="postgresql",
    dialects=frozenset({"postgresql"}),
    default_shape="packed",
    snapshot="PostgreSQL REPEATABLE READ, READ ONLY transaction: one snapshot",
    read_only=True,
    statement_timeout=True,
    grouping_sets=True,
    categories_by_text=True,
    guard=_postgresql_guard,
    tuning=_postgresql_tuning,
    session_time_zone=_postgresql_time_zone,
    timeout_markers=("statement timeout",),
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
    default_shape="union_all",
    # riskmon sets no isolation level here: it relies on the server's default
    snapshot="MySQL/MariaDB read-only session, InnoDB's default REPEATABLE READ: one snapshot",
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
    path = _existing_file(url)
    if path is None or url.query.get("uri"):
        return url
    # SQLite's own read-only mode: a file that vanishes meanwhile is an error, never created
    return url.set(
        database=f"file:{quote(str(path))}", query={**url.query, "mode": "ro", "uri": "true"}
    )


def _duckdb_existing_file(url: URL) -> URL:
    _existing_file(url)  # opened read-only (connect_args), which DuckDB refuses for no file
    return url


SQLITE = EngineProfile(
    name="sqlite",
    dialects=frozenset({"sqlite"}),
    # SQLite's GROUP BY is slower than aggregating a streamed read with numpy
    default_shape="stream",
    snapshot="SQLite one read transaction (query_only): one snapshot",
    read_only=True,
    statement_timeout=True,
    on_connect=_sqlite_read_only,
    reading_url=_sqlite_read_only_url,
    guard=_sqlite_guard,
    text_in_numbers=True,
    timeout_markers=("interrupted",),
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
    default_shape="packed",
    snapshot="DuckDB file opened read-only: no one writes it while riskmon reads",
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
    out_of_memory_hint=(
        f"; DuckDB's memory_limit is {DUCKDB_MEMORY_LIMIT} unless the source URL sets one: "
        "raise it there (e.g. ?memory_limit=1GB), or use the default strategy, which needs "
        "the least"
    ),
)


# ---------------------------------------------------------------------- any other engine
GENERIC = EngineProfile(
    name="generic",
    dialects=frozenset(),
    default_shape="union_all",  # plain GROUP BY and UNION ALL: any SQL engine runs it
    snapshot="not known: the engine's default isolation, which riskmon does not check",
)

PROFILES: tuple[EngineProfile, ...] = (POSTGRESQL, MYSQL, SQLITE, DUCKDB)
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
    "DUCKDB",
    "DUCKDB_MEMORY_LIMIT",
    "GENERIC",
    "MYSQL",
    "POSTGRESQL",
    "POSTGRESQL_SETTINGS",
    "PROFILES",
    "SQLITE",
    "CollectShape",
    "EngineProfile",
    "profile_for",
]
