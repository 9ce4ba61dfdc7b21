"""`riskmon schedule` under SIGTERM and SIGINT: the first lets the run in progress finish and
exits 0; a second abandons the run, which ends recorded as failed, never left running."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from riskmon.store import MetricStore, RunRecord

from .. import forkserver
from ..run.sources import MODEL, config_of, slow_model, wait_for, write_config

SCRIPT = Path(__file__).with_name("riskmon_schedule.py")
#: upper bound on how long the command may take to exit once told to
EXIT_TIMEOUT = 60
#: seconds each source query of a scheduled run sleeps (a run makes about six): long enough
#: that the signals a test sends while the run is in progress reach it before it ends, also on
#: a machine busy with the other tests' workers (0.4 s, the slow source's default, was not)
QUERY_SECONDS = 1.5

pytestmark = pytest.mark.postgres


@dataclass
class Scheduler:
    process: forkserver.Process
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return self.stdout.read_text() + self.stderr.read_text()

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=EXIT_TIMEOUT)


@pytest.fixture
def start_scheduler(tmp_path: Path, postgres_url: str) -> Iterator[object]:
    """Start `riskmon schedule` on a slow source with the given schedule and scheduler options."""
    started: list[Scheduler] = []

    def start(schedule: str, **scheduler: object) -> Scheduler:
        path = tmp_path / "riskmon.yaml"
        model = slow_model(postgres_url, QUERY_SECONDS, schedule=schedule)
        write_config(path, config_of(postgres_url, [model], **scheduler))
        out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = forkserver.popen(
                [sys.executable, str(SCRIPT), str(path)],
                stdout=stdout,
                stderr=stderr,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        started.append(Scheduler(process, out, err))
        return started[-1]

    yield start
    for scheduler in started:
        if scheduler.process.poll() is None:
            scheduler.process.kill()
            scheduler.process.wait(timeout=EXIT_TIMEOUT)


def _the_run(store: MetricStore) -> RunRecord | None:
    runs = store.runs(MODEL)
    assert len(runs) <= 1, runs
    return runs[0] if runs else None


def _wait_until_running(store: MetricStore, scheduler: Scheduler, timeout: float) -> RunRecord:
    def running() -> bool:
        assert scheduler.process.poll() is None, scheduler.output()
        run = _the_run(store)
        return run is not None and run.status == "running"

    wait_for(running, timeout=timeout, what="a run to start")
    time.sleep(0.3)  # well into the run's queries
    run = _the_run(store)
    assert run is not None
    return run


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_lets_the_catch_up_run_finish_then_exits_0(
    pg_store: MetricStore, start_scheduler: object, signum: int
) -> None:
    # never run, scheduled at midnight: today's fire has passed and is caught up on start
    scheduler = start_scheduler("0 0 * * *")  # type: ignore[operator]
    started = _wait_until_running(pg_store, scheduler, timeout=60)
    assert scheduler.stop(signum) == 0, scheduler.output()
    run = _the_run(pg_store)
    assert run is not None
    assert (run.id, run.status) == (started.id, "succeeded"), run.error
    assert pg_store.count_rows("figures") > 0
    output = scheduler.output()
    assert "finishing the run in progress" in output
    assert f"caught up {MODEL} as of {run.as_of}: succeeded" in output
    assert "riskmon schedule: running" not in output  # the scheduler was never started


def test_a_second_signal_abandons_the_run_and_records_it_as_interrupted(
    pg_store: MetricStore, start_scheduler: object
) -> None:
    scheduler = start_scheduler("0 0 * * *")  # type: ignore[operator]
    _wait_until_running(pg_store, scheduler, timeout=60)
    scheduler.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    assert scheduler.stop(signal.SIGTERM) == 128 + signal.SIGTERM, scheduler.output()
    run = _the_run(pg_store)
    assert run is not None
    assert run.status == "failed"
    assert run.error == "interrupted before it finished"
    assert run.finished_at is not None
    assert pg_store.figures(run.id) == []
    assert pg_store.count_rows("figures") == 0


def test_a_stop_signal_while_waiting_for_the_next_fire_exits_at_once(
    pg_store: MetricStore, start_scheduler: object
) -> None:
    scheduler = start_scheduler("0 2 * * *", catch_up=False)  # type: ignore[operator]
    wait_for(
        lambda: "next run" in scheduler.output() or scheduler.process.poll() is not None,
        timeout=60,
        what="the scheduler to start",
    )
    assert f"{MODEL}: next run " in scheduler.output()
    started = time.monotonic()
    assert scheduler.stop() == 0, scheduler.output()
    assert time.monotonic() - started < 10
    assert pg_store.runs(MODEL) == []


@pytest.mark.slow
@pytest.mark.parametrize("abandon", [False, True], ids=["finish", "abandon"])
def test_a_scheduled_run_finishes_on_one_signal_and_is_abandoned_on_two(
    pg_store: MetricStore, start_scheduler: object, abandon: bool
) -> None:
    # a cron firing every minute: the run starts within a minute of the scheduler
    scheduler = start_scheduler("* * * * *", catch_up=False)  # type: ignore[operator]
    started = _wait_until_running(pg_store, scheduler, timeout=90)
    if abandon:
        scheduler.process.send_signal(signal.SIGTERM)
        time.sleep(0.2)
    code = scheduler.stop()
    run = _the_run(pg_store)
    assert run is not None
    assert run.id == started.id
    if abandon:
        assert code == 128 + signal.SIGTERM, scheduler.output()
        assert (run.status, run.error) == ("failed", "interrupted before it finished")
        assert pg_store.count_rows("figures") == 0
    else:
        assert code == 0, scheduler.output()
        assert run.status == "succeeded", run.error
        assert pg_store.count_rows("figures") > 0
        assert "riskmon schedule: stopped" in scheduler.output()
