"""What riskmon knows about one SQL engine it reads loans from: :class:`EngineProfile`.

The profiles themselves live in :mod:`.engines` (the databases riskmon is run against in its
tests) and :mod:`.warehouses` (Spark, Databricks and the cloud warehouses); :data:`GENERIC` is
what any other engine gets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import URL, Connection, literal_column
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Select, visitors
from sqlalchemy.sql.elements import ClauseElement, ColumnElement, Label

#: how a collect pass reads the loans: a SQL shape of :mod:`.pushdown`, or :mod:`.stream`
CollectShape = Literal["packed", "grouping_sets", "union_all", "per_variable", "stream"]


#: a row hash (:mod:`.fingerprint`): (the reading's connection, a row's columns) -> an integer
#: expression, the same for two rows only if their values are the same (but for collisions);
#: None where the server at hand lacks what it needs
RowHash = Callable[[Connection, Sequence[ColumnElement[Any]]], ColumnElement[Any] | None]


def _no_connect_args() -> dict[str, Any]:
    return {}


def existing_file(url: URL) -> Path | None:
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
    #: every statement of one reading sees the same rows (what ``snapshot`` says), so that what
    #: one statement counted holds for the next (:func:`.exclusions.known_usable`)
    one_snapshot: bool = False
    read_only: bool = False
    statement_timeout: bool = False
    grouping_sets: bool = False  # the engine runs GROUP BY GROUPING SETS
    #: ``packed`` groups a categorical on its text, binned afterwards: only where the default
    #: collation compares text exactly, as Python does
    categories_by_text: bool = False
    marginals_in_sql: bool = False  # ``packed`` sums its combinations by GROUPING SETS
    keys_once: bool = False  # ``union_all`` computes every key once, in a CTE
    #: the engine runs the branches of a ``UNION ALL`` side by side (PostgreSQL's Parallel
    #: Append): the count of repeated ids groups each window in a branch of its own
    union_in_parallel: bool = False
    reflects_tables: bool = True  # the driver can reflect a table's columns
    #: the engine enforces a table's primary key and unique constraints (a warehouse's are
    #: informational): a key within the id and score date columns means no loan repeats them,
    #: and their repeats are not counted by a statement (:mod:`.exclusions`)
    enforces_keys: bool = False
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
    #: the driver's parameters are positional (``?``), so that an expression with parameters
    #: in ``GROUP BY`` no longer equals the same expression in the select list (Trino): every
    #: statement groups by position instead (:func:`group_by_position`)
    group_by_position: bool = False
    #: the engine reads a Delta table as of a version or a time (``source.pin``)
    time_travel: bool = False
    #: the engine's own message in its driver's error text, where that text wraps it
    error_text: Callable[[str], str] | None = None
    #: hashes a row exactly, for the fingerprint of a day read before (:mod:`.fingerprint`);
    #: None: a day read before it settled is read again
    row_hash: RowHash | None = None

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

    def message(self, exc: BaseException) -> str:
        """The first line of the engine's message in ``exc`` (not yet redacted)."""
        text = str(getattr(exc, "orig", None) or exc).strip()
        if self.error_text is not None:
            text = self.error_text(text).strip()
        return text.splitlines()[0] if text else ""

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


# ---------------------------------------------------------------------- any other engine
GENERIC = EngineProfile(
    name="generic",
    dialects=frozenset(),
    default_shape="union_all",  # plain GROUP BY and UNION ALL: any SQL engine runs it
    snapshot="not known: the engine's default isolation, which riskmon does not check",
)


def group_by_position(statement: ClauseElement) -> ClauseElement:
    """``statement`` with each ``GROUP BY`` term that is also selected written as its position
    in the select list (``GROUP BY 1, 2``), in every ``SELECT`` it holds; the statement itself is
    left as it was (a copy is changed).

    With positional parameters the engine cannot tell that ``CASE WHEN x <= ? ...`` in the
    select list and in ``GROUP BY`` are the same expression (each ``?`` is its own parameter);
    a position refers to the selected expression itself. Terms not selected (plain columns)
    stay as they are.
    """

    def visit(select_: Select[Any]) -> None:
        # Select keeps its select list and GROUP BY terms in these attributes; SQLAlchemy has
        # no public way to read the GROUP BY terms back
        terms = select_._group_by_clauses
        if not terms:
            return
        columns = list(select_._raw_columns)

        def position(term: Any) -> int | None:
            target = term.element if isinstance(term, Label) else term
            for i, column in enumerate(columns):
                inner = column.element if isinstance(column, Label) else column
                if column is term or inner is target:
                    return i + 1
            return None

        grouped = []
        for term in terms:
            at = position(term)
            grouped.append(term if at is None else literal_column(str(at)))
        select_._group_by_clauses = tuple(grouped)

    return visitors.cloned_traverse(statement, {}, {"select": visit})
