"""Each engine riskmon reads from has one profile; any other engine gets the generic one."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import text
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
    assert {p.name for p in engines.PROFILES if p.grouping_sets} == {"postgresql", "duckdb"}
    assert {p.name for p in engines.PROFILES if p.categories_by_text} == {"postgresql", "duckdb"}
    assert [p.name for p in engines.PROFILES if not p.statement_timeout] == ["duckdb"]
    assert "REPEATABLE READ" in POSTGRESQL.snapshot
    assert "read-only" in DUCKDB.snapshot
    assert DUCKDB.connect_args() == {
        "read_only": True,
        "config": {"memory_limit": engines.DUCKDB_MEMORY_LIMIT},
    }
    assert DUCKDB.connect_args() is not DUCKDB.connect_args()  # fresh for every engine
    with pytest.raises(SourceError, match="'grouping_sets' is not available on sqlite"):
        resolve_strategy("grouping_sets", "sqlite")


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
