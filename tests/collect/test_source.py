"""The source is only read, and every statement of one collect pass sees the same loans."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from riskmon.collect import Source, collect
from riskmon.collect.engines import DUCKDB_MEMORY_LIMIT
from riskmon.errors import SourceError

from .loans import load, loan_frame, model_config
from .test_collect import request


def test_a_reading_connection_cannot_write(database: tuple[str, str]) -> None:
    _, url = database
    load(url, loan_frame(seed=5))
    with Source(model_config(url)) as source, source.reading() as connection:
        before = connection.execute(text("SELECT count(*) FROM loans")).scalar_one()
        with pytest.raises(DBAPIError):
            connection.execute(text("DELETE FROM loans"))
    with Source(model_config(url)) as source, source.reading() as connection:
        assert connection.execute(text("SELECT count(*) FROM loans")).scalar_one() == before


def test_statements_of_one_pass_share_one_snapshot(database: tuple[str, str]) -> None:
    """Loans written while a pass reads count in none of its tables, not in some."""
    dialect, url = database
    if dialect == "duckdb":
        pytest.skip("a DuckDB file opened read-only cannot be written while it is read")
    load(url, loan_frame(seed=5))
    writer = create_engine(url)
    if dialect == "sqlite":
        with writer.begin() as connection:  # readers and a writer at once
            connection.exec_driver_sql("PRAGMA journal_mode=WAL")
    try:
        with Source(model_config(url)) as source, source.reading() as connection:
            count = text("SELECT count(*) FROM loans")
            before = connection.execute(count).scalar_one()
            with writer.begin() as other:
                other.execute(text("INSERT INTO loans SELECT * FROM loans"))
            assert connection.execute(count).scalar_one() == before
        with Source(model_config(url)) as source, source.reading() as connection:
            assert connection.execute(count).scalar_one() == 2 * before
    finally:
        writer.dispose()


@pytest.fixture
def duckdb_url(tmp_path: Path) -> str:
    pytest.importorskip("duckdb_engine", reason="DuckDB tests need duckdb-engine")
    url = f"duckdb:///{tmp_path / 'loans.duckdb'}"
    load(url, loan_frame(seed=5))
    return url


def _memory_limit(url: str) -> str:
    with Source(model_config(url)) as source, source.reading() as connection:
        return str(connection.execute(text("SELECT current_setting('memory_limit')")).scalar_one())


def _duckdb_renders(limit: str) -> str:
    import duckdb

    with duckdb.connect(config={"memory_limit": limit}) as connection:
        row = connection.execute("SELECT current_setting('memory_limit')").fetchone()
    assert row is not None
    return str(row[0])


def test_duckdb_runs_under_riskmons_memory_limit_unless_the_url_sets_one(duckdb_url: str) -> None:
    assert _memory_limit(duckdb_url) == _duckdb_renders(DUCKDB_MEMORY_LIMIT)
    assert _memory_limit(f"{duckdb_url}?memory_limit=1GB") == _duckdb_renders("1GB")
    assert _duckdb_renders("1GB") != _duckdb_renders(DUCKDB_MEMORY_LIMIT)


def test_duckdb_out_of_memory_says_where_to_raise_the_limit(duckdb_url: str) -> None:
    with (
        Source(model_config(f"{duckdb_url}?memory_limit=1MB")) as source,
        pytest.raises(SourceError, match="Out of Memory") as raised,
    ):
        collect(source, request(), strategy="union_all")
    assert "raise it there (e.g. ?memory_limit=1GB)" in str(raised.value)
    assert "retail_pd" in str(raised.value)
