"""A store riskmon cannot use is refused, saying why and what to do, before anything is
written: one a newer riskmon migrated, a damaged SQLite file, a schema altered outside the
migrations. ``riskmon db check`` lists what it checked and what it found.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner, Result
from sqlalchemy import Engine, text

from riskmon import __version__
from riskmon.cli import cli
from riskmon.errors import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, StoreError
from riskmon.store.migrate import (
    check_schema,
    current_revision,
    head_revision,
    known_revisions,
    migration_connection,
    upgrade,
)
from riskmon.store.models import Base

from ..collect.loans import load, loan_frame, model_config

#: a revision no riskmon has shipped yet
NEWER_REVISION = "0099"
#: SQLite's b-tree page types (https://www.sqlite.org/fileformat2.html#b_tree_pages)
INTERIOR_TABLE_PAGE, LEAF_TABLE_PAGE = 0x05, 0x0D
#: bytes overwritten in the middle of a page: more than one row of ``figures`` takes
DAMAGED_BYTES = 512


def _db(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["db", *args, "--url", url])


def _stamp(engine: Engine, revision: str) -> None:
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})


# --------------------------------------------------------------------------- a newer store


def test_a_store_migrated_by_a_newer_riskmon_is_refused_everywhere(
    engine: Engine, store_url: str
) -> None:
    upgrade(engine)
    _stamp(engine, NEWER_REVISION)
    says = [NEWER_REVISION, head_revision(), f"riskmon {__version__}", "newer riskmon"]
    with pytest.raises(StoreError) as refused:
        check_schema(engine)
    assert all(part in str(refused.value) for part in says), refused.value
    assert "run `riskmon db upgrade`" not in str(refused.value)
    with pytest.raises(StoreError, match=NEWER_REVISION):
        upgrade(engine)
    for command in (["upgrade"], ["current"], ["downgrade", "--revision", "base"], ["check"]):
        result = _db(store_url, *command)
        assert result.exit_code == EXIT_UNAVAILABLE, (command, result.output)
        assert "unexpected" not in result.output, result.output
        assert all(part in result.output for part in says), (command, result.output)
    _stamp(engine, head_revision())  # nothing else was touched: the store is usable again
    check_schema(engine)


def test_an_unknown_target_revision_is_a_usage_error_naming_the_shipped_ones(
    sqlite_url: str,
) -> None:
    for command in ("upgrade", "downgrade"):
        result = _db(sqlite_url, command, "--revision", NEWER_REVISION)
        assert result.exit_code == EXIT_USAGE, result.output
        assert f"Can't locate revision identified by '{NEWER_REVISION}'" in result.output
        assert f"ships {', '.join(known_revisions())}, and 'head'" in result.output


# --------------------------------------------------------------------------- db check


def test_db_check_passes_a_sound_store_and_lists_what_it_checked(
    engine: Engine, store_url: str
) -> None:
    upgrade(engine)
    result = _db(store_url, "check")
    assert result.exit_code == EXIT_OK, result.output
    assert "ok       revision" in result.output
    assert "schema: tables, columns" in result.output
    assert ("SQLite quick_check" in result.output) == store_url.startswith("sqlite")
    assert "FAILED" not in result.output
    assert "sound (" in result.output


def test_a_schema_altered_outside_the_migrations_is_refused_and_named(
    engine: Engine, store_url: str
) -> None:
    upgrade(engine)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE figures DROP COLUMN reason"))
    with pytest.raises(StoreError, match=r"at revision \w+ but lacks figures\.reason"):
        check_schema(engine)
    result = _db(store_url, "check")
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert "column figures.reason missing" in result.output
    assert "figures: " in result.output  # the query of the table's columns fails too


def test_db_check_finds_rows_of_a_sqlite_store_referring_to_missing_rows(
    sqlite_url: str, tmp_path: Path
) -> None:
    _db(sqlite_url, "upgrade")
    with sqlite3.connect(tmp_path / "store.db") as connection:  # foreign keys off, by default
        connection.execute(
            "INSERT INTO figures (run_id, name, variable, segment, population, params) "
            "VALUES (99, 'ks', '', '', 'current', '{}')"
        )
    connection.close()
    result = _db(sqlite_url, "check")
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert "FAILED   foreign keys" in result.output
    assert "figures row 1 refers to a missing row of runs" in result.output


def test_a_sqlite_migration_that_leaves_rows_referring_to_missing_rows_is_rolled_back(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Foreign keys are off while a SQLite migration runs: they are checked before it commits."""
    assert _db(sqlite_url, "upgrade", "--revision", "0002").exit_code == EXIT_OK
    with sqlite3.connect(tmp_path / "store.db") as connection:
        connection.execute(
            "INSERT INTO figures (run_id, name, variable, segment, population, params) "
            "VALUES (99, 'ks', '', '', 'current', '{}')"
        )
    connection.close()
    result = _db(sqlite_url, "upgrade")
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert "after migration 0003, rows of the store refer to missing rows" in result.output
    assert "figures row 1 refers to a missing row of runs" in result.output
    assert "the migration was rolled back" in result.output
    assert "Traceback" not in result.output
    assert _db(sqlite_url, "current").output.startswith(f"metric store {sqlite_url}: revision 0002")


def test_db_check_of_an_empty_store_says_to_upgrade_it(engine: Engine, store_url: str) -> None:
    with engine.connect():
        pass  # an empty database (on SQLite, an empty file)
    result = _db(store_url, "check")
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert "the store is empty" in result.output
    assert "run `riskmon db upgrade`" in result.output
    assert "skipped" in result.output


# --------------------------------------------------------------------------- a damaged file


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    """A configuration whose SQLite store holds one run (as of 2025-02-28)."""
    source = f"sqlite:///{tmp_path / 'loans.db'}"
    load(source, loan_frame(seed=3, n=3000))
    model = model_config(source, performance_window="2 months")
    store = {"url": f"sqlite:///{tmp_path / 'store.db'}", "reports_dir": str(tmp_path / "reports")}
    path = tmp_path / "riskmon.yaml"
    document = {"store": store, "models": [model.model_dump(mode="json", by_alias=True)]}
    path.write_text(yaml.safe_dump(document))
    for command in (["db", "upgrade"], ["run", "--as-of", "2025-02-28"]):
        result = CliRunner().invoke(cli, ["-c", str(path), *command])
        assert result.exit_code in (0, 1), result.output  # 1: an alert, which is fine here
    return path


def _damage_a_page_of(file: Path, table: str) -> int:
    """Overwrite bytes in the middle of ``table``'s first leaf page (a full one): its rows'
    cells are there. Returns the page's number."""
    with sqlite3.connect(file) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    connection.close()
    data = file.read_bytes()
    page = root
    while data[(page - 1) * page_size] == INTERIOR_TABLE_PAGE:
        start = (page - 1) * page_size
        first_cell = int.from_bytes(data[start + 12 : start + 14], "big")  # its cell pointer
        page = int.from_bytes(data[start + first_cell : start + first_cell + 4], "big")
    start = (page - 1) * page_size
    assert data[start] == LEAF_TABLE_PAGE, f"page {page} of {table} is no leaf"
    middle = start + page_size // 2
    with file.open("r+b") as opened:
        opened.seek(middle - DAMAGED_BYTES // 2)
        opened.write(b"\xff" * DAMAGED_BYTES)
    return page


def _digest(file: Path) -> str:
    return hashlib.sha256(file.read_bytes()).hexdigest()


def test_a_damaged_sqlite_store_is_refused_before_a_run_writes_and_db_check_says_why(
    config_path: Path, tmp_path: Path
) -> None:
    file = tmp_path / "store.db"
    page = _damage_a_page_of(file, "figures")
    before = _digest(file)

    run = CliRunner().invoke(cli, ["-c", str(config_path), "run", "--as-of", "2025-03-31"])
    assert run.exit_code == EXIT_UNAVAILABLE, run.output
    assert "is damaged: SQLite's quick_check found" in run.output
    assert f"page {page}" in run.output
    assert "restore the file from a backup" in run.output
    wal = file.with_name(file.name + "-wal")
    assert _digest(file) == before
    assert not wal.exists() or wal.stat().st_size == 0

    check = CliRunner().invoke(cli, ["-c", str(config_path), "db", "check"])
    assert check.exit_code == EXIT_UNAVAILABLE, check.output
    assert "FAILED   SQLite quick_check" in check.output
    assert f"page {page}" in check.output

    upgraded = CliRunner().invoke(cli, ["-c", str(config_path), "db", "upgrade"])
    assert upgraded.exit_code == EXIT_UNAVAILABLE, upgraded.output
    assert "already at" not in upgraded.output
    assert "is damaged" in upgraded.output
    assert _digest(file) == before


# --------------------------------------------------------------------------- SQLite migrations


def _a_run_with_figures(engine: Engine) -> None:
    tables = Base.metadata.tables
    now = dt.datetime.now(dt.timezone.utc)
    with engine.begin() as connection:
        connection.execute(
            tables["models"].insert(),
            {"id": 1, "name": "m", "score_direction": "higher_is_riskier", "created_at": now},
        )
        connection.execute(
            tables["runs"].insert(),
            {
                "id": 1,
                "model_id": 1,
                "as_of": dt.date(2025, 3, 31),
                "status": "succeeded",
                "started_at": now,
                "riskmon_version": __version__,
                "config_hash": "0" * 64,
            },
        )
        connection.execute(
            tables["figures"].insert(),
            [
                {
                    "run_id": 1,
                    "name": f"figure{i}",
                    "variable": "",
                    "segment": "",
                    "population": "current",
                    "params": {},
                }
                for i in range(5)
            ],
        )


def test_a_sqlite_migration_that_rebuilds_a_table_keeps_the_rows_referring_to_it(
    sqlite_url: str,
) -> None:
    """Alembic's batch mode rebuilds a SQLite table to change a column's type (copy, drop,
    rename): with foreign keys on, dropping ``runs`` would delete every figure of every run
    (``ON DELETE CASCADE``). The migration connection has them off, and on again after."""
    from riskmon.store.engine import store_engine

    engine = store_engine(sqlite_url)
    try:
        upgrade(engine)
        _a_run_with_figures(engine)
        with migration_connection(engine) as connection:
            operations = Operations(MigrationContext.configure(connection))
            with (
                connection.begin(),
                operations.batch_alter_table("runs", recreate="always") as batch,
            ):
                batch.alter_column("owner", existing_type=sa.String(200), type_=sa.Text())
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM figures")).scalar() == 5
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
