"""Each engine riskmon reads from has one profile; any other engine gets the generic one."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from riskmon.collect import DEFAULT_STRATEGY, Source, collect, engines, resolve_strategy
from riskmon.collect.engines import (
    DUCKDB,
    GENERIC,
    MYSQL,
    POSTGRESQL,
    SQLITE,
    EngineProfile,
    profile_for,
)
from riskmon.errors import SourceError

from .loans import load, loan_frame, model_config
from .test_collect import expected_tables, request

KNOWN = [
    ("postgresql", POSTGRESQL, "packed"),
    ("duckdb", DUCKDB, "packed"),
    ("mysql", MYSQL, "union_all"),
    ("mariadb", MYSQL, "union_all"),
    ("sqlite", SQLITE, "stream"),
]


@pytest.fixture
def unwarned(monkeypatch: pytest.MonkeyPatch) -> None:
    """No engine warned about yet, whatever other tests asked for."""
    monkeypatch.setattr(engines, "_warned", set())


@pytest.mark.parametrize(("dialect", "profile", "shape"), KNOWN, ids=[k[0] for k in KNOWN])
def test_each_known_dialect_has_its_profile_and_default_shape(
    dialect: str, profile: EngineProfile, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=engines.__name__):
        assert profile_for(dialect) is profile
    assert caplog.records == []
    assert profile.default_shape == shape
    assert DEFAULT_STRATEGY[dialect] == shape
    assert resolve_strategy("auto", dialect) == shape
    assert profile.read_only
    assert 0 < len(profile.snapshot) <= 100  # a line a run can record


def test_what_each_profile_says() -> None:
    lake = {"spark", "databricks", "snowflake", "bigquery"}
    assert {p.name for p in engines.PROFILES if p.grouping_sets} == {"postgresql", "duckdb"} | lake
    assert {p.name for p in engines.PROFILES if p.categories_by_text} == {
        "postgresql",
        "duckdb",
        "trino",
    } | lake
    assert [p.name for p in engines.PROFILES if not p.statement_timeout] == ["duckdb", "bigquery"]
    assert [p.name for p in engines.PROFILES if p.group_by_position] == ["trino"]
    assert [p.name for p in engines.PROFILES if p.time_travel] == ["spark", "databricks"]
    assert "REPEATABLE READ" in POSTGRESQL.snapshot
    assert "read-only" in DUCKDB.snapshot
    assert DUCKDB.connect_args() == {
        "read_only": True,
        "config": {"memory_limit": engines.DUCKDB_MEMORY_LIMIT},
    }
    assert DUCKDB.connect_args() is not DUCKDB.connect_args()  # fresh for every engine
    with pytest.raises(SourceError, match="'grouping_sets' is not available on sqlite"):
        resolve_strategy("grouping_sets", "sqlite")


WAREHOUSES = [
    ("hive", engines.SPARK),
    ("databricks", engines.DATABRICKS),
    ("trino", engines.TRINO),
    ("snowflake", engines.SNOWFLAKE),
    ("bigquery", engines.BIGQUERY),
]


@pytest.mark.parametrize(("dialect", "profile"), WAREHOUSES, ids=[w[0] for w in WAREHOUSES])
def test_each_warehouse_has_its_profile_and_says_it_reads_no_snapshot(
    dialect: str, profile: EngineProfile, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=engines.__name__):
        assert profile_for(dialect) is profile
    assert caplog.records == []
    assert resolve_strategy("auto", dialect) == profile.default_shape
    assert not profile.read_only
    assert "no read-only transaction" in profile.missing_guards
    assert profile.snapshot.endswith(engines.NOT_SNAPSHOT)
    assert 0 < len(profile.snapshot) <= 160  # a line a run can record


def test_spark_errors_keep_sparks_message_without_the_thrift_status() -> None:
    """What PyHive raises for a missing table (as a Thrift server of Spark 4 answers)."""
    raw = (
        "TExecuteStatementResp(status=TStatus(statusCode=3, infoMessages=['*org.apache.hive."
        "service.cli.HiveSQLException:Error running query: [TABLE_OR_VIEW_NOT_FOUND] The table "
        "or view `nope` cannot be found. SQLSTATE: 42P01; line 1 pos 21:48:47', "
        "'org.apache.spark.sql.hive.thriftserver.HiveThriftServerErrors$:runningQueryError:"
        "HiveThriftServerErrors.scala:49'], sqlState='42P01', errorCode=0, errorMessage="
        "'Error running query: [TABLE_OR_VIEW_NOT_FOUND] The table or view `nope` cannot be "
        "found. Verify the spelling and correctness of the schema and catalog.\\nSQLSTATE: "
        "42P01; line 1 pos 21'), operationHandle=None)"
    )
    message = engines.SPARK.message(Exception(raw))
    assert message == (
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `nope` cannot be found. Verify the "
        "spelling and correctness of the schema and catalog."
    )
    assert engines.SPARK.message(Exception("no status here")) == "no status here"


def test_an_unknown_engine_gets_the_generic_profile_and_one_warning(
    unwarned: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=engines.__name__):
        assert profile_for("somedb") is GENERIC
        assert profile_for("somedb") is GENERIC
        assert profile_for("otherdb") is GENERIC
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(messages) == 2
    somedb = messages[0]
    assert "'somedb'" in somedb
    assert "untested" in somedb
    assert "no read-only transaction" in somedb
    assert "no statement timeout" in somedb
    assert "'otherdb'" in messages[1]
    assert GENERIC.default_shape == "union_all"
    assert (GENERIC.grouping_sets, GENERIC.categories_by_text, GENERIC.keys_once) == (
        False,
        False,
        False,
    )
    assert GENERIC.missing_guards == [
        "no read-only transaction",
        "no statement timeout (statement_timeout_seconds is not applied)",
    ]


def test_the_generic_profile_reads_the_same_tables(
    tmp_path: Path, unwarned: None, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLAlchemy's SQLite engine read as an engine riskmon does not know: the union_all shape,
    no guard, the same tables."""
    url = f"sqlite:///{tmp_path}/loans.db"
    frame = loan_frame(seed=11)
    load(url, frame)
    req = request()
    with Source(model_config(url)) as source, caplog.at_level(logging.WARNING):
        source.profile = profile_for("somedb")
        collected = collect(source, req)
        with pytest.raises(SourceError, match="'grouping_sets' is not available on sqlite"):
            collect(source, req, strategy="grouping_sets")
    assert len(caplog.records) == 1
    expected = expected_tables(frame, req)
    assert set(collected.tables) == set(expected)
    for key, table in expected.items():
        assert collected.tables[key].equals(table, rtol=1e-12), key


def test_a_reading_runs_under_its_profiles_guard(database: tuple[str, str]) -> None:
    """Through each engine's profile a reading cannot write, and a statement that outruns
    statement_timeout_seconds is cancelled (DuckDB has no timeout: its file is read-only)."""
    dialect, url = database
    load(url, loan_frame(seed=5, n=2000))
    source_config = {"url": url, "table": "loans", "statement_timeout_seconds": 0.3}
    with Source(model_config(url, source=source_config)) as source:
        assert source.profile is profile_for(dialect)
        assert source.profile is not GENERIC
        with source.reading() as connection:
            if dialect == "postgresql":
                settings = "SELECT current_setting('transaction_read_only'), " + (
                    "current_setting('transaction_isolation')"
                )
                assert tuple(connection.execute(text(settings)).one()) == (
                    "on",
                    "repeatable read",
                )
            with pytest.raises(DBAPIError):
                connection.execute(text("DELETE FROM loans"))
        if not source.profile.statement_timeout:
            return
        # 8 billion rows to count: far longer than the time limit on every engine
        slow = text("SELECT count(*) FROM loans a, loans b, loans c")
        with (
            pytest.raises(SourceError, match=r"ran longer than statement_timeout_seconds=0\.3"),
            source.reading() as connection,
        ):
            connection.execute(slow)


@pytest.mark.postgres
@pytest.mark.parametrize("url_work_mem", [None, "256MB"])
def test_postgresql_counts_repeats_under_a_raised_work_mem_then_restores_it(
    postgres_url: str, tmp_path: Path, url_work_mem: str | None
) -> None:
    """The count of repeated ids and score dates runs with work_mem at least
    POSTGRESQL_PER_LOAN_WORK_MEM, a larger setting of the URL kept, and the setting is back
    to what it was for the statements after it."""
    url = postgres_url + (f"?options=-c%20work_mem%3D{url_work_mem}" if url_work_mem else "")
    frame = loan_frame(seed=3, n=500)
    frame = pd.concat([frame, frame.iloc[:7]], ignore_index=True)  # 7 repeated loans
    load(postgres_url, frame)
    req = dataclasses.replace(request(), id="loan_id", score="pd_score")
    seen: list[str] = []
    with Source(model_config(url)) as source:
        settings = source.profile.per_loan_settings
        assert settings is not None

        @contextmanager
        def spy(connection: Any) -> Iterator[None]:
            with settings(connection):
                seen.append(_work_mem(connection))
                yield
            seen.append(_work_mem(connection))

        source.profile = dataclasses.replace(source.profile, per_loan_settings=spy)
        collected = collect(source, req)
    least = engines.POSTGRESQL_PER_LOAN_WORK_MEM
    plain = create_engine(url)
    try:
        with plain.connect() as connection:  # the server's setting, or the URL's
            before = _work_mem(connection)
            larger = "SELECT pg_size_bytes(:before) >= pg_size_bytes(:least)"
            kept = connection.execute(text(larger), {"before": before, "least": least}).scalar()
    finally:
        plain.dispose()
    assert before == (url_work_mem or before)
    assert seen == [before if kept else least, before]
    # the same counts as SQLite's, which reads without the setting
    sqlite_url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(sqlite_url, frame)
    with Source(model_config(sqlite_url)) as source:
        on_sqlite = collect(source, req)
    assert collected.exclusions == on_sqlite.exclusions
    assert sum(e.duplicates for e in collected.exclusions.values()) > 0


@pytest.mark.postgres
def test_postgresql_per_loan_settings_let_a_failed_statements_error_through(
    postgres_url: str,
) -> None:
    load(postgres_url, loan_frame(seed=3, n=50))
    with Source(model_config(postgres_url)) as source, source.reading() as connection:
        settings = source.profile.per_loan_settings
        assert settings is not None
        with pytest.raises(DBAPIError, match="no_such_column"), settings(connection):
            connection.execute(text("SELECT no_such_column FROM loans"))


def _work_mem(connection: Any) -> str:
    return str(connection.execute(text("SELECT current_setting('work_mem')")).scalar())
