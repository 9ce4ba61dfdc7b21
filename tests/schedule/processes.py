"""`riskmon` commands as processes of their own, on a SQLite store and a slow PostgreSQL source,
for the tests that send them real signals.

The loans are in a fresh PostgreSQL database and read through a query that sleeps on the server
(tests/run/sources.py), so that a signal lands while a run is in progress; the metric store is
a SQLite file, with the model's baseline frozen from the plain table beforehand.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from riskmon.store import MetricStore, RunRecord
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

from .. import forkserver
from ..run.sources import MODEL, config_of, freeze_baseline, load_loans, slow_model, wait_for
from ..run.sources import write_config as _write_config

#: upper bound on how long a command may take to exit once told to, or to start a run
TIMEOUT = 60
#: seconds each source query sleeps (a run makes about six): long enough that a signal sent
#: once the run is seen running reaches it before it ends, on a machine busy with other tests
QUERY_SECONDS = 1.5
#: the error a run abandoned on a signal is recorded with (riskmon.run)
INTERRUPTED = "interrupted before it finished"


@dataclass
class Store:
    """The SQLite metric store the commands use, and the PostgreSQL database of the loans."""

    store: MetricStore
    url: str
    loans_url: str


@dataclass
class Command:
    """A `riskmon` process, its output in files."""

    process: forkserver.Process
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return self.stdout.read_text() + self.stderr.read_text()

    def alive(self) -> bool:
        return self.process.poll() is None

    def signal(self, signum: int) -> int:
        """Send ``signum`` and wait (bounded) for the process to exit; its exit code."""
        self.process.send_signal(signum)
        return self.process.wait(timeout=TIMEOUT)

    def wait_for_output(self, text: str, *, count: int = 1) -> None:
        """Wait until the output holds ``text`` ``count`` times; fail if the process ends."""

        def printed() -> bool:
            assert self.alive(), f"exited {self.process.returncode}:\n{self.output()}"
            return self.output().count(text) >= count

        wait_for(printed, timeout=TIMEOUT, what=f"{text!r} in the output")


@pytest.fixture
def sqlite_store(postgres_url: str, tmp_path: Path) -> Iterator[Store]:
    """A migrated SQLite store with the model's baseline; the loans on PostgreSQL."""
    load_loans(postgres_url)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = store_engine(url)
    try:
        upgrade(engine)
        store = MetricStore(engine)
        freeze_baseline(postgres_url, store)
        yield Store(store, url, postgres_url)
    finally:
        engine.dispose()


def write_config(
    path: Path, store: Store, schedules: dict[str, str | None], **scheduler: Any
) -> None:
    """A configuration of slow models, one per name of ``schedules`` (None: not scheduled)."""
    models = [
        slow_model(store.loans_url, QUERY_SECONDS, name=name, schedule=schedule)
        for name, schedule in schedules.items()
    ]
    _write_config(path, config_of(store.url, models, **scheduler))


@pytest.fixture
def start_riskmon(tmp_path: Path) -> Iterator[Callable[..., Command]]:
    """Start ``riskmon -v --config CONFIG ARGS...``; every process still running at the end of
    the test is killed by its PID."""
    started: list[Command] = []

    def start(config: Path, *args: str) -> Command:
        n = len(started)
        out, err = tmp_path / f"stdout{n}.txt", tmp_path / f"stderr{n}.txt"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = forkserver.popen(
                [sys.executable, "-m", "riskmon", "-v", "--config", str(config), *args],
                stdout=stdout,
                stderr=stderr,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        started.append(Command(process, out, err))
        return started[-1]

    yield start
    for command in started:
        if command.alive():
            command.process.kill()
            command.process.wait(timeout=TIMEOUT)


def wait_until_running(
    store: MetricStore, command: Command, model: str = MODEL, *, timeout: float = TIMEOUT
) -> RunRecord:
    """The run of ``model`` once the store shows it running, well into its queries."""

    def running() -> bool:
        assert command.alive(), f"exited {command.process.returncode}:\n{command.output()}"
        return any(r.status == "running" for r in store.runs(model))

    wait_for(running, timeout=timeout, what=f"a run of {model} to start")
    time.sleep(0.3)
    (run,) = [r for r in store.runs(model) if r.status == "running"]
    return run


def assert_none_running(store: MetricStore) -> None:
    left = [(r.model, r.as_of) for r in store.runs() if r.status == "running"]
    assert left == [], f"runs left running: {left}"
