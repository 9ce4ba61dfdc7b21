"""Exactly once: two `riskmon schedule` and three `riskmon backfill` processes share one store,
each set to catch up the same 30 missed nights; every date is computed once and every
notification sent once.

The processes are real (`python -m riskmon`), on a real SQLite or PostgreSQL store, posting to a
real webhook server on 127.0.0.1; what each computed is read from its own log ("run N
started"), what was sent from what the server received.
"""

from __future__ import annotations

import datetime as dt
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from riskmon.run import run_model
from riskmon.store import MetricStore

from .. import forkserver
from ..run.sources import MODEL, config_of, load_loans, loans_model, wait_for, write_config
from .conftest import HookServer

#: the nights missed, each set to be caught up by every process
MISSED = 30
PROCESS_TIMEOUT = 300
STARTED = re.compile(rf"{MODEL} as of (\d{{4}}-\d{{2}}-\d{{2}}): run \d+ started")


def _start(config: Path, log: Path, *args: str) -> forkserver.Process:
    with log.open("wb") as out:
        return forkserver.popen(
            [sys.executable, "-m", "riskmon", "-v", "-c", str(config), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _stop(process: forkserver.Process) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=PROCESS_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=PROCESS_TIMEOUT)


def test_schedulers_and_backfills_sharing_a_store_compute_and_notify_each_date_once(
    tmp_path: Path,
    hook_server: Callable[..., HookServer],
    store_url: str,
    store: MetricStore,
) -> None:
    hook = hook_server()
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load_loans(loans)
    model = loans_model(
        loans,
        schedule="0 0 * * *",  # every night at midnight UTC: yesterday is the newest as-of date
        notify=[
            {"webhook": hook.url("/always"), "notify_on": "always"},
            {"webhook": hook.url("/change"), "notify_on": "change"},
        ],
    )
    document = config_of(
        store_url, [model], timezone="UTC", catch_up=True, max_catch_up_runs=MISSED + 10
    )
    document["store"]["reports_dir"] = str(tmp_path / "reports")
    config = tmp_path / "riskmon.yaml"
    write_config(config, document)
    newest = dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=1)
    dates = [newest - dt.timedelta(days=back) for back in reversed(range(MISSED))]
    # the last night that ran, before the scheduler was down for 30 nights
    assert run_model(model, dates[0] - dt.timedelta(days=1), store=store, notify=False).ok

    backfill = ("backfill", MODEL, "--from", str(dates[0]), "--to", str(newest), "--every", "day")
    processes = [_start(config, tmp_path / f"schedule-{i}.log", "schedule") for i in range(2)]
    processes += [_start(config, tmp_path / f"backfill-{i}.log", *backfill) for i in range(3)]
    try:
        for process in processes[2:]:
            # 3 when a date was being computed by another process as this one came to it
            assert process.wait(timeout=PROCESS_TIMEOUT) in (0, 3)
        for i in range(2):  # each scheduler is past its catch-up, waiting for the next night
            log = tmp_path / f"schedule-{i}.log"
            wait_for(
                lambda log=log: "riskmon schedule: running" in log.read_text(errors="replace"),
                timeout=PROCESS_TIMEOUT,
                what=f"scheduler {i} to finish catching up",
            )
    finally:
        for process in processes:
            _stop(process)
    assert [p.returncode for p in processes[:2]] == [0, 0]
    backfills = [(tmp_path / f"backfill-{i}.log").read_text(errors="replace") for i in range(3)]
    for text in backfills:  # every date a backfill did not compute, another one did
        outcomes = re.findall(rf"^{MODEL} as of \S+: (\w+)(.*)$", text, flags=re.MULTILINE)
        assert len(outcomes) == MISSED
        for status, detail in outcomes:
            assert status in ("succeeded", "done", "skipped"), detail
            if status == "skipped":
                assert "is being computed by" in detail

    logs = [path.read_text(errors="replace") for path in sorted(tmp_path.glob("*.log"))]
    computed = Counter(day for text in logs for day in STARTED.findall(text))
    assert computed == Counter({day.isoformat(): 1 for day in dates}), computed
    runs = {r.as_of: r.status for r in store.runs(MODEL)}
    assert all(runs[day] == "succeeded" for day in dates)
    # a catch-up notifies the newest night only: once per channel that is due
    always = [r.body["riskmon"]["as_of"] for r in hook.requests if r.path == "/always"]
    assert always == [newest.isoformat()]
    change = [r.body["riskmon"]["as_of"] for r in hook.requests if r.path == "/change"]
    assert change in ([], [newest.isoformat()])
    run = store.run(MODEL, newest)
    assert run is not None
    sent = {d.channel: (d.state, d.attempts) for d in store.deliveries(run.id)}
    assert len(sent) == 1 + len(change)
    assert set(sent.values()) == {("sent", 1)}
