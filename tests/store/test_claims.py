"""A run claimed by a process that died on this host is taken over at once."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import sys

import pytest

from riskmon.store import MetricStore, RunInProgressError


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _claim(store: MetricStore, owner: str | None) -> int:
    return store.claim_run(
        "m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h", owner=owner
    )


def test_a_dead_local_owner_is_taken_over_without_waiting(store: MetricStore) -> None:
    host = socket.gethostname()
    run_id = _claim(store, f"{host}:{_dead_pid()}")
    assert _claim(store, None) == run_id


def test_a_live_local_owner_blocks(store: MetricStore) -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as alive:
        try:
            _claim(store, f"{socket.gethostname()}:{alive.pid}")
            with pytest.raises(RunInProgressError):
                _claim(store, None)
        finally:
            alive.kill()


def test_an_owner_on_another_host_is_trusted_until_stale(store: MetricStore) -> None:
    _claim(store, f"elsewhere.example:{_dead_pid()}")
    with pytest.raises(RunInProgressError, match=r"elsewhere\.example"):
        _claim(store, None)
