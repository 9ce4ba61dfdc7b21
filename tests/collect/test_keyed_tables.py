"""A table keyed within its id and score date columns has no repeats to count: the collect
gives 0 without the ``GROUP BY`` that counts them, and counts them where a key does not rule
them out (a partial or expression index, a key on other columns, an engine that does not
enforce keys)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from sqlalchemy import (
    Column,
    Date,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
    func,
    select,
    table,
    text,
)
from sqlalchemy.sql.schema import SchemaItem

from riskmon.collect import CollectedTables, Source, collect
from riskmon.collect.exclusions import keyed_by
from riskmon.collect.selection import QueryColumns, duplicate_counts, statement_groups

from .loans import load, loan_frame, model_config, statements_with
from .test_collect import STRATEGIES_BY_DIALECT, request

ID_AND_DATE = ("loan_id", "score_date")


def _loans(*constraints: SchemaItem) -> Table:
    return Table(
        "loans",
        MetaData(),
        Column("loan_id", String(20)),
        Column("score_date", Date),
        Column("branch", Integer),
        *constraints,
    )


@pytest.mark.parametrize(
    "constraint",
    [
        PrimaryKeyConstraint("loan_id", "score_date"),
        PrimaryKeyConstraint("loan_id"),
        UniqueConstraint("score_date", "loan_id"),
        Index("by_loan", "loan_id", "score_date", unique=True),
    ],
    ids=["primary-key", "primary-key-on-the-id", "unique-constraint", "unique-index"],
)
def test_a_key_within_the_id_and_score_date_rules_out_repeats(constraint: SchemaItem) -> None:
    assert keyed_by(_loans(constraint), ID_AND_DATE)


@pytest.mark.parametrize(
    "constraint",
    [
        None,
        PrimaryKeyConstraint("loan_id", "branch"),
        UniqueConstraint("loan_id", "branch"),
        Index("by_loan", "loan_id", "score_date"),
        Index("by_loan", "loan_id", "score_date", unique=True, postgresql_where=text("branch > 0")),
        Index("by_loan", "loan_id", "score_date", unique=True, sqlite_where=text("branch > 0")),
        Index("by_loan", func.lower(text("loan_id")), "score_date", unique=True),
    ],
    ids=[
        "no-key",
        "key-with-another-column",
        "unique-with-another-column",
        "index-not-unique",
        "postgresql-partial-index",
        "sqlite-partial-index",
        "expression-index",
    ],
)
def test_no_key_within_the_id_and_score_date_leaves_repeats_possible(
    constraint: SchemaItem | None,
) -> None:
    assert not keyed_by(_loans() if constraint is None else _loans(constraint), ID_AND_DATE)


def test_a_query_or_a_bare_table_has_no_key() -> None:
    keyed = _loans(PrimaryKeyConstraint("loan_id"))
    assert not keyed_by(select(keyed).subquery("loans"), ID_AND_DATE)
    assert not keyed_by(table("loans"), ID_AND_DATE)


def _collected(url: str, dialect: str) -> dict[str, tuple[CollectedTables, int]]:
    """Per strategy, what it collected and how many statements counted repeated ids."""
    req = dataclasses.replace(request(), score="pd_score", id="loan_id")
    out = {}
    with Source(model_config(url)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            with statements_with(source.engine, "HAVING") as seen:  # repeats counted
                out[strategy] = (collect(source, req, strategy=strategy), len(seen))
    return out


def _index(url: str, statement: str) -> None:
    if url.startswith("duckdb"):
        import duckdb

        with duckdb.connect(url.removeprefix("duckdb:///")) as connection:
            connection.execute(statement)
        return
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(statement)
    finally:
        engine.dispose()


def test_a_unique_key_on_id_and_date_saves_the_count_and_changes_no_figure(
    database: tuple[str, str],
) -> None:
    """The same tables and exclusions with and without the key; with it, no statement counts
    repeats where the engine's tables are reflected (not DuckDB's: counted as before)."""
    dialect, url = database
    frame = loan_frame(seed=17)
    frame["loan_id"] = range(len(frame))
    load(url, frame)
    unkeyed = _collected(url, dialect)
    _index(url, "CREATE UNIQUE INDEX loans_key ON loans (loan_id, score_date)")
    keyed = _collected(url, dialect)
    for strategy, (tables, counted) in keyed.items():
        before, counted_before = unkeyed[strategy]
        assert counted_before > 0, strategy
        assert counted == (counted_before if dialect == "duckdb" else 0), strategy
        assert tables.exclusions == before.exclusions, strategy
        assert all(e.duplicates == 0 for e in tables.exclusions.values()), strategy
        assert set(tables.tables) == set(before.tables), strategy
        for key, table_ in before.tables.items():  # DuckDB sums in parallel, in any order
            assert tables.tables[key].equals(table_, rtol=1e-12), (strategy, key)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"], indirect=True)
def test_a_partial_unique_index_still_counts_the_repeats(database: tuple[str, str]) -> None:
    """A unique index over some rows only: the repeats among the others are counted."""
    dialect, url = database
    frame = loan_frame(seed=19)
    frame["loan_id"] = range(len(frame))
    low = frame[frame["pd_score"] < 0.1].head(25)
    assert len(low) == 25
    load(url, pd.concat([frame, low], ignore_index=True))
    where = "WHERE pd_score >= 0.1"
    _index(url, f"CREATE UNIQUE INDEX loans_key ON loans (loan_id, score_date) {where}")
    for strategy, (tables, counted) in _collected(url, dialect).items():
        assert counted > 0, strategy
        repeats = sum(e.duplicates or 0 for e in tables.exclusions.values())
        windows = [p.window for p in request().populations]
        expected = sum(low["score_date"].map(w.__contains__).sum() for w in windows)
        assert repeats == expected > 0, strategy


@pytest.mark.parametrize("database", ["sqlite", "duckdb", "postgresql"], indirect=True)
def test_the_repeats_counted_window_by_window_are_those_counted_at_once(
    database: tuple[str, str],
) -> None:
    """``duplicate_counts`` with ``side_by_side`` (a ``GROUP BY`` per window, joined by
    ``UNION ALL``) counts, per population, the loans repeating an id and score date that one
    ``GROUP BY`` over every window counts, and pandas counts."""
    _, url = database
    frame = loan_frame(seed=23)
    twice = frame.sample(n=60, random_state=23)
    frame = pd.concat([frame, twice, twice.iloc[:5], twice.iloc[:1]], ignore_index=True)
    frame.loc[frame.sample(n=10, random_state=5).index, "loan_id"] = None  # never repeats
    load(url, frame)
    req = dataclasses.replace(request(), score="pd_score", id="loan_id")
    windows = {p.name: p.window for p in req.populations}
    expected = {}
    for name, window in windows.items():
        used = frame[frame["score_date"].map(window.__contains__) & frame["pd_score"].notna()]
        used = used[used["loan_id"].notna() & (used["exposure"] > 0)]
        expected[name] = int(used.duplicated(["loan_id", "score_date"]).sum())
    assert sum(n > 0 for n in expected.values()) >= 2
    with Source(model_config(url)) as source, source.engine.connect() as connection:
        loans = source.selectable()
        (group,) = statement_groups(req)
        cols = QueryColumns(loans, req, group)
        for side_by_side in (False, True):
            statement = duplicate_counts(cols, loans.c["loan_id"], side_by_side=side_by_side)
            assert ("UNION ALL" in str(statement)) is side_by_side
            rows = connection.execute(statement).all()
            counted = {cols.population_name(code): int(n) for code, n in rows}
            assert counted == {k: n for k, n in expected.items() if n}, side_by_side
