"""``riskmon schedule``: run every model on its cron schedule until stopped.

What is scheduled, caught up and stopped, and how, is :mod:`riskmon.schedule`; this command
puts it together, reloads the configuration on SIGHUP and says what happens on the terminal.
"""

from __future__ import annotations

import threading
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from riskmon.cli._app import _App, _store
from riskmon.errors import RiskmonError
from riskmon.redact import redact

if TYPE_CHECKING:
    from riskmon.config import RiskmonConfig


def _echo_next_runs(scheduler: Any, config: RiskmonConfig) -> None:
    schedules = {m.name: m.schedule for m in config.models}
    for job in sorted(scheduler.get_jobs(), key=lambda j: j.id):
        when = job.next_run_time.isoformat(sep=" ") if job.next_run_time else "never"
        click.echo(f"{job.id}: next run {when} (cron {schedules.get(job.id)!r})")


def _announce(message: str) -> None:
    click.echo(f"riskmon schedule: {message}", err=True)


# --------------------------------------------------------------------------- reloading


@dataclass(frozen=True)
class _JobChanges:
    """How the jobs of one configuration differ from another's, by model name."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    #: (model, old cron, new cron): a changed cron, time zone or misfire grace
    rescheduled: tuple[tuple[str, str, str], ...]

    def __str__(self) -> str:
        said = [f"added {', '.join(self.added)}"] if self.added else []
        said += [f"removed {', '.join(self.removed)}"] if self.removed else []
        said += [f"rescheduled {name} ({old!r} -> {new!r})" for name, old, new in self.rescheduled]
        return "; ".join(said) or "no schedule changed"


def _job_keys(config: RiskmonConfig) -> dict[str, tuple[str, str, int]]:
    """Per scheduled model, what its job is made of: its cron, the time zone, the grace."""
    scheduler = config.scheduler
    return {
        m.name: (m.schedule, scheduler.timezone, scheduler.misfire_grace_seconds)
        for m in config.models
        if m.schedule is not None
    }


def _job_changes(old: RiskmonConfig, new: RiskmonConfig) -> _JobChanges:
    before, after = _job_keys(old), _job_keys(new)
    return _JobChanges(
        added=tuple(name for name in after if name not in before),
        removed=tuple(name for name in before if name not in after),
        rescheduled=tuple(
            (name, before[name][0], key[0])
            for name, key in after.items()
            if name in before and before[name] != key
        ),
    )


def _read(path: Path) -> RiskmonConfig:
    """The configuration file read and checked as a scheduled run reads it."""
    from riskmon.config import load_config
    from riskmon.figures import load_families
    from riskmon.schedule import scheduler_timezone

    config = load_config(path)
    load_families(config.families)
    scheduler_timezone(config)
    return config


class _Reload:
    """SIGHUP: the jobs of the configuration file, read again, replace the scheduler's.

    Called from the stop-signal watcher thread (:class:`~riskmon.schedule.StopSignals`), never
    from the signal handler. The jobs change through the scheduler's API, under its lock, which
    a run in progress holds: they change once that run has finished, and it is not interrupted.
    Before the scheduler has started (during the catch-up) the configuration read is kept, and
    its jobs replace the first ones as the scheduler starts (:meth:`started`).
    """

    def __init__(self, scheduler: Any, config: RiskmonConfig, path: Path) -> None:
        self._scheduler = scheduler
        #: the configuration whose jobs the scheduler has
        self.config = config
        self._path = path
        self._lock = threading.Lock()
        self._started = False
        self._pending: RiskmonConfig | None = None

    def __call__(self) -> None:
        """Read the configuration file again and replace the jobs, or say why not."""
        try:
            config = _read(self._path)
        except (RiskmonError, ValueError) as exc:
            _announce(
                "SIGHUP: the configuration is not reloaded, the schedules stay as they were: "
                + redact(str(exc))
            )
            return
        with self._lock:
            if self._started:
                self._replace(config)
                _echo_next_runs(self._scheduler, config)
                return
            self._pending = config
        _announce(f"SIGHUP: {self._path} read; its schedules apply once the catch-up is done")

    def started(self, _event: object) -> None:
        """The scheduler has started: its jobs become those of a configuration read before."""
        with self._lock:
            self._started = True
            if self._pending is not None:
                self._replace(self._pending)
                self._pending = None

    def _replace(self, config: RiskmonConfig) -> None:
        from apscheduler.jobstores.base import JobLookupError

        from riskmon.schedule import add_model_job

        changes = _job_changes(self.config, config)
        wanted = {model.name: model for model in config.models if model.schedule is not None}
        for name in changes.removed:
            with suppress(JobLookupError):  # never the case for a cron job, which has no end
                self._scheduler.remove_job(name)
        for name in (*changes.added, *(name for name, _, _ in changes.rescheduled)):
            add_model_job(self._scheduler, config, self._path, wanted[name])
        self.config = config
        _announce(f"SIGHUP: reloaded {self._path}: {changes}")
        if not wanted:
            _announce("no model has a schedule now; waiting for the next SIGHUP or a stop")


# --------------------------------------------------------------------------- the command


@click.command("schedule")
@click.pass_obj
def schedule_command(app: _App) -> None:
    """Run every model on its cron schedule until stopped.

    Each run is as of the day before the one its cron fires on (a monthly 0 2 1 * * runs as
    of month ends). On start, runs the dates missed since each model's last successful run
    (scheduler.catch_up).

    SIGTERM or Ctrl-C lets the run in progress finish, then exits 0; a second one abandons the
    run (recorded as failed) and exits 128 + the signal number.

    SIGHUP reloads the configuration file: if it is valid, models added, removed or with a
    changed schedule are scheduled anew (after the run in progress, which it does not
    interrupt); if not, the schedules stay as they were and the error is printed.
    """
    from apscheduler.events import EVENT_SCHEDULER_STARTED

    from riskmon.config import resolve_config_path
    from riskmon.schedule import (
        RunInterrupted,
        StopSignals,
        build_scheduler,
        catch_up,
        scheduler_timezone,
        stopping,
    )

    config = app.config()
    config_path = resolve_config_path(app.config_path).resolve()
    timezone = scheduler_timezone(config)
    if not any(m.schedule for m in config.models):
        click.echo("riskmon schedule: no model has a schedule; nothing to do", err=True)
        return
    with _store(app) as store:  # fail early, in one line, on a store that is not migrated
        if not config.scheduler.catch_up:  # (catch-up sends them first otherwise)
            from riskmon.notify import send_pending

            send_pending(config, store)  # what stopped processes left owed
    scheduler = build_scheduler(config, config_path)
    reload = _Reload(scheduler, config, config_path)
    with StopSignals(_announce, reload) as signals:
        try:
            if config.scheduler.catch_up:
                with _store(app) as store:
                    for outcome in catch_up(config, store, now=None, stop=stopping):
                        detail = outcome.alert_status if outcome.ok else outcome.error
                        click.echo(
                            f"caught up {outcome.model} as of {outcome.as_of}: "
                            f"{outcome.status} ({detail})"
                        )
            if not stopping.is_set():
                signals.scheduler = scheduler
                # in this order: a configuration reloaded during the catch-up, then its jobs
                scheduler.add_listener(reload.started, EVENT_SCHEDULER_STARTED)
                scheduler.add_listener(
                    lambda _event: _echo_next_runs(scheduler, reload.config),
                    EVENT_SCHEDULER_STARTED,
                )
                # a signal received while the scheduler was starting stops it right away
                scheduler.add_listener(signals.stop_scheduler, EVENT_SCHEDULER_STARTED)
                click.echo(f"riskmon schedule: running (time zone {timezone.key})")
                scheduler.start()
        except RunInterrupted:
            pass
        finally:
            if scheduler.running:
                scheduler.shutdown(wait=False)
    if signals.abandoned:
        raise click.exceptions.Exit(128 + signals.received[1])
    click.echo("riskmon schedule: stopped")
