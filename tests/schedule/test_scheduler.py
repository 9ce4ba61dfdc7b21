"""build_scheduler: one persisted cron job per scheduled model, in the metric store's database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import Engine, inspect
from sqlalchemy.pool import NullPool

from riskmon.config import RiskmonConfig
from riskmon.schedule import JOB_FUNCTION, JOB_TABLE, build_scheduler
from riskmon.store import MetricStore
from riskmon.store.migrate import check_models

from ..run.sources import config_of, loans_model, write_config

LOANS = "sqlite:///unused-loans.db"


def _config(
    path: Path, store_url: str, schedules: dict[str, str | None], **scheduler: Any
) -> RiskmonConfig:
    models = [loans_model(LOANS, name=name, schedule=cron) for name, cron in schedules.items()]
    return write_config(path, config_of(store_url, models, **scheduler))


@pytest.fixture
def read_jobs() -> Iterator[Any]:
    """Read the jobs back from a store, through a fresh, paused scheduler."""
    opened: list[Any] = []

    def read(url: str) -> dict[str, Any]:
        reader = BackgroundScheduler(
            jobstores={
                "default": SQLAlchemyJobStore(
                    url=url, tablename=JOB_TABLE, engine_options={"poolclass": NullPool}
                )
            }
        )
        reader.start(paused=True)
        opened.append(reader)
        return {job.id: job for job in reader.get_jobs()}

    yield read
    for reader in opened:
        reader.shutdown(wait=False)


def test_each_scheduled_model_gets_one_persisted_cron_job(
    tmp_path: Path, sqlite_url: str, read_jobs: Any
) -> None:
    path = tmp_path / "riskmon.yaml"
    config = _config(
        path,
        sqlite_url,
        {"retail_pd": "0 2 * * *", "cards": "30 3 * * 1-5", "manual": None},
        misfire_grace_seconds=900,
        timezone="Europe/Paris",
    )
    before = dt.datetime.now(dt.timezone.utc)
    scheduler = build_scheduler(config, path)
    assert not scheduler.running
    jobs = read_jobs(sqlite_url)
    assert sorted(jobs) == ["cards", "retail_pd"]
    for name, job in jobs.items():
        assert job.func_ref == JOB_FUNCTION
        assert job.args == (str(path.resolve()), name)
        assert job.coalesce is True
        assert job.max_instances == 1
        assert job.misfire_grace_time == 900
    retail = jobs["retail_pd"]
    assert str(retail.next_run_time.tzinfo) == "Europe/Paris"
    assert (retail.next_run_time.hour, retail.next_run_time.minute) == (2, 0)
    assert before < retail.next_run_time <= before + dt.timedelta(days=1)
    assert jobs["cards"].next_run_time.weekday() < 5  # Monday to Friday


def test_a_second_build_replaces_jobs_and_drops_those_no_longer_scheduled(
    tmp_path: Path, sqlite_url: str, read_jobs: Any
) -> None:
    path = tmp_path / "riskmon.yaml"
    build_scheduler(_config(path, sqlite_url, {"a": "0 2 * * *", "b": "0 3 * * *"}), path)
    build_scheduler(_config(path, sqlite_url, {"a": "15 4 * * *", "c": None}), path)
    jobs = read_jobs(sqlite_url)
    assert sorted(jobs) == ["a"]
    assert (jobs["a"].next_run_time.hour, jobs["a"].next_run_time.minute) == (4, 15)
    build_scheduler(_config(path, sqlite_url, {"c": None}), path)
    assert read_jobs(sqlite_url) == {}


def test_the_store_still_passes_alembic_check_with_the_job_table(
    tmp_path: Path, engine: Engine, store: MetricStore
) -> None:
    url = engine.url.render_as_string(hide_password=False)
    path = tmp_path / "riskmon.yaml"
    build_scheduler(_config(path, url, {"retail_pd": "0 2 * * *"}), path)
    assert JOB_TABLE in inspect(engine).get_table_names()
    check_models(engine)
    assert store.count_rows("runs") == 0
