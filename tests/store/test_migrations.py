"""The Alembic migrations create exactly the models' schema, and undo it."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect

from riskmon.errors import StoreError
from riskmon.store.engine import store_engine
from riskmon.store.migrate import (
    alembic_config,
    check_models,
    check_schema,
    current_revision,
    downgrade,
    head_revision,
    known_revisions,
    stored_heads,
    upgrade,
)
from riskmon.store.models import Base

EXPECTED_TABLES = set(Base.metadata.tables)


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def test_upgrade_creates_the_full_schema_and_alembic_check_passes(engine: Engine) -> None:
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    assert _tables(engine) == EXPECTED_TABLES
    assert {"models", "baselines", "runs", "figures", "bin_stats", "alerts"} <= _tables(engine)
    check_models(engine)  # raises when models and migrations disagree
    check_schema(engine)


def test_downgrade_to_base_and_upgrade_again(engine: Engine) -> None:
    upgrade(engine)
    downgrade(engine, "base")
    assert _tables(engine) == set()
    assert current_revision(engine) is None
    upgrade(engine)
    assert _tables(engine) == EXPECTED_TABLES
    check_models(engine)


def test_unmigrated_store_is_refused_with_the_command_to_run(engine: Engine) -> None:
    with engine.connect():
        pass  # an empty database (on SQLite, an empty file)
    with pytest.raises(StoreError, match=r"is empty, riskmon needs revision .*riskmon db upgrade"):
        check_schema(engine)


def test_a_missing_sqlite_store_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "riskmon.db"
    engine = store_engine(f"sqlite:///{missing}")
    try:
        with pytest.raises(StoreError, match=f"the file {missing} does not exist: run `riskmon"):
            check_schema(engine)
    finally:
        engine.dispose()
    assert not missing.exists()


def test_runs_are_unique_per_model_and_date_in_the_schema(engine: Engine) -> None:
    upgrade(engine)
    constraints = inspect(engine).get_unique_constraints("runs")
    assert any(sorted(c["column_names"]) == ["as_of", "model_id"] for c in constraints)


def test_the_revisions_read_from_the_scripts_are_alembic_s() -> None:
    """A run reads the shipped revisions off the scripts' text without Alembic: the same
    chain, oldest first, and the same head, as Alembic's own walk of them."""
    scripts = ScriptDirectory.from_config(alembic_config())
    walked = [step.revision for step in reversed(list(scripts.walk_revisions()))]
    assert known_revisions() == walked
    assert len(walked) >= 9
    assert head_revision() == scripts.get_current_head()


def test_the_stored_revision_is_read_as_alembic_reads_it(engine: Engine) -> None:
    """Empty, then at each shipped revision in turn: the store's heads as Alembic reads them."""

    def alembic_heads() -> list[str]:
        with engine.connect() as connection:
            return list(MigrationContext.configure(connection).get_current_heads())

    def ours() -> list[str]:
        with engine.connect() as connection:
            return stored_heads(connection)

    assert ours() == alembic_heads() == []
    for revision in known_revisions():
        upgrade(engine, revision)
        assert ours() == alembic_heads() == [revision]
        assert current_revision(engine) == revision
