"""What every part of the metric store shares: its engine, one transaction at a time, the
translation of database errors into :class:`~riskmon.errors.StoreError`, and the model rows
that runs and baselines hang from."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields
from functools import cache, lru_cache
from typing import Any, cast

from sqlalchemy import (
    Connection,
    Dialect,
    Engine,
    String,
    Table,
    Text,
    func,
    insert,
    select,
    update,
)
from sqlalchemy import cast as cast_
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from riskmon.errors import EXIT_FAILED, StoreError
from riskmon.figure_table import Figures
from riskmon.held import Held
from riskmon.redact import mask_url, redact
from riskmon.store import models as m


class StoreConflict(StoreError):
    """A write broke one of the store's unique constraints (another process wrote first)."""

    exit_code = EXIT_FAILED


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    # SQLite hands back naive datetimes; everything riskmon writes is UTC.
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.timezone.utc)


def record_row(record: Any, *, skip: Collection[str] = ()) -> dict[str, Any]:
    """A dataclass record as a row: each field but those in ``skip`` a column."""
    return {name: getattr(record, name) for name in _field_names(type(record)) if name not in skip}


#: the field names of each dataclass stored (``fields`` is slow enough to show where a run
#: stores hundreds of thousands of bins)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(kind))
    return names


@cache
def _text_columns(table: type[m.Base]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The text columns of ``table``, and its (key, whole text) column pairs."""
    columns = cast(Table, table.__table__).columns
    texts = tuple(c.name for c in columns if isinstance(c.type, String))
    keyed = tuple((k, f) for k, f in m.KEYED_COLUMNS.items() if k in columns and f in columns)
    return texts, keyed


def stored_row(table: type[m.Base], row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as ``table`` stores it: each text as :func:`m.stored_text` keeps it,
    and each key column (``segment``, ``variable``) given holding its :func:`m.text_key`, the
    whole text beside it when the key is not the text (else NULL). ``row`` is changed in
    place (each is built for its insert) and returned."""
    texts, keyed = _text_columns(table)
    for name in texts:
        value = row.get(name)
        if isinstance(value, str) and ("\x00" in value or value.startswith(m.ESCAPED)):
            row[name] = m.stored_text(value)
    for key, full in keyed:
        if key in row:
            value = row[key]
            row[key] = m.text_key(value)
            row[full] = None if row[key] is value else value
    return row


def stored_error(error: str) -> str:
    """An error message as the store keeps it: secrets masked, and a NUL (which a quoted value
    may carry, and PostgreSQL's text refuses) written ``\\x00``, so recording it never fails."""
    return redact(error).replace("\x00", "\\x00")


def full_text(key: str, full: str | None) -> str:
    """The text of a key column read back: the whole text beside it, or the key itself, as it
    was written (:func:`m.read_text`)."""
    return m.read_text(key if full is None else full)


def read_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row read back with each text as it was written (:func:`m.read_text`)."""
    return {k: m.read_text(v) if isinstance(v, str) else v for k, v in row.items()}


def shared_rows(
    rows: Iterable[Any], documents: Collection[str] = (), *, share: bool = True
) -> Iterator[dict[str, Any]]:
    """Rows read back as :func:`read_row` gives them, each distinct text one object, and each
    column in ``documents`` (JSON read as its text: :func:`json_text`) parsed once per distinct
    document, the rows that hold it sharing the parsed object (an empty object for NULL). A
    run's hundreds of thousands of figures repeat a few names, segments and parameter sets:
    240,000 figures of 5,000 segments took 300 MB as copies (``benchmarks/messy.md``). The
    records read so must be treated as read-only, as every reader of the store does. Without
    ``share``, each row's documents are parsed apart: the store's figures are read so, into
    columns (:class:`~riskmon.held.Held`) that keep a document's values, not the document, and
    remembering every distinct document would hold them twice while it reads."""
    texts: dict[str, str] = {}
    parsed: dict[str | None, Any] = {}
    for row in rows:
        values = {}
        for key, value in row._mapping.items():
            if key in documents:
                document = parsed.get(value) if share else None
                if document is None:
                    document = (json.loads(value) if value else None) or {}
                    if share:
                        parsed[value] = document
                values[key] = document
            elif isinstance(value, str):
                value = m.read_text(value)
                values[key] = texts.setdefault(value, value)
            else:
                values[key] = value
        yield values


def json_text(column: InstrumentedAttribute[Any]) -> ColumnElement[str]:
    """A JSON column read as its text (for :func:`shared_rows`), labelled with its name."""
    return cast_(column, Text).label(column.key)


def read_column(table: type[m.Base], name: str, *, json: str = "") -> ColumnElement[Any]:
    """Column ``name`` of ``table`` as a record is read from it: a key column as its whole
    text (:func:`full_column`), the column ``json`` as its JSON text (:func:`json_text`)."""
    column = getattr(table, name)
    if name == json:
        return json_text(column)
    return full_column(column) if name in m.KEYED_COLUMNS else column


def full_column(column: InstrumentedAttribute[str]) -> ColumnElement[str]:
    """A key column (``m.Figure.segment``) read as its whole stored text (for
    :func:`read_row`), labelled with its name."""
    whole = getattr(column.class_, m.KEYED_COLUMNS[column.key])
    return func.coalesce(whole, column).label(column.key)


#: rows built and inserted at a time (an executemany each): memory stays flat in the rows
INSERT_BATCH = 10_000


def insert_rows(session: Session, table: type[m.Base], rows: Iterable[dict[str, Any]]) -> None:
    """Insert ``rows`` into ``table`` by executemany, :data:`INSERT_BATCH` at a time: hundreds
    of thousands of bins in seconds, where ORM objects one by one take minutes (and the ORM's
    bulk path splits them into statements of a few rows). Each row is stored as
    :func:`stored_row` makes it: any text, of any length, is stored."""
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(stored_row(table, row))
        if len(batch) == INSERT_BATCH:
            _execute_many(session.connection(), cast(Table, table.__table__), batch)
            batch = []
    if batch:
        _execute_many(session.connection(), cast(Table, table.__table__), batch)


def _execute_many(connection: Connection, table: Table, batch: list[dict[str, Any]]) -> None:
    """One executemany of ``batch`` into ``table``. On SQLite, where rows of the same columns
    go straight to the driver as tuples (:func:`_driver_insert`); else, or where the INSERT
    needs more than the rows (a column default), through SQLAlchemy."""
    keys = frozenset(batch[0])
    plan = _driver_insert(connection.dialect, table, keys)
    if plan is None or any(len(row) != len(keys) for row in batch):
        connection.execute(insert(table), batch)
        return
    sql, order, processors = plan
    try:
        values = [tuple(row[k] for k in order) for row in batch]
    except KeyError:  # a row of other columns
        connection.execute(insert(table), batch)
        return
    if processors:
        columns = list(zip(*values, strict=True))
        for index, process in processors:
            columns[index] = tuple(map(process, columns[index]))
        values = list(zip(*columns, strict=True))
    connection.exec_driver_sql(sql, values)


@lru_cache(maxsize=256)
def _driver_insert(
    dialect: Dialect, table: Table, keys: frozenset[str]
) -> tuple[str, tuple[str, ...], tuple[tuple[int, Callable[[Any], Any]], ...]] | None:
    """The INSERT of ``keys`` into ``table`` as SQLite's driver takes it, the order of its
    values, and the bind processor of each that has one (dates and JSON as SQLAlchemy writes
    them), compiled once where SQLAlchemy's executemany builds a parameter dictionary for each
    row: 20,000 bins in about four fifths of the time. None elsewhere, or where SQLAlchemy would
    add to the rows (a column's default)."""
    if dialect.name != "sqlite" or dialect.paramstyle != "qmark":
        return None
    compiled = insert(table).compile(dialect=dialect, column_keys=sorted(keys))
    order = tuple(compiled.positiontup or ())
    if compiled.insert_prefetch or set(order) != keys or len(order) != len(keys):
        return None
    processors = []
    for index, key in enumerate(order):
        process = table.c[key].type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            processors.append((index, process))
    return compiled.string, order, tuple(processors)


def insert_records(
    session: Session,
    table: type[m.Base],
    records: Iterable[Any],
    *,
    skip: Collection[str] = (),
    **common: Any,
) -> None:
    """Insert dataclass ``records`` as rows of ``table`` (:func:`record_row`, plus
    ``common``); records held in columns are read as rows without making each record."""
    held = records.records if isinstance(records, Figures) else records
    if isinstance(held, Held):
        rows = held.rows(skip)
    else:
        rows = (record_row(r, skip=skip) for r in records)
    insert_rows(session, table, (row | common for row in rows))


class StoreSession:
    """The store's engine and its transactions; the parts of the store build on it."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    @property
    def masked_url(self) -> str:
        return mask_url(self.engine.url.render_as_string(hide_password=False))

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """One transaction: committed at the end, rolled back on any error."""
        try:
            with self._sessions.begin() as session:
                yield session
        except StoreError:
            raise
        except IntegrityError as exc:
            detail = redact(str(exc.orig or exc)).splitlines()[0]
            raise StoreConflict(f"metric store {self.masked_url}: {detail}") from exc
        except SQLAlchemyError as exc:
            detail = redact(str(getattr(exc, "orig", None) or exc)).splitlines()[0]
            raise StoreError(f"metric store {self.masked_url}: {detail}") from exc

    def ensure_model(self, name: str, score_direction: str) -> int:
        """The id of model ``name``, created on first use."""
        with self._session() as session:
            model_id = session.scalar(select(m.Model.id).where(m.Model.name == name))
            if model_id is not None:
                session.execute(
                    update(m.Model)
                    .where(m.Model.id == model_id)
                    .values(score_direction=score_direction)
                )
                return model_id
        try:
            with self._session() as session:
                model = m.Model(name=name, score_direction=score_direction)
                session.add(model)
                session.flush()
                return model.id
        except StoreConflict:  # created by a concurrent process in the meantime
            with self._session() as session:
                return session.execute(select(m.Model.id).where(m.Model.name == name)).scalar_one()
