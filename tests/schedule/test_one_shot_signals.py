"""`riskmon run` and `riskmon backfill` under SIGTERM, SIGINT and SIGHUP: the run in progress
is abandoned and recorded as failed ("interrupted before it finished"), never left running; no
further date starts; the command exits 128 + the signal, saying so on stderr."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from ..run.sources import AS_OF, MODEL
from .processes import (  # noqa: F401  (fixtures)
    INTERRUPTED,
    Command,
    Store,
    assert_none_running,
    sqlite_store,
    start_riskmon,
    wait_until_running,
    write_config,
)

pytestmark = pytest.mark.postgres

SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]


def _assert_interrupted(store: Store, command: Command, code: int, signum: int) -> None:
    name = signal.Signals(signum).name
    assert code == 128 + signum, command.output()
    assert f"stopped by {name}" in command.stderr.read_text()
    assert_none_running(store.store)
    (run,) = store.store.runs(MODEL)
    assert (run.status, run.error) == ("failed", INTERRUPTED)
    assert run.finished_at is not None
    assert store.store.count_rows("figures") == 0


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_abandons_riskmon_run_and_records_its_run_as_interrupted(
    sqlite_store: Store,  # noqa: F811
    start_riskmon: Callable[..., Command],  # noqa: F811
    tmp_path: Path,
    signum: int,
) -> None:
    config = tmp_path / "riskmon.yaml"
    write_config(config, sqlite_store, {MODEL: None})
    command = start_riskmon(config, "run", MODEL, "--as-of", f"{AS_OF}")
    started = wait_until_running(sqlite_store.store, command)
    code = command.signal(signum)
    _assert_interrupted(sqlite_store, command, code, signum)
    assert sqlite_store.store.runs(MODEL)[0].id == started.id
    assert "riskmon run: stopped by" in command.stderr.read_text()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_stops_riskmon_backfill_before_its_next_date(
    sqlite_store: Store,  # noqa: F811
    start_riskmon: Callable[..., Command],  # noqa: F811
    tmp_path: Path,
    signum: int,
) -> None:
    config = tmp_path / "riskmon.yaml"
    write_config(config, sqlite_store, {MODEL: None})
    # three month ends; the signal reaches the first
    dates = ("--from", "2025-01-31", "--to", f"{AS_OF}", "--every", "month")
    command = start_riskmon(config, "backfill", MODEL, *dates)
    started = wait_until_running(sqlite_store.store, command)
    code = command.signal(signum)
    _assert_interrupted(sqlite_store, command, code, signum)  # the one run, no other date
    (run,) = sqlite_store.store.runs(MODEL)
    assert (run.id, str(run.as_of)) == (started.id, "2025-01-31")
    assert "riskmon backfill: stopped by" in command.stderr.read_text()
