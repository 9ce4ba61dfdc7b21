"""``riskmon schedule``: run every model on its cron schedule until stopped.

What is scheduled, caught up and stopped, and how, is :mod:`riskmon.schedule`; this command
puts it together and says what happens on the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from riskmon.cli._app import _App, _store

if TYPE_CHECKING:
    from riskmon.config import RiskmonConfig


def _echo_next_runs(scheduler: Any, config: RiskmonConfig) -> None:
    schedules = {m.name: m.schedule for m in config.models}
    for job in sorted(scheduler.get_jobs(), key=lambda j: j.id):
        when = job.next_run_time.isoformat(sep=" ") if job.next_run_time else "never"
        click.echo(f"{job.id}: next run {when} (cron {schedules.get(job.id)!r})")


def _announce(message: str) -> None:
    click.echo(f"riskmon schedule: {message}", err=True)


@click.command("schedule")
@click.pass_obj
def schedule_command(app: _App) -> None:
    """Run every model on its cron schedule until stopped.

    Each run is as of the day before the one its cron fires on (a monthly 0 2 1 * * runs as
    of month ends). On start, runs the dates missed since each model's last successful run
    (scheduler.catch_up).
    SIGTERM or Ctrl-C lets the run in progress finish, then exits 0; a second one abandons the
    run (recorded as failed) and exits 128 + the signal number.
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
    config_path = resolve_config_path(app.config_path)
    timezone = scheduler_timezone(config)
    if not any(m.schedule for m in config.models):
        click.echo("riskmon schedule: no model has a schedule; nothing to do", err=True)
        return
    with _store(app):  # fail early, in one line, on a store that is not migrated
        pass
    scheduler = build_scheduler(config, config_path)
    with StopSignals(_announce) as signals:
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
                scheduler.add_listener(
                    lambda _event: _echo_next_runs(scheduler, config), EVENT_SCHEDULER_STARTED
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
