"""A ``riskmon db upgrade`` killed (SIGKILL) right after any of its SQL statements (any write, on
SQLite) leaves a store that the next ``riskmon db upgrade`` migrates to the models' schema, on
SQLite and PostgreSQL.

Each migration commits with its version bump in one transaction, so a kill leaves the store at
the revision before the migration it interrupted. The kills go through every migration that
ships, whatever their number: the upgrade is killed after statement 1, 2, ... until it
finishes (``killed_upgrade.py``). On PostgreSQL reads are counted too; on SQLite, where an upgrade
runs several times as many statements (each ``PRAGMA`` reading the schema), only the writes are:
a kill right after a read leaves the file as the kill right after the write before it, and the
set of revisions the kills leave behind still holds every one.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.store.engine import opened_store
from riskmon.store.migrate import check_models, check_schema, current_revision, known_revisions

from .. import forkserver

KILLED_UPGRADE = Path(__file__).with_name("killed_upgrade.py")
#: a bound on the killing process (9 s for 61 kills of writes on SQLite, 4-12 s for 32 on
#: PostgreSQL here, on two cores shared with other test runs)
KILLING_TIMEOUT_S = 300


def _kill_at_every_statement(base_url: str, folder: Path) -> list[dict[str, Any]]:
    results = folder / "results.json"
    only = ["--writes-only"] if base_url.startswith("sqlite") else []
    forkserver.run(
        [sys.executable, str(KILLED_UPGRADE), str(results), base_url, *only],
        check=True,
        timeout=KILLING_TIMEOUT_S,
    )
    killings: list[dict[str, Any]] = json.loads(results.read_text())
    return killings


def _assert_every_kill_recovers(base_url: str, folder: Path) -> None:
    started = time.monotonic()
    killings = _kill_at_every_statement(base_url, folder)
    killed_in = time.monotonic() - started
    *killed, finished = killings
    assert all(k["killed"] for k in killed), [k for k in killed if not k["killed"]]
    assert finished["exit_code"] == 0, finished
    left_at: set[str | None] = set()
    for killing in killings:
        where = f"killed after statement {killing['n']}: {killing['statement']!r}"
        with opened_store(killing["url"]) as engine:
            left_at.add(current_revision(engine))
        result = CliRunner().invoke(cli, ["db", "upgrade", "--url", killing["url"]])
        assert result.exit_code == 0, f"{where}\n{result.output}"
        with opened_store(killing["url"]) as engine:
            check_models(engine)  # the schema equals the models'
            check_schema(engine)
    # the kills fell before the first migration, between any two, and after the last
    assert left_at == {None, *known_revisions()}
    assert any(k["statement"].lstrip().startswith(("CREATE", "ALTER")) for k in killed)
    print(
        f"{len(killings)} upgrades ({len(killed)} killed) in {killed_in:.1f} s, their "
        f"recoveries in {time.monotonic() - started - killed_in:.1f} s"
    )


def test_an_upgrade_killed_after_any_statement_is_migrated_again_on_sqlite(
    tmp_path: Path,
) -> None:
    _assert_every_kill_recovers(f"sqlite:///{tmp_path / 'store.db'}", tmp_path)


@pytest.mark.postgres
def test_an_upgrade_killed_after_any_statement_is_migrated_again_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    _assert_every_kill_recovers(postgres_url, tmp_path)
