"""Run the models on their cron schedules: APScheduler triggers that call :func:`run_models`.

The scheduler decides *when*; what a run does is :func:`~riskmon.run.run_models`, the same entry
point the command line uses. Three pieces:

- :func:`build_scheduler` maps the configuration to one cron job per scheduled model
  (:func:`add_model_job`), kept in memory only: nothing the scheduler runs is read from the
  store (APScheduler's database job store keeps jobs pickled, and unpickling runs code);
- :func:`catch_up` runs, oldest first, the as-of dates each schedule fired on while no scheduler
  was running, and the failed dates before the model's newest success, at most
  ``scheduler.max_catch_up_runs`` of them per model (the newest), all read from the runs table;
- :func:`scheduled_run` is the job itself: it reloads the configuration, opens the store and
  runs one model as of the day before the date its cron fired on
  (:func:`riskmon.cron.as_of_started_on`: a monthly ``0 2 1 * *`` runs as of month ends).

Schedules are standard 5-field crontab expressions in ``scheduler.timezone`` (:mod:`riskmon.cron`).

Runs execute one at a time in the scheduler's main thread, so a stop signal can reach the run
in progress: under :class:`StopSignals` the first SIGTERM/SIGINT lets it finish and starts no
other, a second one abandons it (:func:`run_model` records it as failed, "interrupted before it
finished"). SIGHUP reloads the configuration file: when it is valid, its scheduled models'
jobs replace the scheduler's (models added or removed, schedules changed, once the run in
progress has finished); when it is not, the jobs stay as they were and the error is printed.
SIGHUP stops nothing and interrupts no run. The ``riskmon schedule`` command that puts these
together is :mod:`riskmon.cli.schedule`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.executors.debug import DebugExecutor
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.base import SchedulerNotRunningError
from apscheduler.schedulers.blocking import BlockingScheduler

from riskmon.config import ModelConfig, RiskmonConfig, load_config
from riskmon.cron import AS_OF_LAG, as_of_started_on, cron_trigger, fire_dates, time_zone
from riskmon.errors import ConfigError, RiskmonError
from riskmon.figures import load_families
from riskmon.notify import send_pending
from riskmon.outcome import RunOutcome
from riskmon.redact import redact
from riskmon.run import run_models
from riskmon.store import MetricStore
from riskmon.store.engine import opened_store
from riskmon.store.migrate import check_schema

log = logging.getLogger(__name__)

#: the table where riskmon's scheduler once kept its jobs, pickled (migration 0005 drops it)
JOB_TABLE = "apscheduler_jobs"
#: the job function, by textual reference
JOB_FUNCTION = "riskmon.schedule:scheduled_run"
#: how far before "now" a scheduled run looks for the fire time it was started for, beyond the
#: misfire grace (the job may start a little after its grace was checked)
_FIRE_LOOKBACK_MARGIN = dt.timedelta(minutes=5)

#: set once `riskmon schedule` has been asked to stop: no scheduled run starts after that
stopping = threading.Event()


class RunInterrupted(KeyboardInterrupt):
    """A second stop signal: the run in progress is abandoned (and recorded as failed)."""


# --------------------------------------------------------------------------- time


def scheduler_timezone(config: RiskmonConfig) -> ZoneInfo:
    """The time zone schedules are read in and as-of dates are taken in."""
    try:
        return time_zone(config.scheduler.timezone)
    except ValueError as exc:
        raise ConfigError(str(exc), key="scheduler.timezone") from None


def _local(moment: dt.datetime | None, timezone: ZoneInfo) -> dt.datetime:
    if moment is None:
        return dt.datetime.now(timezone)
    if moment.tzinfo is None:  # a wall-clock time in the scheduler's zone
        return moment.replace(tzinfo=timezone)
    return moment.astimezone(timezone)


# --------------------------------------------------------------------------- catch-up


def missed_runs(
    config: RiskmonConfig, store: MetricStore, *, now: dt.datetime | None = None
) -> list[tuple[ModelConfig, dt.date]]:
    """The (model, as-of date) pairs :func:`catch_up` would run, in the order it runs them.

    For each scheduled model: the as-of date of every fire of its cron (the day before the fire)
    after the as-of date of its newest successful run, up to ``now``, and every date before it
    whose run failed; the newest ``scheduler.max_catch_up_runs`` of them. A model that never
    succeeded has only today's fires (already past) to catch up, not its history: backfill that
    with ``riskmon backfill``.

    Runs dated after ``now``'s date (stored while the clock was ahead, or by hand) are not the
    newest success: the nights missed since the newest success up to now are caught up all the
    same, and a warning says which runs were ignored.
    """
    timezone = scheduler_timezone(config)
    now = _local(now, timezone)
    limit = config.scheduler.max_catch_up_runs
    planned: list[tuple[dt.date, int, ModelConfig]] = []
    for position, model in enumerate(config.models):
        if model.schedule is None or limit == 0:
            continue
        runs = store.runs(model.name, details=False)
        _warn_of_future_runs(model, [r.as_of for r in runs if r.as_of > now.date()], now)
        done = [r.as_of for r in runs if r.status == "succeeded" and r.as_of <= now.date()]
        latest = max(done, default=None)
        # the first fire whose as-of date is after the newest success's
        first = latest + 2 * AS_OF_LAG if latest is not None else now.date()
        start = dt.datetime.combine(first, dt.time(), tzinfo=timezone)
        fired = fire_dates(cron_trigger(model.schedule, timezone), start, now)
        dates = [as_of_started_on(day) for day in fired]
        if latest is not None:  # failed dates that a later success went past
            failed = [r.as_of for r in runs if r.status == "failed"]
            dates = sorted({*dates, *(day for day in failed if day < latest)})
        planned += [(day, position, model) for day in dates[-limit:]]
    return [(model, day) for day, _, model in sorted(planned, key=lambda p: p[:2])]


def _warn_of_future_runs(model: ModelConfig, future: list[dt.date], now: dt.datetime) -> None:
    if future:
        log.warning(
            "%s: %d run(s) dated after today (%s), the newest as of %s, are ignored by "
            "catch-up: the nights since the newest run up to today are caught up",
            model.name,
            len(future),
            now.date().isoformat(),
            max(future).isoformat(),
        )


def catch_up(
    config: RiskmonConfig,
    store: MetricStore,
    *,
    now: dt.datetime | None = None,
    stop: threading.Event | None = None,
) -> list[RunOutcome]:
    """Run what the schedules missed while no scheduler ran (see :func:`missed_runs`).

    Runs are made oldest date first, so that each compares with the one before it; ``stop``,
    once set, keeps the next one from starting. ``now`` without a time zone is read in
    ``scheduler.timezone``. Each date is claimed as it comes: one another process computed
    meanwhile is not computed again (its outcome is ``done``). First, the notifications that
    processes stopped before they sent are sent (:func:`riskmon.notify.send_pending`).
    """
    outcomes: list[RunOutcome] = []
    send_pending(config, store)
    missed = missed_runs(config, store, now=now)
    newest = {model.name: as_of for model, as_of in missed}
    for model, as_of in missed:
        if stop is not None and stop.is_set():
            log.warning("catch-up stopped before %s as of %s", model.name, as_of)
            break
        log.info("catching up %s as of %s", model.name, as_of)
        # every caught-up date gets its report; only a model's newest notifies, so the channels
        # hear the current state once rather than the history of the missed days
        outcomes += run_models(
            config, [model.name], as_of, store=store, notify=as_of == newest[model.name]
        )
    return outcomes


# --------------------------------------------------------------------------- the job


@contextmanager
def _opened(url: str) -> Iterator[MetricStore]:
    with opened_store(url) as engine:
        check_schema(engine)
        yield MetricStore(engine)


def _fire_date(config: RiskmonConfig, schedule: str, timezone: ZoneInfo) -> dt.date:
    """The date of the newest fire time the job can have been started for."""
    now = dt.datetime.now(timezone)
    grace = dt.timedelta(seconds=config.scheduler.misfire_grace_seconds)
    fired = fire_dates(cron_trigger(schedule, timezone), now - grace - _FIRE_LOOKBACK_MARGIN, now)
    return fired[-1] if fired else now.date()


def scheduled_as_of(config: RiskmonConfig, schedule: str) -> dt.date:
    """The as-of date of the run a job fired on ``schedule`` is making: the day before the
    date it fired on."""
    timezone = scheduler_timezone(config)
    return as_of_started_on(_fire_date(config, schedule, timezone))


def scheduled_run(config_path: str, model_name: str) -> None:
    """The scheduler's job: run ``model_name`` as of the day before the date its cron fired on.

    The configuration is read again, so changed thresholds or sources apply from the next run
    on (a changed schedule needs SIGHUP, or a restart, of ``riskmon schedule``). Nothing is
    raised: a failed
    run is recorded in the store, and a run that cannot start is logged.
    """
    if stopping.is_set():
        log.warning("%s: not started, the scheduler is stopping", model_name)
        return
    try:
        config = load_config(config_path)
        load_families(config.families)
        model = config.model(model_name)
        if model.schedule is None:
            log.warning(
                "%s: no longer scheduled in %s; send `riskmon schedule` SIGHUP (or restart it) "
                "to drop its job",
                model_name,
                config_path,
            )
            return
        as_of = scheduled_as_of(config, model.schedule)
        with _opened(config.store.url) as store:
            (outcome,) = run_models(config, [model.name], as_of, store=store)
    except RunInterrupted:
        log.warning("%s: run abandoned on a second stop signal", model_name)
        return
    except RiskmonError as exc:
        log.error("%s: scheduled run not started: %s", model_name, redact(str(exc)))
        return
    except Exception:  # a bug must not stop the other models' schedules
        log.exception("%s: scheduled run failed unexpectedly", model_name)
        return
    if not outcome.ok:
        log.warning("%s as of %s: %s: %s", model_name, as_of, outcome.status, outcome.error)


# --------------------------------------------------------------------------- the scheduler


def _job_options(config: RiskmonConfig) -> dict[str, Any]:
    return {
        "coalesce": True,
        "max_instances": 1,
        "misfire_grace_time": config.scheduler.misfire_grace_seconds,
    }


def build_scheduler(
    config: RiskmonConfig, config_path: str | os.PathLike[str]
) -> BlockingScheduler:
    """A scheduler with one cron job per scheduled model, kept in memory.

    Each job's next fire time is computed afresh from its cron; what was missed while no
    scheduler ran is :func:`catch_up`'s. Jobs run in the scheduler's thread, one at a time.
    """
    scheduler = BlockingScheduler(
        jobstores={"default": MemoryJobStore()},
        executors={"default": DebugExecutor()},
        job_defaults=_job_options(config),
        timezone=scheduler_timezone(config),
    )
    for model in config.models:
        if model.schedule is not None:
            add_model_job(scheduler, config, config_path, model)
    return scheduler


def add_model_job(
    scheduler: Any, config: RiskmonConfig, config_path: str | os.PathLike[str], model: ModelConfig
) -> None:
    """Add (or replace) the cron job of ``model``, which has a ``schedule``, to ``scheduler``."""
    scheduler.add_job(
        JOB_FUNCTION,
        trigger=cron_trigger(str(model.schedule), scheduler_timezone(config)),
        args=[str(Path(config_path).resolve()), model.name],
        id=model.name,
        name=f"riskmon run {model.name}",
        replace_existing=True,
        **_job_options(config),
    )


# --------------------------------------------------------------------------- stopping


class StopSignals:
    """SIGTERM and SIGINT for `riskmon schedule`, and SIGHUP, while in the ``with`` block.

    The first SIGTERM/SIGINT sets :data:`stopping`, tells ``announce`` and shuts
    :attr:`scheduler` down once its run in progress has finished; the second raises
    :class:`RunInterrupted` in the main thread, where the runs execute. SIGHUP calls ``reload``
    (without one, SIGHUP is left as it was): it never stops nor interrupts anything, and is
    ignored once the scheduler is stopping. The handler itself only sets flags and writes a
    byte to a pipe; a watcher thread does the rest (a signal handler must not take the locks the
    interrupted code may hold).
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    #: the signal that asks for the configuration to be read again
    RELOAD = signal.SIGHUP

    def __init__(
        self, announce: Callable[[str], None], reload: Callable[[], None] | None = None
    ) -> None:
        self.received: list[int] = []
        self._announce = announce
        self._reload = reload
        self.scheduler: Any = None
        self._read, self._write = os.pipe()
        self._previous: dict[int, Any] = {}
        self._watcher = threading.Thread(target=self._watch, name="riskmon-stop", daemon=True)

    @property
    def abandoned(self) -> bool:
        return len(self.received) >= 2

    def __enter__(self) -> StopSignals:
        stopping.clear()
        handled = (*self.SIGNALS, self.RELOAD) if self._reload is not None else self.SIGNALS
        for signum in handled:
            self._previous[signum] = signal.signal(signum, self._handle)
        self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        os.write(self._write, b"\0")
        self._watcher.join(timeout=30)
        os.close(self._read)
        os.close(self._write)
        stopping.clear()

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if signum == self.RELOAD:
            os.write(self._write, bytes([signum]))
            return
        self.received.append(signum)
        if len(self.received) == 1:
            stopping.set()  # the main thread only reads this event, never waits on it
            os.write(self._write, bytes([signum]))
        elif len(self.received) == 2:
            raise RunInterrupted(f"{signal.Signals(signum).name} received a second time")
        # later signals: the abandoned run is being recorded as failed; let that finish

    def _watch(self) -> None:
        while True:
            byte = os.read(self._read, 1)
            if not byte or byte == b"\0":
                return
            if byte[0] == self.RELOAD:
                self._reload_now()
                continue
            name = signal.Signals(byte[0]).name
            self._announce(
                f"{name}: finishing the run in progress, then stopping "
                f"(send it again to abandon the run)"
            )
            self.stop_scheduler()

    def _reload_now(self) -> None:
        if stopping.is_set():
            self._announce("SIGHUP: not reloading the configuration, the scheduler is stopping")
            return
        try:
            if self._reload is not None:
                self._reload()
        except Exception:  # the watcher must outlive a failed reload: it also stops the scheduler
            log.exception("SIGHUP: the configuration could not be reloaded")

    def stop_scheduler(self, *_event: object) -> None:
        """Shut the scheduler down once its current run (if any) has finished."""
        scheduler = self.scheduler
        if scheduler is None or not stopping.is_set() or not scheduler.running:
            return
        with suppress(SchedulerNotRunningError):  # stopped by the other path meanwhile
            scheduler.shutdown(wait=True)


__all__ = [
    "JOB_FUNCTION",
    "JOB_TABLE",
    "RunInterrupted",
    "StopSignals",
    "add_model_job",
    "build_scheduler",
    "catch_up",
    "missed_runs",
    "scheduled_as_of",
    "scheduled_run",
    "scheduler_timezone",
]
