"""Catch-up: the as-of dates the schedules missed while no scheduler ran, run oldest first;
the scheduled job itself. A scheduled run is as of the day before its fire: the nightly 02:00
fire of 4 March runs as of 3 March."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from riskmon.config import ModelConfig, RiskmonConfig, parse_config
from riskmon.errors import ConfigError
from riskmon.run import run_model
from riskmon.schedule import (
    catch_up,
    missed_runs,
    scheduled_run,
    scheduler_timezone,
)
from riskmon.store import MetricStore
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

from ..run.sources import MODEL, config_of, load_loans, loans_model, write_config

UTC = ZoneInfo("UTC")
LAST_SUCCESS = dt.date(2025, 2, 28)
NOW = dt.datetime(2025, 3, 4, 3, 0, tzinfo=UTC)


def _days(*days: int) -> list[dt.date]:
    return [dt.date(2025, 3, day) for day in days]


@pytest.fixture
def loans_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load_loans(url)
    return url


def _config(*models: ModelConfig, **scheduler: Any) -> RiskmonConfig:
    document = config_of("sqlite://", models, **scheduler)
    return parse_config(document, source="test", env={})


def _succeed(config: RiskmonConfig, as_of: dt.date, store: MetricStore) -> None:
    outcome = run_model(config.models[0], as_of, store=store)
    assert outcome.ok, outcome.error


def test_catch_up_runs_every_missed_night_in_date_order(store: MetricStore, loans_url: str) -> None:
    config = _config(loans_model(loans_url))
    _succeed(config, LAST_SUCCESS, store)
    outcomes = catch_up(config, store, now=NOW)
    # the fires of 1 to 4 March run as of 28 February (done) to 3 March
    assert [o.as_of for o in outcomes] == _days(1, 2, 3)
    assert all(o.status == "succeeded" for o in outcomes)
    assert [r.as_of for r in store.runs(MODEL)] == [LAST_SUCCESS, *_days(1, 2, 3)]
    assert catch_up(config, store, now=NOW) == []  # nothing left


def test_catch_up_keeps_only_the_newest_dates(store: MetricStore, loans_url: str) -> None:
    config = _config(loans_model(loans_url), max_catch_up_runs=2)
    _succeed(config, LAST_SUCCESS, store)
    outcomes = catch_up(config, store, now=NOW)
    assert [o.as_of for o in outcomes] == _days(2, 3)
    assert [r.as_of for r in store.runs(MODEL)] == [LAST_SUCCESS, *_days(2, 3)]


def test_catch_up_retries_failed_nights_after_the_last_success(
    store: MetricStore, loans_url: str, tmp_path: Path
) -> None:
    config = _config(loans_model(loans_url))
    _succeed(config, LAST_SUCCESS, store)
    broken = loans_model(f"sqlite:///{tmp_path / 'missing' / 'loans.db'}")
    assert run_model(broken, _days(2)[0], store=store).status == "failed"
    assert [m.name for m, _ in missed_runs(config, store, now=NOW)] == [MODEL] * 3
    assert [d for _, d in missed_runs(config, store, now=NOW)] == _days(1, 2, 3)


def test_catch_up_retries_an_older_failed_date_that_a_later_success_went_past(
    store: MetricStore, loans_url: str, tmp_path: Path
) -> None:
    config = _config(loans_model(loans_url))
    older = dt.date(2025, 2, 20)
    broken = loans_model(f"sqlite:///{tmp_path / 'missing' / 'loans.db'}")
    assert run_model(broken, older, store=store).status == "failed"
    _succeed(config, LAST_SUCCESS, store)
    assert [d for _, d in missed_runs(config, store, now=NOW)] == [older, *_days(1, 2, 3)]
    outcomes = catch_up(config, store, now=NOW)
    assert [(o.as_of, o.status) for o in outcomes[:1]] == [(older, "succeeded")]
    assert {r.status for r in store.runs(MODEL)} == {"succeeded"}
    assert catch_up(config, store, now=NOW) == []


def test_the_catch_up_limit_counts_retried_failed_dates_too(
    store: MetricStore, loans_url: str, tmp_path: Path
) -> None:
    config = _config(loans_model(loans_url), max_catch_up_runs=4)
    broken = loans_model(f"sqlite:///{tmp_path / 'missing' / 'loans.db'}")
    for day in (dt.date(2025, 2, 10), dt.date(2025, 2, 20)):
        assert run_model(broken, day, store=store).status == "failed"
    _succeed(config, LAST_SUCCESS, store)
    # the newest four: the failed 20 February and the three missed nights, not 10 February
    expected = [dt.date(2025, 2, 20), *_days(1, 2, 3)]
    assert [d for _, d in missed_runs(config, store, now=NOW)] == expected


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (dt.datetime(2025, 3, 4, 3, 0, tzinfo=UTC), _days(3)),
        (dt.datetime(2025, 3, 4, 1, 59, tzinfo=UTC), []),
        (dt.datetime(2025, 3, 4, 2, 0, tzinfo=UTC), _days(3)),
    ],
)
def test_a_model_never_run_catches_up_only_todays_fire(
    store: MetricStore, loans_url: str, now: dt.datetime, expected: list[dt.date]
) -> None:
    config = _config(loans_model(loans_url))
    assert [d for _, d in missed_runs(config, store, now=now)] == expected


def test_a_monthly_schedule_catches_up_month_ends_as_a_monthly_backfill_runs(
    store: MetricStore, loans_url: str
) -> None:
    from riskmon.cli.runs import backfill_dates

    model = loans_model(loans_url, schedule="0 2 1 * *")
    config = _config(model)
    _succeed(config, dt.date(2024, 10, 31), store)
    now = dt.datetime(2025, 3, 1, 3, 0, tzinfo=UTC)
    missed = [d for _, d in missed_runs(config, store, now=now)]
    month_ends = [dt.date(2024, 11, 30), dt.date(2024, 12, 31), dt.date(2025, 1, 31)]
    assert missed == [*month_ends, dt.date(2025, 2, 28)]
    # the dates a backfill takes, by months from a month end and by the schedule itself
    assert backfill_dates(model, month_ends[0], dt.date(2025, 2, 28), "month") == missed
    assert backfill_dates(model, dt.date(2024, 11, 2), dt.date(2025, 3, 30), "schedule") == missed


def test_models_without_a_schedule_are_not_caught_up(store: MetricStore, loans_url: str) -> None:
    config = _config(loans_model(loans_url, schedule=None))
    assert missed_runs(config, store, now=NOW) == []


def test_zero_catch_up_runs_catches_nothing_up(store: MetricStore, loans_url: str) -> None:
    config = _config(loans_model(loans_url), max_catch_up_runs=0)
    _succeed(config, LAST_SUCCESS, store)
    assert missed_runs(config, store, now=NOW) == []


def test_several_models_are_caught_up_date_by_date(store: MetricStore, loans_url: str) -> None:
    first = loans_model(loans_url)
    second = loans_model(loans_url, name="second", schedule="30 1 * * *")
    config = _config(first, second)
    _succeed(config, LAST_SUCCESS, store)
    run_model(second, dt.date(2025, 3, 2), store=store)
    planned = [(m.name, d) for m, d in missed_runs(config, store, now=NOW)]
    # second's fire of 3 March ran as of 2 March; its fire of 4 March runs as of 3 March
    assert planned == [
        (MODEL, _days(1)[0]),
        (MODEL, _days(2)[0]),
        (MODEL, _days(3)[0]),
        ("second", _days(3)[0]),
    ]


def test_dates_are_those_of_the_scheduler_time_zone(store: MetricStore, loans_url: str) -> None:
    config = _config(loans_model(loans_url), timezone="America/New_York")
    _succeed(config, LAST_SUCCESS, store)
    # 03:00 UTC on 4 March is 22:00 on 3 March in New York: its 02:00 fire is tomorrow's
    assert [d for _, d in missed_runs(config, store, now=NOW)] == _days(1, 2)
    naive = dt.datetime(2025, 3, 4, 3, 0)  # read in the scheduler's zone
    assert [d for _, d in missed_runs(config, store, now=naive)] == _days(1, 2, 3)


def test_runs_dated_in_the_future_do_not_hide_the_nights_missed_since(
    store: MetricStore, loans_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # the clock was 20 days ahead for a night, then set back: the missed nights still run
    config = _config(loans_model(loans_url))
    _succeed(config, LAST_SUCCESS, store)
    ahead = NOW.date() + dt.timedelta(days=20)
    _succeed(config, ahead, store)
    with caplog.at_level(logging.WARNING, logger="riskmon.schedule"):
        outcomes = catch_up(config, store, now=NOW)
    assert [(o.as_of, o.status) for o in outcomes] == [(day, "succeeded") for day in _days(1, 2, 3)]
    assert f"dated after today (2025-03-04), the newest as of {ahead}, are ignored" in caplog.text
    assert catch_up(config, store, now=NOW) == []


def test_a_date_another_process_finished_meanwhile_is_not_computed_again(
    store: MetricStore, loans_url: str
) -> None:
    config = _config(loans_model(loans_url))
    _succeed(config, LAST_SUCCESS, store)
    planned = missed_runs(config, store, now=NOW)
    _succeed(config, _days(2)[0], store)  # as another scheduler would have, after the plan
    outcomes = [run_model(model, day, store=store) for model, day in planned]
    assert [(o.as_of, o.status) for o in outcomes] == [
        (_days(1)[0], "succeeded"),
        (_days(2)[0], "done"),
        (_days(3)[0], "succeeded"),
    ]


def test_a_set_stop_event_keeps_runs_from_starting(store: MetricStore, loans_url: str) -> None:
    config = _config(loans_model(loans_url))
    _succeed(config, LAST_SUCCESS, store)
    stop = threading.Event()
    stop.set()
    assert catch_up(config, store, now=NOW, stop=stop) == []
    assert len(store.runs(MODEL)) == 1


def test_an_unknown_time_zone_is_a_config_error() -> None:
    # refused when the configuration is read, before any scheduler starts
    with pytest.raises(ConfigError, match=r"test: scheduler\.timezone: .*'Mars/Olympus_Mons'"):
        _config(timezone="Mars/Olympus_Mons")
    assert str(scheduler_timezone(_config(timezone="Europe/Paris"))) == "Europe/Paris"


# --------------------------------------------------------------------------- the job


def _migrated(url: str) -> None:
    engine = store_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


def test_scheduled_run_runs_the_model_as_of_the_day_before_the_fire_date(
    tmp_path: Path, loans_url: str
) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    _migrated(store_url)
    path = tmp_path / "riskmon.yaml"
    write_config(path, config_of(store_url, [loans_model(loans_url, schedule="* * * * *")]))
    before = dt.datetime.now(UTC).date()
    scheduled_run(str(path), MODEL)
    after = dt.datetime.now(UTC).date()
    store = MetricStore.open(store_url)
    try:
        (run,) = store.runs(MODEL)
        assert run.status == "succeeded"
        assert run.as_of in {before - dt.timedelta(days=1), after - dt.timedelta(days=1)}
    finally:
        store.engine.dispose()


def test_scheduled_run_records_a_failed_run_without_raising(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    _migrated(store_url)
    path = tmp_path / "riskmon.yaml"
    missing = f"sqlite:///{tmp_path / 'missing' / 'loans.db'}"
    write_config(path, config_of(store_url, [loans_model(missing, schedule="* * * * *")]))
    with caplog.at_level(logging.WARNING, logger="riskmon"):
        scheduled_run(str(path), MODEL)
    store = MetricStore.open(store_url)
    try:
        (run,) = store.runs(MODEL)
        assert run.status == "failed"
        assert store.count_rows("figures") == 0
    finally:
        store.engine.dispose()
    assert any("failed" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "problem", ["missing config", "unknown model", "store not migrated", "no schedule"]
)
def test_scheduled_run_logs_what_keeps_a_run_from_starting_and_returns(
    tmp_path: Path, loans_url: str, caplog: pytest.LogCaptureFixture, problem: str
) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    if problem != "store not migrated":
        _migrated(store_url)
    path = tmp_path / "riskmon.yaml"
    schedule = None if problem == "no schedule" else "0 2 * * *"
    if problem != "missing config":
        write_config(path, config_of(store_url, [loans_model(loans_url, schedule=schedule)]))
    name = "gone" if problem == "unknown model" else MODEL
    with caplog.at_level(logging.WARNING, logger="riskmon"):
        scheduled_run(str(path), name)
    assert caplog.records, "the reason is logged"
    assert all(r.name.startswith("riskmon.schedule") for r in caplog.records)
