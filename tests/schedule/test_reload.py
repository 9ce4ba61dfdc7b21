"""`riskmon schedule` under SIGHUP: it reloads the configuration file instead of dying. A valid
file's schedules replace the jobs (models added, rescheduled, removed); an invalid one keeps
the jobs and the process; a run in progress is not interrupted, and none is left running."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ..run.sources import MODEL
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

OTHER = "retail_pd_b"
RELOADED = "SIGHUP: reloaded "


def _next_runs(command: Command) -> dict[str, str]:
    """The time of day of each model's next run, from the newest listing of them."""
    listed = re.findall(r"^(\w+): next run \S+ (\d\d:\d\d)", command.output(), re.M)
    return dict(listed)


def _start(start: Callable[..., Command], config: Path) -> Command:
    """`riskmon schedule`, once it lists its jobs' next runs."""
    command = start(config, "schedule")
    command.wait_for_output(": next run ")
    return command


def test_each_sighup_applies_the_schedules_of_the_configuration_file(
    sqlite_store: Store,  # noqa: F811
    start_riskmon: Callable[..., Command],  # noqa: F811
    tmp_path: Path,
) -> None:
    config = tmp_path / "riskmon.yaml"
    write_config(config, sqlite_store, {MODEL: "0 2 * * *"}, catch_up=False)
    command = _start(start_riskmon, config)
    assert _next_runs(command) == {MODEL: "02:00"}

    write_config(config, sqlite_store, {MODEL: "45 4 * * *", OTHER: "30 3 * * *"}, catch_up=False)
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output(RELOADED)
    assert f"added {OTHER}; rescheduled {MODEL} ('0 2 * * *' -> '45 4 * * *')" in command.output()
    command.wait_for_output(f"{OTHER}: next run ")
    assert _next_runs(command) == {MODEL: "04:45", OTHER: "03:30"}

    write_config(config, sqlite_store, {MODEL: None, OTHER: "30 3 * * *"}, catch_up=False)
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output(RELOADED, count=2)
    assert f"removed {MODEL}" in command.output()
    command.wait_for_output(f"{OTHER}: next run ", count=2)
    tail = command.output().rsplit(RELOADED, 1)[1]
    assert f"{MODEL}: next run" not in tail

    assert command.signal(signal.SIGTERM) == 0, command.output()
    assert sqlite_store.store.runs() == []


def test_an_invalid_configuration_keeps_the_jobs_and_the_process(
    sqlite_store: Store,  # noqa: F811
    start_riskmon: Callable[..., Command],  # noqa: F811
    tmp_path: Path,
) -> None:
    config = tmp_path / "riskmon.yaml"
    write_config(config, sqlite_store, {MODEL: "0 2 * * *"}, catch_up=False)
    command = _start(start_riskmon, config)
    text = config.read_text()
    config.write_text(text.replace("schedule: 0 2 * * *", "schedule: 0 25 * * *"))
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output("not reloaded, the schedules stay as they were: ")
    # the error names the file and the key
    assert f"{config}: models[0].schedule: expected a 5-field cron" in command.output()
    assert command.output().count(": next run ") == 1  # no new listing: the same jobs

    config.write_text("models: [")  # not even YAML
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output("not reloaded, the schedules stay as they were: ", count=2)
    assert "invalid YAML" in command.output()

    # the jobs are still those of the first file: a valid edit is compared with it
    write_config(config, sqlite_store, {MODEL: "15 5 * * *"}, catch_up=False)
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output(RELOADED)
    assert f"rescheduled {MODEL} ('0 2 * * *' -> '15 5 * * *')" in command.output()
    command.wait_for_output(": next run ", count=2)
    assert _next_runs(command) == {MODEL: "05:15"}
    assert command.signal(signal.SIGTERM) == 0, command.output()


def test_sighup_during_the_catch_up_run_lets_it_finish_and_applies_after_it(
    sqlite_store: Store,  # noqa: F811
    start_riskmon: Callable[..., Command],  # noqa: F811
    tmp_path: Path,
) -> None:
    config = tmp_path / "riskmon.yaml"
    # never run, scheduled at midnight: today's fire has passed and is caught up on start
    write_config(config, sqlite_store, {MODEL: "0 0 * * *"})
    command = start_riskmon(config, "schedule")
    started = wait_until_running(sqlite_store.store, command)
    write_config(config, sqlite_store, {MODEL: "0 0 * * *", OTHER: "30 3 * * *"})
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output("its schedules apply once the catch-up is done")
    command.wait_for_output(RELOADED)
    assert f"added {OTHER}" in command.output()
    command.wait_for_output(": next run ", count=2)
    assert _next_runs(command) == {MODEL: "00:00", OTHER: "03:30"}

    (run,) = sqlite_store.store.runs(MODEL)
    assert (run.id, run.status) == (started.id, "succeeded"), run.error
    log = command.stderr.read_text()  # the run's end logged before the jobs changed
    assert log.index(f"run {run.id} succeeded") < log.index(RELOADED)
    assert command.signal(signal.SIGTERM) == 0, command.output()
    assert_none_running(sqlite_store.store)


@pytest.mark.slow
def test_sighup_during_a_scheduled_run_changes_the_jobs_once_it_has_finished(
    sqlite_store: Store,  # noqa: F811
    start_riskmon: Callable[..., Command],  # noqa: F811
    tmp_path: Path,
) -> None:
    config = tmp_path / "riskmon.yaml"
    # a cron firing every minute: the run starts within a minute of the scheduler's start,
    # which itself comes seconds after the process's (hence more than a minute to wait)
    write_config(config, sqlite_store, {MODEL: "* * * * *"}, catch_up=False)
    command = start_riskmon(config, "schedule")
    started = wait_until_running(sqlite_store.store, command, timeout=90)
    write_config(config, sqlite_store, {MODEL: "0 2 * * *", OTHER: "* * * * *"}, catch_up=False)
    command.process.send_signal(signal.SIGHUP)
    command.wait_for_output(RELOADED)
    run = sqlite_store.store.run(MODEL, started.as_of)
    assert run is not None
    assert (run.id, run.status) == (started.id, "succeeded"), run.error
    assert f"added {OTHER}; rescheduled {MODEL} ('* * * * *' -> '0 2 * * *')" in command.output()
    command.wait_for_output(f"{OTHER}: next run ")
    assert _next_runs(command)[MODEL] == "02:00"

    # the model added runs on its schedule, within a minute; two stops abandon its run
    wait_until_running(sqlite_store.store, command, OTHER, timeout=90)
    command.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    assert command.signal(signal.SIGTERM) == 128 + signal.SIGTERM, command.output()
    (other,) = sqlite_store.store.runs(OTHER)
    assert (other.status, other.error) == ("failed", INTERRUPTED)
    assert len(sqlite_store.store.runs(MODEL)) == 1  # its new cron has not fired
    assert_none_running(sqlite_store.store)
