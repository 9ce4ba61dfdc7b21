"""A model's loan source: read-only connections with a time limit, and its columns checked.

riskmon only ever reads a source. Besides issuing nothing but ``SELECT`` statements, every
reading is guarded as its engine's profile (:mod:`.engines`) says: in the database's read-only
mode where it has one, every statement under the configured ``statement_timeout_seconds`` where
the database supports a limit, and every statement of one :meth:`Source.reading` seeing the same
loans. Beside the server's limit, riskmon keeps its own wall-clock deadline on connecting and on
each statement (``read_deadline_seconds``, :mod:`.deadline`), which a server that stopped
answering cannot escape. Every error names the model and, where it is about one, the column; the
source's password is masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    FromClause,
    MetaData,
    Table,
    create_engine,
    event,
    select,
    text,
)
from sqlalchemy import (
    column as sql_column,
)
from sqlalchemy import (
    table as sql_table,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchTableError, SQLAlchemyError
from sqlalchemy.sql import sqltypes
from sqlalchemy.sql.elements import ClauseElement

from riskmon.collect.chunked import chunk_results
from riskmon.collect.columns import SourceColumn, required_columns
from riskmon.collect.deadline import (
    OVERDUE_GRACE_SECONDS,
    ReadOverdue,
    ReadWatch,
    overdue,
    release,
    watch_engine,
    watching,
)
from riskmon.collect.engines import (
    GENERIC,
    EngineProfile,
    connect_failure,
    driver_timeouts,
    profile_for,
)
from riskmon.collect.ledger import Ledger
from riskmon.collect.profile import group_by_position
from riskmon.collect.shared_engines import kept_table, shared_engine
from riskmon.collect.statement import one_statement, query_text
from riskmon.config import ModelConfig
from riskmon.errors import RiskmonError, SourceError, SourceUnavailableError
from riskmon.redact import database_url, mask_url, redact

_READ_ONLY_QUERY = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*(select|with)\b", re.I | re.S)


def _by_position(
    _connection: Connection, statement: Any, multiparams: Any, params: Any, _options: Any
) -> tuple[Any, Any, Any]:
    """Each statement grouped by position (:func:`~.profile.group_by_position`)."""
    if isinstance(statement, ClauseElement):
        statement = group_by_position(statement)
    return statement, multiparams, params


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return redact(str(orig or exc)).strip().splitlines()[0] if str(orig or exc).strip() else ""


class Source:
    """Read access to one model's scored loans."""

    def __init__(self, model: ModelConfig, *, engine: Engine | None = None):
        self.model = model
        self.config = model.source
        if self.config.unset_variables:
            names = ", ".join(self.config.unset_variables)
            raise SourceError(
                f"model {model.name!r}: source needs the environment variable(s) {names}, "
                "which are not set (the configuration was read for a command that reads no "
                "source)"
            )
        self.masked_url = mask_url(self.config.url)
        self._own_engine = engine is None
        self.engine = engine if engine is not None else self._create_engine()
        watch_engine(self.engine)
        self.profile: EngineProfile = profile_for(self.engine.dialect.name)
        self._columns: dict[str, Any] | None = None
        self._time_travel: str | None = None  # the pin's clause, once resolved
        #: every statement the readings ran: its hash and the rows it returned
        self.ledger = Ledger()

    # ------------------------------------------------------------------ errors
    def error(
        self, message: str, *, column: SourceColumn | None = None, unavailable: bool = False
    ) -> SourceError:
        """A SourceError naming the model (and the column) with the password masked;
        :class:`SourceUnavailableError` when the source cannot be connected to at all."""
        where = f"model {self.model.name!r}"
        if column is not None:
            where += f", column {column.name!r} ({column.key})"
        kind = SourceUnavailableError if unavailable else SourceError
        return kind(f"{where}: {redact(message)}")

    # ------------------------------------------------------------------ connections
    def _create_engine(self) -> Engine:
        url = _url(self.config.url)
        # the engine's name as the URL spells it: the dialect itself is known once it loads
        profile = GENERIC if url is None else profile_for(url.get_backend_name(), warn=False)
        target: str | URL = self.config.url
        connect_args = profile.connect_args()
        try:
            if url is not None:
                target = url if profile.reading_url is None else profile.reading_url(url)
                connect_args |= driver_timeouts(url, self.config.read_deadline)
            key = (_engine_key(target), repr(sorted(connect_args.items())))
            engine = shared_engine(key, lambda: self._new_engine(target, connect_args, profile))
        except FileNotFoundError as exc:
            raise self.error(f"cannot use source URL {self.masked_url}: {exc}") from None
        except (SQLAlchemyError, ImportError) as exc:
            raise self.error(
                f"cannot use source URL {self.masked_url}: {_first_line(exc)}", unavailable=True
            ) from None
        return engine

    @staticmethod
    def _new_engine(
        target: str | URL, connect_args: dict[str, Any], profile: EngineProfile
    ) -> Engine:
        # no pool_pre_ping: the deadline's checkout pings a pooled connection, watched
        engine = create_engine(target, connect_args=connect_args)
        chunk_results(engine)
        if profile.on_connect is not None:
            event.listen(engine, "connect", profile.on_connect)
        if profile.group_by_position:
            event.listen(engine, "before_execute", _by_position, retval=True)
        return engine

    def close(self) -> None:
        """Close the source's connections (its engine, kept for the process's next reading of
        the same source, only closes its pool: :mod:`riskmon.collect.shared_engines`)."""
        if self._own_engine:
            self.engine.dispose()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A read-only transaction whose statements run under the time limit, and under
        riskmon's own deadline (``read_deadline_seconds``) from its start and each statement's."""
        with watching(self.config.read_deadline) as watch:
            connection = self._connect(watch)
            self.ledger.listen(connection)
            try:
                try:
                    seconds = self.config.statement_timeout_seconds
                    self.profile.begin(connection, seconds, self.config.time_zone)
                    yield connection
                finally:
                    release(connection, watch)
            except Exception as exc:
                failure = self._failure(exc, watch)
                if failure is None:
                    raise
                raise failure from None

    def _connect(self, watch: ReadWatch) -> Connection:
        try:
            connection = self.engine.connect()
        except ReadOverdue:
            raise self._overdue(watch) from None
        except SQLAlchemyError as exc:
            if watch.expired:
                raise self._overdue(watch) from None
            why = connect_failure(exc) or _first_line(exc)
            raise self.error(
                f"cannot connect to source {self.masked_url}: {why}", unavailable=True
            ) from None
        watch.attach(connection.connection.dbapi_connection)
        return connection

    def _failure(self, exc: Exception, watch: ReadWatch) -> SourceError | None:
        """The SourceError a reading that raised ``exc`` fails with (None: ``exc`` itself)."""
        if isinstance(exc, RiskmonError):
            return None
        if watch.expired:  # the driver's error is the watchdog's doing
            return self._overdue(watch)
        if not isinstance(exc, DBAPIError):
            return None
        if self.profile.is_timeout(exc):
            return self.error(
                f"a query on source {self.masked_url} ran longer than "
                f"statement_timeout_seconds={self.config.statement_timeout_seconds:g} and was "
                "cancelled"
            )
        hint = self.profile.error_hint(exc)
        message = redact(self.profile.message(exc))
        return self.error(f"query on source {self.masked_url} failed: {message}{hint}")

    def _overdue(self, watch: ReadWatch) -> SourceError:
        return self.error(
            f"the source {self.masked_url} did not answer within {watch.seconds:g} s "
            f"(source.read_deadline_seconds): {watch.describe()}",
            unavailable=True,
        )

    @staticmethod
    def stalled(thread: int, grace: float | None = None) -> bool:
        """Whether a source reading of ``thread`` (a :func:`threading.get_ident`) is still
        running ``grace`` seconds (default :data:`~.deadline.OVERDUE_GRACE_SECONDS`) past its
        deadline: its run's heartbeat stops then."""
        return overdue(thread, OVERDUE_GRACE_SECONDS if grace is None else grace)

    # ------------------------------------------------------------------ snapshots
    @property
    def snapshot(self) -> str:
        """What every statement of this source's readings sees, in a line (a run records it);
        a pinned Delta table's version is looked up here, once."""
        clause = self.time_travel()
        if clause is None:
            return self.profile.snapshot
        name = ".".join(filter(None, [self.config.schema_, self.config.table]))
        return f"Delta table {name} {clause}: every statement read that one version"

    def time_travel(self) -> str | None:
        """The table's time-travel clause (``VERSION AS OF 42``) when ``source.pin`` is set;
        "latest" is resolved once, to the version current at the first call."""
        pin = self.config.pin
        if pin is None:
            return None
        if self._time_travel is None:
            if not self.profile.time_travel:
                raise self.error(
                    f"source.pin reads a Delta table as of a version, which riskmon does on "
                    f"Spark and Databricks, not on {self.engine.dialect.name}"
                )
            if pin.latest:
                self._time_travel = f"VERSION AS OF {self._latest_version()}"
            elif pin.version is not None:
                self._time_travel = f"VERSION AS OF {int(pin.version)}"
            else:
                assert pin.timestamp is not None
                when = pin.timestamp.isoformat(sep=" ")
                self._time_travel = f"TIMESTAMP AS OF '{when}'"
        return self._time_travel

    def _latest_version(self) -> int:
        """The table's current Delta version (``DESCRIBE HISTORY``)."""
        assert self.config.table is not None
        table = sql_table(self.config.table, schema=self.config.schema_)
        quoted = self.engine.dialect.identifier_preparer.format_table(table)
        try:
            with self.reading() as connection:
                row = connection.exec_driver_sql(f"DESCRIBE HISTORY {quoted} LIMIT 1").first()
        except SourceError as exc:
            raise self.error(
                f"source.pin: cannot read the Delta history of table {quoted} (is it a Delta "
                f"table?): {exc}"
            ) from None
        if row is None:
            raise self.error(f"source.pin: table {quoted} has no Delta history")
        return int(row._mapping["version"])

    # ------------------------------------------------------------------ the loans
    def selectable(self, extra: Sequence[SourceColumn] = ()) -> FromClause:
        """The loans: the configured table (as of its pinned version), or the configured query
        as a subquery (of the model's columns and the ``extra`` ones)."""
        clause = self.time_travel()
        if clause is not None:
            table = self._table()
            quoted = self.engine.dialect.identifier_preparer.format_table(table)
            typed = [sql_column(c.name, c.type) for c in table.columns]
            pinned = text(f"SELECT * FROM {quoted} {clause}").columns(*typed)
            return pinned.subquery(self.config.table)
        if self.config.query is not None:
            columns = [c.name for c in [*required_columns(self.model), *extra]]
            return (
                text(query_text(self._statement()))
                .columns(*(sql_column(name) for name in dict.fromkeys(columns)))
                .subquery("loans")
            )
        return self._table()

    def _statement(self) -> str:
        """The configured query's one statement; a SourceError unless it is one SELECT or WITH
        (a ``;`` and comments may follow it)."""
        query = self.config.query
        assert query is not None
        statement = one_statement(query)
        if statement is None or not _READ_ONLY_QUERY.match(statement):
            raise SourceError(
                f"model {self.model.name!r}: source.query must be one SELECT (or WITH) "
                f"statement, got {query[:60]!r}"
            )
        return statement

    def _table(self) -> FromClause:
        assert self.config.table is not None
        name = ".".join(filter(None, [self.config.schema_, self.config.table]))
        if self.profile.reflects_tables:
            try:
                with self.reading() as connection:
                    reflected = Table(
                        self.config.table,
                        MetaData(),
                        schema=self.config.schema_,
                        autoload_with=connection,
                    )
                return kept_table(self.engine, reflected)
            except NoSuchTableError:
                raise self.error(f"table {name!r} not found in source {self.masked_url}") from None
        # without reflection, the column names come off an empty SELECT; their types are
        # checked while reading
        bare = sql_table(self.config.table, schema=self.config.schema_)
        try:
            with self.reading() as connection:
                probe = select(text("*")).select_from(bare).limit(0)
                names = list(connection.execute(probe).keys())
        except SourceUnavailableError:
            raise  # not connected (a locked file, a source past its deadline): not about the table
        except SourceError:
            raise self.error(f"table {name!r} not found in source {self.masked_url}") from None
        return sql_table(
            self.config.table, *(sql_column(n) for n in names), schema=self.config.schema_
        )

    def check_columns(self, extra: Sequence[SourceColumn] = ()) -> FromClause:
        """The loans, after checking that every configured column (and every ``extra`` one a
        collect reads) exists with a usable type."""
        loans = self.selectable(extra)
        if self.config.query is None:
            present = {c.name: c.type for c in loans.columns}
        else:
            present = self._query_columns(loans)
        for col in [*required_columns(self.model), *extra]:
            if col.name not in present:
                known = ", ".join(sorted(present)) or "none"
                raise self.error(f"not found in the source (it has: {known})", column=col)
            kind = present[col.name]
            if col.kind in ("numeric", "label") and kind is not None and not _is_numeric(kind):
                raise self.error(f"expected a numeric column, got type {kind}", column=col)
        return loans

    def _query_columns(self, loans: FromClause) -> dict[str, Any]:
        with self.reading() as connection:
            result = connection.execute(
                select(text("*"))
                .select_from(text(f"({query_text(self._statement())}\n) AS probe"))
                .limit(0)
            )
            return dict.fromkeys(result.keys())


def _engine_key(target: str | URL) -> str:
    """The URL an engine connects to, password included: two URLs that differ in it only are
    two engines."""
    return target.render_as_string(hide_password=False) if isinstance(target, URL) else target


def _url(value: str) -> URL | None:
    """The source's URL, its password read as :func:`riskmon.redact.database_url` reads it."""
    try:
        return database_url(value)
    except (ArgumentError, ValueError):
        return None


def _is_numeric(kind: Any) -> bool:
    # Float is no Numeric subclass in SQLAlchemy 2.1; NullType means "unknown" (SQLite
    # columns declared without a type), which the reading itself then checks
    numeric = (sqltypes.Numeric, sqltypes.Float, sqltypes.Integer, sqltypes.Boolean)
    return isinstance(kind, (*numeric, sqltypes.NullType))


__all__ = ["Source", "SourceColumn", "one_statement", "required_columns"]
