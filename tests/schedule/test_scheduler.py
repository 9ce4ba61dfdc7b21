"""build_scheduler: one cron job per scheduled model, in memory; nothing the scheduler runs is
read from the store — a pickled job written into the old job table is never executed."""

from __future__ import annotations

import datetime as dt
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Engine, Float, LargeBinary, MetaData, Table, Unicode, inspect

from riskmon.config import RiskmonConfig
from riskmon.schedule import JOB_FUNCTION, JOB_TABLE, build_scheduler
from riskmon.store.engine import opened_store
from riskmon.store.migrate import check_models, current_revision, downgrade, upgrade

from .. import forkserver
from ..run.sources import config_of, loans_model, wait_for, write_config

LOANS = "sqlite:///unused-loans.db"
SCRIPT = Path(__file__).with_name("riskmon_schedule.py")
#: upper bound on the scheduler process's start and stop
PROCESS_TIMEOUT = 60


def _config(
    path: Path, store_url: str, schedules: dict[str, str | None], **scheduler: Any
) -> RiskmonConfig:
    models = [loans_model(LOANS, name=name, schedule=cron) for name, cron in schedules.items()]
    return write_config(path, config_of(store_url, models, **scheduler))


def test_each_scheduled_model_gets_one_cron_job_in_memory(tmp_path: Path, sqlite_url: str) -> None:
    path = tmp_path / "riskmon.yaml"
    config = _config(
        path,
        sqlite_url,
        {"retail_pd": "0 2 * * *", "cards": "30 3 * * 1-5", "manual": None},
        misfire_grace_seconds=900,
        timezone="Europe/Paris",
    )
    scheduler = build_scheduler(config, path)
    assert not scheduler.running
    assert [type(s).__name__ for s in scheduler._jobstores.values()] == ["MemoryJobStore"]
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert sorted(jobs) == ["cards", "retail_pd"]
    for name, job in jobs.items():
        assert job.func_ref == JOB_FUNCTION
        assert job.args == (str(path.resolve()), name)
        assert job.coalesce is True
        assert job.max_instances == 1
        assert job.misfire_grace_time == 900
    before = dt.datetime.now(dt.timezone.utc)
    retail = jobs["retail_pd"].trigger.get_next_fire_time(None, before)
    assert str(retail.tzinfo) == "Europe/Paris"
    assert (retail.hour, retail.minute) == (2, 0)
    assert before < retail <= before + dt.timedelta(days=1)
    with opened_store(sqlite_url) as engine:
        assert inspect(engine).get_table_names() == []  # the store is not even opened


class _Touch:
    """Unpickling this creates ``marker``: what a hostile job row would do instead."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (Path.touch, (self.marker,))


def _write_pickled_job(engine: Engine, marker: Path) -> None:
    """A job row as APScheduler's SQLAlchemy job store wrote them, its state a pickle."""
    table = Table(
        JOB_TABLE,
        MetaData(),
        Column("id", Unicode(191), primary_key=True),
        Column("next_run_time", Float(25), index=True),
        Column("job_state", LargeBinary, nullable=False),
    )
    table.create(engine)
    with engine.begin() as connection:
        connection.execute(
            table.insert().values(
                id="intruder",
                next_run_time=time.time() - 5,
                job_state=pickle.dumps(_Touch(marker)),
            )
        )


def test_the_migration_drops_the_pickled_job_table(tmp_path: Path, engine: Engine) -> None:
    marker = tmp_path / "executed"
    upgrade(engine, "0004")
    _write_pickled_job(engine, marker)
    upgrade(engine)
    assert JOB_TABLE not in inspect(engine).get_table_names()
    check_models(engine)
    downgrade(engine, "0004")  # reversible: nothing to put back, APScheduler made the table
    assert current_revision(engine) == "0004"
    upgrade(engine)
    assert not marker.exists()


def test_riskmon_schedule_never_executes_a_pickled_job_row(tmp_path: Path, sqlite_url: str) -> None:
    marker = tmp_path / "executed"
    path = tmp_path / "riskmon.yaml"
    _config(path, sqlite_url, {"retail_pd": "0 2 * * *"}, catch_up=False)
    with opened_store(sqlite_url) as engine:
        upgrade(engine)
        # written after the migration, as whoever can write to the store could at any time
        _write_pickled_job(engine, marker)
    # the row is live: unpickling it runs its code
    pickle.loads(pickle.dumps(_Touch(marker)))
    assert marker.exists()
    marker.unlink()

    out = tmp_path / "stdout.txt"
    with out.open("wb") as stdout:
        process = forkserver.popen(
            [sys.executable, str(SCRIPT), str(path)],
            stdout=stdout,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        wait_for(
            lambda: b"next run" in out.read_bytes(),
            timeout=PROCESS_TIMEOUT,
            what="the scheduler to start",
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=PROCESS_TIMEOUT) == 0, out.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=PROCESS_TIMEOUT)
    assert "retail_pd: next run" in out.read_text()
    assert not marker.exists()
