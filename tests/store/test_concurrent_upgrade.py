"""Two `riskmon db upgrade` at once on one PostgreSQL store take turns (an advisory lock): the
second finds the store migrated, instead of creating the same tables again and failing."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from riskmon.store.engine import opened_store
from riskmon.store.migrate import check_models, current_revision, head_revision

from .. import forkserver

#: imports riskmon, waits for the shared start time, then migrates the store at argv[1]
UPGRADE = """
import sys, time
from riskmon.store.engine import opened_store
from riskmon.store.migrate import upgrade
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
with opened_store(sys.argv[1]) as engine:
    upgrade(engine)
"""
PROCESS_TIMEOUT = 120


@pytest.mark.postgres
def test_two_upgrades_at_once_on_postgresql_both_succeed(postgres_url: str) -> None:
    start_at = str(time.time() + 6)  # both have imported riskmon by then
    children = [
        forkserver.popen(
            [sys.executable, "-c", UPGRADE, postgres_url, start_at],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        errors = [child.communicate(timeout=PROCESS_TIMEOUT)[1] for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait(timeout=PROCESS_TIMEOUT)
    assert [child.returncode for child in children] == [0, 0], errors
    with opened_store(postgres_url) as engine:
        assert current_revision(engine) == head_revision()
        check_models(engine)
