"""A run that meets a fault ends recorded, with the right status and no partial figures:
an unreachable source, a connection dropped mid-collect, a process killed mid-run, and two
processes starting the same run at once."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from riskmon.outcome import RunOutcome
from riskmon.run import run_model
from riskmon.store import MetricStore

from .. import forkserver
from .sources import (
    AS_OF,
    MODEL,
    SLOW_APPLICATION,
    closed_port,
    config_of,
    loans_model,
    run_status,
    slow_model,
    slow_query,
    wait_for,
    write_config,
)

RUN_ONCE = Path(__file__).with_name("run_once.py")
SECRET = "s3cret-pw"
#: upper bound on any one subprocess of these tests
PROCESS_TIMEOUT = 120


def _assert_failed_without_figures(store: MetricStore, outcome: RunOutcome) -> None:
    assert outcome.status == "failed", outcome
    assert outcome.run_id is not None
    stored = store.run(MODEL, outcome.as_of)
    assert stored is not None
    assert stored.status == "failed"
    assert stored.error == outcome.error
    assert stored.finished_at is not None
    assert store.figures(outcome.run_id) == []
    assert store.count_rows("figures") == 0
    assert store.count_rows("bin_stats") == 0
    assert store.count_rows("alerts") == 0


def _run(store: MetricStore, model_url: str, **overrides: object) -> RunOutcome:
    model = loans_model(model_url, **overrides)
    return run_model(model, AS_OF, store=store)


def test_an_unreachable_postgresql_source_fails_the_run_naming_the_model(
    store: MetricStore,
) -> None:
    url = f"postgresql+psycopg://riskmon:{SECRET}@127.0.0.1:{closed_port()}/loans"
    started = time.monotonic()
    outcome = _run(store, url)
    assert time.monotonic() - started < 30
    _assert_failed_without_figures(store, outcome)
    assert outcome.error is not None
    assert f"model {MODEL!r}" in outcome.error
    assert "cannot connect to source" in outcome.error
    assert "riskmon:***@127.0.0.1" in outcome.error
    stored = store.run(MODEL, AS_OF)
    assert stored is not None
    assert SECRET not in (outcome.error + str(stored.error))


def test_a_missing_sqlite_source_fails_the_run_and_creates_nothing(
    store: MetricStore, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-folder" / "loans.db"
    outcome = _run(store, f"sqlite:///{missing}")
    _assert_failed_without_figures(store, outcome)
    assert outcome.error is not None
    assert f"model {MODEL!r}" in outcome.error
    assert not missing.parent.exists()


def _terminate_collect_queries(engine: Engine) -> int:
    """Kill the slow source's backends that run a count-table query; how many were killed.
    Only this test's database's: tests running beside it on the same server have their own."""
    # pg_stat_activity keeps the first kilobyte of a query: the count-table queries of collect
    # are those that select a population column
    with engine.connect() as connection:
        return len(
            connection.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = :name AND state = 'active' "
                    "AND datname = current_database() AND query LIKE '%population%'"
                ),
                {"name": SLOW_APPLICATION},
            ).all()
        )


@pytest.mark.postgres
def test_a_connection_dropped_mid_collect_fails_the_run(
    pg_store: MetricStore, postgres_url: str
) -> None:
    model = slow_model(postgres_url, seconds=2.0)
    outcomes: list[RunOutcome] = []
    worker = threading.Thread(
        target=lambda: outcomes.append(run_model(model, AS_OF, store=pg_store))
    )
    worker.start()
    try:
        wait_for(
            lambda: _terminate_collect_queries(pg_store.engine) > 0,
            timeout=30,
            what="a collect query on the source",
        )
    finally:
        worker.join(timeout=60)
    assert not worker.is_alive()
    (outcome,) = outcomes
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert f"model {MODEL!r}" in outcome.error
    assert "terminating connection" in outcome.error
    stored = pg_store.run(MODEL, AS_OF)
    assert stored is not None
    assert stored.status == "failed"
    assert outcome.run_id is not None
    assert pg_store.figures(outcome.run_id) == []
    assert pg_store.count_rows("figures") == 0


@pytest.mark.postgres
def test_a_run_killed_mid_run_is_taken_over_at_once_by_the_next(
    pg_store: MetricStore, postgres_url: str, tmp_path: Path
) -> None:
    model = slow_model(postgres_url)
    config = write_config(tmp_path / "riskmon.yaml", config_of(postgres_url, [model]))
    with forkserver.popen(
        [sys.executable, str(RUN_ONCE), str(tmp_path / "riskmon.yaml"), MODEL, str(AS_OF)],
        stdout=subprocess.PIPE,
    ) as child:
        try:
            wait_for(lambda: run_status(pg_store) == "running", timeout=60, what="the run to start")
            time.sleep(0.5)  # into the collect queries
        finally:
            child.kill()
            child.wait(timeout=PROCESS_TIMEOUT)
    assert child.returncode == -9
    killed = pg_store.run(MODEL, AS_OF)
    assert killed is not None
    assert killed.status == "running"  # nobody was left to record anything
    assert pg_store.count_rows("figures") == 0

    started = time.monotonic()
    outcome = run_model(config.model(MODEL), AS_OF, store=pg_store)
    assert outcome.status == "succeeded", outcome.error
    assert time.monotonic() - started < 60  # not after the 30 minutes a stale heartbeat takes
    assert outcome.run_id == killed.id
    assert len(pg_store.runs(MODEL)) == 1
    assert outcome.figures
    assert pg_store.count_rows("figures") == len(outcome.figures)


@pytest.mark.postgres
def test_two_processes_starting_the_same_run_compute_it_once(
    pg_store: MetricStore, postgres_url: str, tmp_path: Path
) -> None:
    model = slow_model(postgres_url)
    write_config(tmp_path / "riskmon.yaml", config_of(postgres_url, [model]))
    start_at = time.time() + 8  # both have imported riskmon by then
    command = [
        sys.executable,
        str(RUN_ONCE),
        str(tmp_path / "riskmon.yaml"),
        MODEL,
        str(AS_OF),
        str(start_at),
    ]
    children = [forkserver.popen(command, stdout=subprocess.PIPE) for _ in range(2)]
    try:
        outputs = [child.communicate(timeout=PROCESS_TIMEOUT)[0] for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait(timeout=PROCESS_TIMEOUT)
    assert [child.returncode for child in children] == [0, 0]
    results = sorted((json.loads(out) for out in outputs), key=lambda r: r["status"])
    skipped, succeeded = results
    assert (skipped["status"], succeeded["status"]) == ("skipped", "succeeded"), results
    assert skipped["run_id"] is None
    assert f"model {MODEL!r} as of {AS_OF} is being computed by" in skipped["error"]
    (stored,) = pg_store.runs(MODEL)
    assert stored.id == succeeded["run_id"]
    assert stored.status == "succeeded"
    assert succeeded["figures"] > 0
    assert pg_store.count_rows("figures") == succeeded["figures"]
    assert len(pg_store.figures(stored.id)) == succeeded["figures"]


def test_the_slow_query_is_a_single_select() -> None:
    # the fault tests rely on the source accepting it as a read-only query
    assert slow_query(0.1).startswith("SELECT ")
    assert ";" not in slow_query(0.1)


@pytest.mark.parametrize("as_of", [dt.date(9999, 12, 31), dt.date(1, 1, 5)])
def test_a_date_whose_windows_leave_the_calendar_fails_clearly_and_stores_nothing(
    store: MetricStore, as_of: dt.date
) -> None:
    # the command line refuses such dates; a notebook calling run_model gets a plain failure
    outcome = run_model(loans_model("sqlite:///unused.db"), as_of, store=store)
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert f"as-of date {as_of} cannot be planned" in outcome.error
    assert "outside the calendar" in outcome.error
    assert "OverflowError" not in outcome.error
    assert store.runs() == []


def test_a_stop_signal_while_a_failure_is_recorded_leaves_the_run_interrupted(
    store: MetricStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import riskmon.run

    def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(riskmon.run, "_due_on_failure", interrupted)
    broken = loans_model(f"sqlite:///{tmp_path / 'missing' / 'loans.db'}")
    with pytest.raises(KeyboardInterrupt):
        run_model(broken, AS_OF, store=store)
    (run,) = store.runs(MODEL)
    assert run.status == "failed"  # not left "running" for 30 minutes
    assert run.error == "interrupted before it finished"
