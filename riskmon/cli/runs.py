"""``riskmon run`` and ``riskmon backfill``: run models as of dates, with exit codes for cron."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from riskmon.cli._app import _App, _CliError, _show, _store
from riskmon.cli._dates import DATE, check_not_future
from riskmon.cli._signals import abandoned_on_signal
from riskmon.errors import EXIT_ALERT, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from riskmon.records import Status, why

if TYPE_CHECKING:
    from riskmon.config import ModelConfig
    from riskmon.outcome import RunOutcome

#: a run failed or another process holds it (riskmon.errors.EXIT_FAILED)
EXIT_RUN_FAILED = EXIT_FAILED
_FAIL_ON = {"red": ("RED",), "amber": ("AMBER", "RED")}
#: RED and AMBER alerts a run lists, at most (its report has them all)
LISTED_ALERTS = 20
_STRATEGY_OPTION = click.option(
    "--strategy",
    # riskmon.collect.STRATEGIES, written out so that the CLI starts without importing it
    type=click.Choice(["auto", "packed", "grouping_sets", "union_all", "per_variable", "stream"]),
    default="auto",
    show_default=True,
    help="How count tables are read: SQL pushdown shapes, or a streaming read.",
)


_FULL_OPTION = click.option(
    "--full",
    is_flag=True,
    help="Read every day of the windows from the source, not only the days not read before "
    "and the newest source.restatement_days (the days' sums kept in the store are replaced).",
)

_FORCE_OPTION = click.option(
    "--force",
    is_flag=True,
    help="Compute a date again that has succeeded already (its figures are replaced). A "
    "channel that heard of it before hears again only if its status changed; one due that "
    "never heard of it (a date a backfill did not notify) hears now. Without it, such a date "
    "is skipped, said so, and not a failure.",
)


def _exit_code(outcomes: Sequence[RunOutcome], fail_on: str | None) -> int:
    # a report that was not written fails the job like a failed run: the run's figures are
    # stored, but what the team reads is missing until `riskmon report` writes it
    # a date that had succeeded already ("done") is not a failure: it was computed once
    if any(not (o.ok or o.status == "done") or o.report_error for o in outcomes):
        return EXIT_RUN_FAILED
    if fail_on and any(o.alert_status in _FAIL_ON[fail_on] for o in outcomes):
        return EXIT_ALERT
    return EXIT_OK


def _echo_outcome(outcome: RunOutcome) -> None:
    head = f"{outcome.model} as of {outcome.as_of}: {outcome.status}"
    if not outcome.ok:
        click.echo(f"{head}: {outcome.error}")
        return
    counts = Counter(str(a.status) for a in outcome.alerts)
    tally = ", ".join(f"{counts[s]} {s.lower()}" for s in ("RED", "AMBER") if counts[s])
    figures = {(f.name, f.variable): f.value for f in outcome.figures if f.segment == ""}
    shown = ", ".join(
        f"{label} {_show(figures.get(key))}"
        for label, key in (("KS", ("ks", "")), ("AUC", ("auc", "")), ("PSI", ("psi", "score")))
    )
    unwritten = ", REPORT NOT WRITTEN" if outcome.report_error else ""
    click.echo(
        f"{head}{unwritten}, {outcome.alert_status}{f' ({tally})' if tally else ''}; {shown}"
    )
    reason = why(outcome.alerts)
    if reason:
        click.echo(f"  {reason}")
    flagged = [a for a in outcome.alerts if a.status in ("RED", "AMBER")]
    flagged.sort(key=lambda a: -Status(a.status).severity)
    for alert in flagged[:LISTED_ALERTS]:
        click.echo(f"  {alert.status:5} {alert.rule}: {alert.message}")
    if len(flagged) > LISTED_ALERTS:
        click.echo(f"  … and {len(flagged) - LISTED_ALERTS:,} more RED or AMBER alerts")
    if outcome.report_path:
        click.echo(f"  report: {outcome.report_path}")
    if outcome.report_error:
        click.echo(f"  report not written: {outcome.report_error}")


def _yesterday(timezone: str) -> dt.date:
    """The as-of date of a run started now without one, as a scheduled run's (riskmon.cron)."""
    from riskmon.cron import as_of_started_on, time_zone

    return as_of_started_on(dt.datetime.now(time_zone(timezone)).date())


def backfill_dates(model: ModelConfig, start: dt.date, end: dt.date, every: str) -> list[dt.date]:
    """The as-of dates of a backfill from ``start`` to ``end``: steps of a day, a week or a
    month from ``start`` (months keep month ends), or with ``every="schedule"`` the as-of dates
    of the model's scheduled runs (the day before each fire of its cron) in the range."""
    from riskmon.config import Period
    from riskmon.plan import as_of_dates

    if every != "schedule":
        return as_of_dates(start, end, Period(count=1, unit=every))
    if model.schedule is None:
        raise _CliError(
            f"--every schedule: model {model.name!r} has no schedule; choose day, week or month",
            EXIT_USAGE,
        )
    from riskmon.cron import AS_OF_LAG, as_of_started_on, cron_trigger, fire_dates, time_zone

    zone = time_zone("UTC")  # only the fires' dates matter, not their hour
    first, last = (
        dt.datetime.combine(d + AS_OF_LAG, t, tzinfo=zone)
        for d, t in ((start, dt.time.min), (end, dt.time.max))
    )
    return [
        as_of_started_on(d) for d in fire_dates(cron_trigger(model.schedule, zone), first, last)
    ]


@click.command("run")
@click.argument("models", nargs=-1)
@click.option(
    "--as-of",
    type=DATE,
    default=None,
    help="As-of date (YYYY-MM-DD), from 1900-01-01 to today plus "
    "scheduler.future_slack_days. Default: yesterday, the last day that has ended "
    "(in scheduler.timezone), as a scheduled run.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one machine-readable summary per model.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["red", "amber"]),
    default=None,
    help="Exit 1 when a run raised an alert at least this severe.",
)
@_STRATEGY_OPTION
@_FORCE_OPTION
@_FULL_OPTION
@click.pass_obj
@abandoned_on_signal("riskmon run")
def run_command(
    app: _App,
    models: tuple[str, ...],
    as_of: dt.date | None,
    fmt: str,
    fail_on: str | None,
    strategy: str,
    force: bool,
    full: bool,
) -> None:
    """Run MODELS (default: every model) as of a date: collect, compute, evaluate, store.

    A date that has succeeded already is not computed again, and says so (--force computes it
    again). Exit codes: 0 every run succeeded (or had already); 1 a run raised an alert at
    --fail-on severity; 2 a usage or configuration error, or an --as-of beyond today plus
    scheduler.future_slack_days; 3 a run failed (or another process holds it), or a run's
    report could not be written (its figures are stored: `riskmon report` rewrites it); 4 the
    metric store could not be used; 128 + N stopped by signal N (the run in progress is stored
    as interrupted). A source that cannot be reached fails its run (3).
    """
    from riskmon.run import run_models

    config = app.config()
    check_not_future(config, as_of=as_of)
    day = as_of or _yesterday(config.scheduler.timezone)
    with _store(app) as store:
        outcomes = run_models(
            config,
            models,
            day,
            store=store,
            strategy=strategy,  # type: ignore[arg-type]
            force=force,
            full=full,
        )
    if fmt == "json":
        click.echo(json.dumps([o.summary() for o in outcomes], indent=2, default=str))
    else:
        for outcome in outcomes:
            _echo_outcome(outcome)
    raise SystemExit(_exit_code(outcomes, fail_on))


@click.command("backfill")
@click.argument("model")
@click.option("--from", "start", type=DATE, required=True, help="First as-of date.")
@click.option(
    "--to",
    "end",
    type=DATE,
    required=True,
    help="Last as-of date (inclusive), at most today plus scheduler.future_slack_days.",
)
@click.option(
    "--every",
    type=click.Choice(["day", "week", "month", "schedule"]),
    default="month",
    show_default=True,
    help="Step between as-of dates (months keep month ends); schedule: the as-of dates of "
    "MODEL's scheduled runs, each the day before a fire of its cron.",
)
@_STRATEGY_OPTION
@_FORCE_OPTION
@_FULL_OPTION
@click.pass_obj
@abandoned_on_signal("riskmon backfill")
def backfill_command(
    app: _App,
    model: str,
    start: dt.date,
    end: dt.date,
    every: str,
    strategy: str,
    force: bool,
    full: bool,
) -> None:
    """Run MODEL as of every date from --from to --to, oldest first, with a progress bar."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from riskmon.run import run_models

    config = app.config()
    chosen = config.model(model)
    check_not_future(config, start=start, end=end)
    if end < start:
        raise _CliError(f"--to {end:%Y-%m-%d} is before --from {start:%Y-%m-%d}", EXIT_USAGE)
    dates = backfill_dates(chosen, start, end, every)
    if not dates:
        raise _CliError(
            f"{chosen.name}'s schedule {chosen.schedule!r} runs as of no date from "
            f"{start:%Y-%m-%d} to {end:%Y-%m-%d}",
            EXIT_USAGE,
        )
    outcomes: list[RunOutcome] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with _store(app) as store, Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task(f"{chosen.name}", total=len(dates))
        for day in dates:
            progress.update(task, description=f"{chosen.name} as of {day}")
            # every date gets its report; only the newest notifies, so that a backfill does
            # not flood the channels with history, and rewrites the index, which reads every
            # model's runs and reports (a backfill of a year would read them 365 times)
            (outcome,) = run_models(
                config,
                [chosen.name],
                day,
                store=store,
                strategy=strategy,  # type: ignore[arg-type]
                notify=day == dates[-1],
                force=force,
                full=full,
                index=day == dates[-1],
            )
            outcomes.append(outcome)
            progress.advance(task)
    for outcome in outcomes:
        _echo_outcome(outcome)
    failed = sum(not (o.ok or o.status == "done") for o in outcomes)
    done = sum(o.status == "done" for o in outcomes)
    already = f" ({done} had succeeded already: not computed again)" if done else ""
    click.echo(
        f"{chosen.name}: {len(outcomes) - failed} of {len(outcomes)} runs succeeded{already}"
    )
    raise SystemExit(_exit_code(outcomes, None))
