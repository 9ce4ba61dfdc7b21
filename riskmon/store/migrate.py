"""Create and migrate the metric store with Alembic, configured in code; refuse a store riskmon
cannot use.

The migration scripts ship inside the package (``riskmon.migrations``), so an installed riskmon
migrates its store without a checkout or an ``alembic.ini``; :mod:`riskmon.shipped` finds them
in a checkout too.

Each migration runs in one transaction with its version bump, on PostgreSQL and on SQLite
(where :func:`migration_connection` makes that transaction real): a process killed half-way
through leaves the store at the revision before, and ``riskmon db upgrade`` migrates it again.

Opening a store for a run only compares its ``alembic_version`` with the revisions the shipped
scripts declare (:func:`known_revisions` reads their ``revision``/``down_revision`` lines), so a
run imports no Alembic (about 0.4 s of every process, benchmarks/startup.md) and loads no
migration script; what migrates or compares a schema imports it when called.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, select, text
from sqlalchemy import column as sql_column
from sqlalchemy import table as sql_table
from sqlalchemy.exc import SQLAlchemyError

from riskmon import __version__
from riskmon.errors import StoreError
from riskmon.redact import mask_url, redact
from riskmon.shipped import shipped_folder
from riskmon.store.engine import (
    foreign_key_violations,
    sqlite_file,
    sqlite_transactional_ddl,
)
from riskmon.store.integrity import (
    database_reason,
    file_damage,
    first_problems,
    missing_columns,
    model_differences,
    unreadable_tables,
)

if TYPE_CHECKING:
    from alembic.config import Config

#: Alembic's table of the store's revision (its default name; riskmon sets no other)
VERSION_TABLE = "alembic_version"


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for the shipped migrations, bound to ``connection``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(shipped_folder("migrations")))
    config.attributes["connection"] = connection
    return config


#: a migration script's declaration of its revision and of the one before it
_DECLARED = re.compile(r'^(down_revision|revision)\b[^=]*=\s*(None|"[^"]*"|\'[^\']*\')', re.M)


def known_revisions() -> list[str]:
    """Every migration riskmon ships, oldest first: the chain of the scripts' ``revision`` and
    ``down_revision`` (read as text, not imported; a test compares it with Alembic's)."""
    return list(_chain())


@cache  # riskmon's migrations do not change while it runs
def _chain() -> tuple[str, ...]:
    before: dict[str, str | None] = {}
    for script in sorted((shipped_folder("migrations") / "versions").glob("*.py")):
        declared = {k: v.strip("\"'") for k, v in _DECLARED.findall(script.read_text())}
        down = declared.get("down_revision")
        before[declared["revision"]] = None if down in (None, "None") else down
    after = {down: revision for revision, down in before.items()}
    chain = [after[None]]
    while chain[-1] in after:
        chain.append(after[chain[-1]])
    return tuple(chain)


def head_revision() -> str:
    """The newest migration riskmon ships."""
    return known_revisions()[-1]


def current_revision(engine: Engine) -> str | None:
    """The store's migration revision (None for an empty database)."""
    with _reading(engine) as connection:
        return _stored_revision(engine, connection)


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Create or migrate the store's schema up to ``revision``.

    Raises StoreError, migrating nothing, when the store's file is damaged or a newer riskmon
    migrated it. Each migration commits with its version bump, so a process killed half-way
    leaves a store this function migrates again.
    """
    _check_sound(engine, exists=False)
    from alembic import command

    with migration_connection(engine) as connection:
        command.upgrade(alembic_config(connection), revision)
        connection.commit()


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Migrate the store's schema down to ``revision`` (``base`` drops every table)."""
    _check_sound(engine)
    from alembic import command

    with migration_connection(engine) as connection:
        command.downgrade(alembic_config(connection), revision)
        connection.commit()


#: the PostgreSQL advisory lock a migrating connection holds (a constant of riskmon's own)
MIGRATION_LOCK = 0x7269736B6D6F6E  # "riskmon" in ASCII


@contextmanager
def migration_connection(engine: Engine) -> Iterator[Connection]:
    """A connection on which each transaction is a real one, DDL included, for Alembic.

    PostgreSQL's DDL is transactional as it is; SQLite's is made so
    (:func:`riskmon.store.engine.sqlite_transactional_ddl`), with foreign keys off while it
    migrates. ``migrations/env.py`` runs each migration in a transaction of its own on it. On
    PostgreSQL the connection holds a session advisory lock (:data:`MIGRATION_LOCK`) while it
    migrates, so two ``db upgrade`` at once take turns: the second finds the store migrated.
    """
    with _connect(engine) as connection:
        if connection.dialect.name == "sqlite":
            with sqlite_transactional_ddl(connection):
                yield connection
        elif connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()  # the lock is the session's: it outlives this transaction
            try:
                yield connection
            finally:
                connection.rollback()
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
                connection.commit()
        else:
            yield connection


def check_models(engine: Engine) -> None:
    """Raise unless the migrated schema matches the models (``alembic check``)."""
    from alembic import command

    with _connect(engine) as connection:
        command.check(alembic_config(connection))


def check_schema(engine: Engine) -> None:
    """Raise StoreError unless the store is sound and migrated to the revision riskmon needs.

    Called on opening a store, before a run writes to it: on SQLite the file's ``PRAGMA
    quick_check`` (it reads every page once: about 0.65 s for a 136 MB store, growing with the
    file), then the revision, then that
    every table and column of the models is there (one catalog query on PostgreSQL).
    ``riskmon db check`` (:func:`check_store`) checks more. A SQLite store whose file does not
    exist is not created by the check.
    """
    _check_exists(engine)
    with _reading(engine) as connection:
        _refuse_damage(engine, connection)
        current, head = _stored_revision(engine, connection), head_revision()
        if current != head:
            state = "empty" if current is None else f"at revision {current}"
            raise StoreError(
                f"metric store {store_name(engine)} is {state}, riskmon needs revision "
                f"{head}: run `riskmon db upgrade`"
            )
        missing = missing_columns(connection)
    if missing:
        raise StoreError(
            f"metric store {store_name(engine)} is at revision {head} but lacks "
            f"{first_problems(missing)}: it was altered outside riskmon's migrations; "
            f"`riskmon db check` lists what differs from the schema riskmon needs"
        )


@dataclass(frozen=True)
class StoreCheck:
    """One check ``riskmon db check`` made, and what it found wrong (nothing: it passed)."""

    #: what was checked, in words
    what: str
    #: what is wrong, one item each
    problems: list[str] = field(default_factory=list)
    #: why it was not made (a check that needs the schema riskmon knows), or None
    skipped: str | None = None


def check_store(engine: Engine) -> list[StoreCheck]:
    """Every check of the store's soundness, each with what it found: on SQLite the file's
    pages and records (``PRAGMA quick_check``) and its foreign keys, then (any database) the
    revision, the schema against the models, and a query of every column of each table.

    Raises StoreError only when the store cannot be reached (or its file does not exist).
    """
    _check_exists(engine)
    checks: list[StoreCheck] = []
    with _connect(engine) as connection:
        if connection.dialect.name == "sqlite":
            checks.append(
                _made(connection, "SQLite quick_check: every page and record", file_damage)
            )
            checks.append(
                _made(
                    connection,
                    "foreign keys: every row's referenced row exists",
                    foreign_key_violations,
                )
            )
        revision = _revision_check(connection)
        checks.append(revision)
        if revision.problems:
            why = "needs the store at the revision this riskmon ships"
            for what in (_SCHEMA_CHECK, _TABLES_CHECK):
                checks.append(StoreCheck(what, skipped=why))
            return checks
        checks.append(_made(connection, _SCHEMA_CHECK, model_differences))
        checks.append(_made(connection, _TABLES_CHECK, unreadable_tables))
    return checks


_SCHEMA_CHECK = "schema: tables, columns, types, constraints and indexes match riskmon's models"
_TABLES_CHECK = "tables: one row of every column of each table reads"


def _made(
    connection: Connection, what: str, check: Callable[[Connection], list[str]]
) -> StoreCheck:
    from alembic.util import CommandError

    try:
        problems = check(connection)
    except (SQLAlchemyError, StoreError, CommandError) as exc:
        if connection.in_transaction():
            connection.rollback()
        reason = database_reason(exc) if isinstance(exc, SQLAlchemyError) else str(exc)
        problems = [redact(reason)]
    return StoreCheck(what, problems)


def _revision_check(connection: Connection) -> StoreCheck:
    head = head_revision()
    what = f"revision: riskmon {__version__} needs {head}"
    try:
        heads = stored_heads(connection)
    except SQLAlchemyError as exc:
        connection.rollback()
        return StoreCheck(what, [redact(database_reason(exc))])
    unknown = _unknown_revision(heads)
    if unknown:
        return StoreCheck(what, [f"the store is {unknown}"])
    if list(heads) != [head]:
        state = f"at revision {heads[0]}" if heads else "empty"
        return StoreCheck(what, [f"the store is {state}: run `riskmon db upgrade`"])
    return StoreCheck(f"{what}, the store is at {head}")


def store_name(engine: Engine) -> str:
    """The store's URL as messages show it: its password masked."""
    return mask_url(engine.url.render_as_string(hide_password=False))


def _check_exists(engine: Engine) -> None:
    file = sqlite_file(engine)
    if file is not None and not file.exists():
        raise StoreError(
            f"metric store {store_name(engine)}: the file {file.absolute()} does not exist: "
            f"run `riskmon db upgrade`"
        )


def _check_sound(engine: Engine, *, exists: bool = True) -> None:
    """Raise StoreError when the store is missing (unless ``exists`` is false: it is about to
    be created), damaged, or migrated by a newer riskmon."""
    if exists:
        _check_exists(engine)
    with _reading(engine) as connection:
        _refuse_damage(engine, connection)
        _stored_revision(engine, connection)


def _refuse_damage(engine: Engine, connection: Connection) -> None:
    damage = file_damage(connection)
    if damage:
        raise StoreError(
            f"metric store {store_name(engine)} is damaged: SQLite's quick_check found "
            f"{len(damage)} problem(s): {first_problems(damage)}: riskmon writes nothing to "
            f"it; restore the file from a backup (`riskmon db check` lists what it checks)"
        )


def _stored_revision(engine: Engine, connection: Connection) -> str | None:
    """The store's revision, refused (StoreError) when this riskmon does not ship it."""
    heads = stored_heads(connection)
    unknown = _unknown_revision(heads)
    if unknown:
        raise StoreError(f"metric store {store_name(engine)} is {unknown}")
    return heads[0] if heads else None


def stored_heads(connection: Connection) -> list[str]:
    """The revisions in the store's ``alembic_version`` table (none: an empty database), as
    Alembic's ``MigrationContext.get_current_heads`` reads them."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return []
    version = sql_table(VERSION_TABLE, sql_column("version_num"))
    return [str(head) for head in connection.execute(select(version.c.version_num)).scalars()]


def _unknown_revision(heads: Sequence[str]) -> str | None:
    """What is wrong with a store at ``heads`` that this riskmon cannot use, or None."""
    known = known_revisions()
    unknown = [head for head in heads if head not in known]
    if unknown:
        return (
            f"at revision {', '.join(unknown)}, which riskmon {__version__} does not know (the "
            f"newest it ships is {known[-1]}): a newer riskmon migrated it; use the riskmon "
            f"that migrated it, or a newer one (`riskmon db upgrade` cannot migrate a store "
            f"back)"
        )
    if len(heads) > 1:
        return (
            f"at several revisions at once ({', '.join(heads)}, in its alembic_version "
            f"table): restore it from a backup"
        )
    return None


@contextmanager
def _reading(engine: Engine) -> Iterator[Connection]:
    """A connection for checks; a database error (a damaged file, a missing table) is a
    StoreError naming the store."""
    with _connect(engine) as connection:
        try:
            yield connection
        except SQLAlchemyError as exc:
            raise StoreError(
                f"cannot read the metric store {store_name(engine)}: {redact(database_reason(exc))}"
            ) from None


def _connect(engine: Engine) -> Connection:
    try:
        return engine.connect()
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot connect to the metric store {store_name(engine)}: "
            f"{redact(database_reason(exc))}"
        ) from None
