"""Whether a metric store's database is sound: its file's pages and records, its tables and
columns against the models, each table readable.

Each function takes an open connection and returns what is wrong, in words (empty when all
is well); :mod:`riskmon.store.migrate` decides what to refuse.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, inspect, select
from sqlalchemy.exc import SQLAlchemyError

from riskmon.store.models import Base

#: how many of SQLite's findings a message quotes (``PRAGMA quick_check`` lists up to 100)
QUOTED_PROBLEMS = 3


def file_damage(connection: Connection) -> list[str]:
    """What SQLite's ``PRAGMA quick_check`` finds wrong in the store's file: a page or a
    record that cannot be read as SQLite wrote it (empty on another database).

    ``quick_check`` reads every page once (the time grows with the file, as a full read of it
    does) but skips comparing each index with its table, which ``integrity_check`` adds.
    """
    if connection.dialect.name != "sqlite":
        return []
    rows = connection.exec_driver_sql("PRAGMA quick_check").scalars().all()
    if rows == ["ok"]:
        return []
    # a row may hold several findings, one a line, under a "*** in database main ***" title
    lines = (line.strip() for row in rows for line in str(row).splitlines())
    return [line for line in lines if line and not line.startswith("***")]


def missing_columns(connection: Connection) -> list[str]:
    """The models' tables and columns the database lacks, as ``table`` or ``table.column``.

    One catalog query on PostgreSQL (one per table on SQLite); tables the models do not know
    are someone else's and are not looked at.
    """
    present = {
        table: {column["name"] for column in columns}
        for (_, table), columns in inspect(connection).get_multi_columns().items()
    }
    missing: list[str] = []
    for name, table in Base.metadata.tables.items():
        if name not in present:
            missing.append(name)
            continue
        missing += [f"{name}.{c.name}" for c in table.columns if c.name not in present[name]]
    return missing


def riskmon_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Whether a schema object is riskmon's to compare, create or drop (Alembic's
    ``include_object``): a table in the database that the models do not know belongs to
    another component sharing the database (migration 0005 drops the one table riskmon's
    scheduler once kept there, by name)."""
    return not (type_ == "table" and reflected and compare_to is None)


def model_differences(connection: Connection) -> list[str]:
    """How the database's schema differs from the models, in words: what ``alembic check``
    compares (tables, columns and their types, nullability, constraints, indexes)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "include_object": riskmon_object}
    )
    return [_difference(diff) for diff in compare_metadata(context, Base.metadata)]


def _difference(diff: Any) -> str:
    """One of Alembic's differences (what to do to the database to match the models)."""
    if isinstance(diff, list):  # the changes of one column
        return "; ".join(_difference(change) for change in diff)
    operation = diff[0]
    if operation in ("add_table", "remove_table"):
        where = "missing" if operation == "add_table" else "not in riskmon's models"
        return f"table {diff[1].name} {where}"
    if operation in ("add_column", "remove_column"):
        where = "missing" if operation == "add_column" else "not in riskmon's models"
        return f"column {diff[2]}.{diff[3].name} {where}"
    if operation.startswith("modify_"):
        _, _, table, column, _, stored, modelled = diff
        what = operation.removeprefix("modify_")
        return f"column {table}.{column}: {what} {stored} in the store, {modelled} in the models"
    verb, _, kind = operation.partition("_")  # add_constraint, remove_index, add_fk, ...
    item = diff[1]
    table = getattr(getattr(item, "table", None), "name", "?")
    where = "missing" if verb == "add" else "not in riskmon's models"
    return f"{kind} {item.name} on table {table} {where}"


def unreadable_tables(connection: Connection) -> list[str]:
    """The models' tables whose columns cannot be read, each with the database's reason: one
    row of every column is selected from each table (a query that does not scan it)."""
    problems: list[str] = []
    for name, table in Base.metadata.tables.items():
        try:
            connection.execute(select(*table.columns).limit(1)).all()
        except SQLAlchemyError as exc:
            connection.rollback()  # PostgreSQL reads no more in a failed transaction
            problems.append(f"{name}: {database_reason(exc)}")
    return problems


def database_reason(error: SQLAlchemyError) -> str:
    """The first line of what the database said, without SQLAlchemy's statement and link."""
    lines = str(getattr(error, "orig", None) or error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def first_problems(problems: list[str]) -> str:
    """The first few of ``problems`` on one line, saying how many more there are."""
    quoted = "; ".join(problems[:QUOTED_PROBLEMS])
    more = len(problems) - QUOTED_PROBLEMS
    return f"{quoted}; and {more} more" if more > 0 else quoted
