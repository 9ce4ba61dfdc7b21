"""The ``riskmon`` command line.

Domain errors (:class:`~riskmon.errors.RiskmonError`) become one line on stderr and the
error's exit code here, and only here: 2 for usage and configuration errors, 1 otherwise.
Every message goes through :func:`~riskmon.redact.redact` so passwords never reach a terminal.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from riskmon import __version__
from riskmon.config import CONFIG_ENV_VAR, RiskmonConfig, load_config, resolve_config_path
from riskmon.errors import RiskmonError
from riskmon.redact import RedactingFilter, mask_url, redact
from riskmon.store.repository import MetricStore

if TYPE_CHECKING:
    from riskmon.outcome import RunOutcome


class _CliError(click.ClickException):
    """A one-line error with a chosen exit code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares a class default

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"riskmon: error: {self.format_message()}", err=True, file=file)


#: commands whose modules are imported only when the command is used, to keep start-up fast
_LAZY_COMMANDS = {
    "report": ("riskmon.report.command", "report_command"),
    "schedule": ("riskmon.schedule", "schedule_command"),
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _LAZY_COMMANDS:
            import importlib

            module, attribute = _LAZY_COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RiskmonError as exc:
            raise _CliError(redact(str(exc)), exc.exit_code) from None


@dataclass
class _App:
    """What the commands share: where the configuration is, loaded on first use."""

    config_path: str | None
    _config: RiskmonConfig | None = field(default=None, init=False)

    def config(self, *, required: bool = True) -> RiskmonConfig:
        """The validated configuration.

        With ``required`` false, a missing *default* config file (no --config, no
        $RISKMON_CONFIG) means the defaults: an embedded SQLite store and no models.
        """
        if self._config is None:
            path = resolve_config_path(self.config_path)
            implicit = self.config_path is None and CONFIG_ENV_VAR not in os.environ
            if not required and implicit and not path.exists():
                self._config = RiskmonConfig()
            else:
                self._config = load_config(path)
        return self._config


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="riskmon")
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help=f"Configuration file. Default: ${CONFIG_ENV_VAR}, else ./riskmon.yaml.",
)
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: int) -> None:
    """riskmon: monitor credit-risk models (KS, AUC, Gini, lift, WOE/IV, PSI/CSI)."""
    _setup_logging(verbose)
    ctx.obj = _App(config_path)


# --------------------------------------------------------------------------- db


@cli.group()
def db() -> None:
    """Create and migrate the metric store."""


def _store_url(app: _App, url: str | None) -> str:
    return url if url is not None else app.config(required=False).store.url


_URL_OPTION = click.option(
    "--url", default=None, help="Metric store URL. Default: store.url from the configuration."
)


@db.command("upgrade")
@_URL_OPTION
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@click.pass_obj
def db_upgrade(app: _App, url: str | None, revision: str) -> None:
    """Create the metric store's tables, or migrate them to this riskmon's schema."""
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import current_revision, upgrade

    target = _store_url(app, url)
    with opened_store(target) as engine:
        before = current_revision(engine)
        upgrade(engine, revision)
        after = current_revision(engine)
    state = "already at" if before == after else f"migrated from {before or 'empty'} to"
    click.echo(f"metric store {mask_url(target)}: {state} revision {after}")


@db.command("downgrade")
@_URL_OPTION
@click.option("--revision", required=True, help="Target revision ('base' drops every table).")
@click.pass_obj
def db_downgrade(app: _App, url: str | None, revision: str) -> None:
    """Migrate the metric store down to an earlier revision."""
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import current_revision, downgrade

    target = _store_url(app, url)
    with opened_store(target) as engine:
        downgrade(engine, revision)
        current = current_revision(engine)
    click.echo(f"metric store {mask_url(target)}: at revision {current or 'none (empty)'}")


@db.command("current")
@_URL_OPTION
@click.pass_obj
def db_current(app: _App, url: str | None) -> None:
    """Show the store's schema revision and the one this riskmon needs."""
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import current_revision, head_revision

    target = _store_url(app, url)
    with opened_store(target) as engine:
        current = current_revision(engine)
    click.echo(f"metric store {mask_url(target)}: revision {current or 'none (empty)'}")
    click.echo(f"riskmon {__version__} needs revision {head_revision()}")


# --------------------------------------------------------------------------- config


@cli.group("config")
def config_group() -> None:
    """Inspect the configuration."""


@config_group.command("check")
@click.pass_obj
def config_check(app: _App) -> None:
    """Validate the configuration and print what it describes."""
    from riskmon.notify import channel_key

    config = app.config()
    path = resolve_config_path(app.config_path)
    click.echo(f"{path}: valid, {len(config.models)} model(s)")
    click.echo(f"store: {mask_url(config.store.url)} (reports in {Path(config.store.reports_dir)})")
    for model in config.models:
        source = model.source
        what = f"table {source.table}" if source.table else "query"
        segments = ", ".join(model.columns.segments) or "none"
        click.echo(f"model {model.name}:")
        click.echo(f"  source: {mask_url(source.url)} ({what})")
        click.echo(
            f"  score: {model.columns.score} ({model.score_direction}), "
            f"label: {model.columns.label}, segments: {segments}"
        )
        click.echo(
            f"  characteristics: {len(model.characteristics)}; "
            f"baseline {model.baseline.start} to {model.baseline.end}; "
            f"stability window {model.stability_window}, "
            f"performance window {model.performance_window}"
        )
        t = model.thresholds
        click.echo(
            f"  thresholds: KS {t.ks[0]}-{t.ks[1]}, PSI {t.psi.amber}/{t.psi.red}, "
            f"CSI {t.csi.amber}/{t.csi.red}; schedule: {model.schedule or 'on demand'}"
        )
        for channel in model.notify:
            # a webhook URL is a secret (the path is its token): show its digest only
            target = channel_key(channel)
            click.echo(f"  notify: {target} on {channel.notify_on}")


# --------------------------------------------------------------------------- baselines


@contextmanager
def _store(app: _App) -> Iterator[MetricStore]:
    """The configured metric store, checked to be migrated, closed afterwards."""
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import check_schema

    with opened_store(app.config().store.url) as engine:
        check_schema(engine)
        yield MetricStore(engine)


@cli.group()
def baseline() -> None:
    """Freeze and inspect the baselines runs are compared with."""


@baseline.command("freeze")
@click.argument("models", nargs=-1)
@click.pass_obj
def baseline_freeze(app: _App, models: tuple[str, ...]) -> None:
    """Freeze a new baseline version of MODELS (default: every model).

    Fits the bins on the model's development window and stores its distributions and
    headline figures; later runs use this version, earlier runs keep theirs.
    """
    from riskmon.baseline import freeze
    from riskmon.collect import Source
    from riskmon.records import SCORE

    config = app.config()
    chosen = [config.model(name) for name in models] if models else config.models
    with _store(app) as store:
        for model in chosen:
            with Source(model) as source:
                frozen = freeze(model, source, store)
            ks, auc = frozen.figure("ks"), frozen.figure("auc")
            score_bins = len(frozen.variables[SCORE].binning.get("edges", [])) + 1
            click.echo(
                f"{model.name}: baseline version {frozen.version} frozen on "
                f"{frozen.window_start} to {frozen.window_end}: {frozen.n_rows} loans, "
                f"{frozen.n_bads} bads, {score_bins} score bins; "
                f"KS {_show(ks.value if ks else None)}, AUC {_show(auc.value if auc else None)}"
            )


@baseline.command("show")
@click.argument("model")
@click.pass_obj
def baseline_show(app: _App, model: str) -> None:
    """Show MODEL's newest baseline: window, bins and headline figures."""
    with _store(app) as store:
        frozen = store.latest_baseline(app.config().model(model).name)
    if frozen is None:
        raise _CliError(f"model {model!r} has no baseline yet: run `riskmon baseline freeze`", 1)
    frozen_at = f"{frozen.frozen_at:%Y-%m-%d %H:%M} UTC"
    window = f"{frozen.window_start} to {frozen.window_end}"
    click.echo(f"{frozen.model} baseline version {frozen.version}, frozen {frozen_at}")
    click.echo(f"  window {window}: {frozen.n_rows} loans, {frozen.n_bads} bads")
    for name, var in frozen.variables.items():
        n_bins = len({b.bin_index for b in var.bins}) or "-"
        click.echo(f"  {name}: {var.kind}, {n_bins} bins")
    for figure in frozen.figures:
        if figure.segment:
            continue
        what = f"{figure.name}({figure.variable})" if figure.variable else figure.name
        click.echo(
            f"  {what} = {_show(figure.value)}" + (f" ({figure.reason})" if figure.reason else "")
        )


# --------------------------------------------------------------------------- runs

#: exit codes of `riskmon run` and `riskmon backfill`, for cron and orchestrators
EXIT_OK, EXIT_ALERT, EXIT_USAGE, EXIT_RUN_FAILED = 0, 1, 2, 3
_FAIL_ON = {"red": ("RED",), "amber": ("AMBER", "RED")}
_DATE = click.DateTime(formats=["%Y-%m-%d"])
_STRATEGY_OPTION = click.option(
    "--strategy",
    # riskmon.collect.STRATEGIES, written out so that the CLI starts without importing it
    type=click.Choice(["auto", "packed", "grouping_sets", "union_all", "per_variable", "stream"]),
    default="auto",
    show_default=True,
    help="How count tables are read: SQL pushdown shapes, or a streaming read.",
)


def _exit_code(outcomes: Sequence[RunOutcome], fail_on: str | None) -> int:
    if any(not o.ok for o in outcomes):
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
    click.echo(f"{head}, {outcome.alert_status}{f' ({tally})' if tally else ''}; {shown}")
    for alert in outcome.alerts:
        if alert.status in ("RED", "AMBER"):
            click.echo(f"  {alert.status:5} {alert.rule}: {alert.message}")
    if outcome.report_path:
        click.echo(f"  report: {outcome.report_path}")


@cli.command("run")
@click.argument("models", nargs=-1)
@click.option("--as-of", type=_DATE, default=None, help="As-of date (YYYY-MM-DD). Default: today.")
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
@click.pass_obj
def run_command(
    app: _App,
    models: tuple[str, ...],
    as_of: dt.datetime | None,
    fmt: str,
    fail_on: str | None,
    strategy: str,
) -> None:
    """Run MODELS (default: every model) as of a date: collect, compute, evaluate, store.

    Exit codes: 0 every run succeeded; 1 a run raised an alert at --fail-on severity;
    2 a usage or configuration error; 3 a run failed (or another process holds it).
    """
    from riskmon.run import run_models

    config = app.config()
    day = as_of.date() if as_of else dt.date.today()
    with _store(app) as store:
        outcomes = run_models(config, models, day, store=store, strategy=strategy)  # type: ignore[arg-type]
    if fmt == "json":
        click.echo(json.dumps([o.summary() for o in outcomes], indent=2, default=str))
    else:
        for outcome in outcomes:
            _echo_outcome(outcome)
    raise SystemExit(_exit_code(outcomes, fail_on))


@cli.command("backfill")
@click.argument("model")
@click.option("--from", "start", type=_DATE, required=True, help="First as-of date.")
@click.option("--to", "end", type=_DATE, required=True, help="Last as-of date (inclusive).")
@click.option(
    "--every",
    type=click.Choice(["day", "week", "month"]),
    default="month",
    show_default=True,
    help="Step between as-of dates (months keep month ends).",
)
@_STRATEGY_OPTION
@click.pass_obj
def backfill_command(
    app: _App, model: str, start: dt.datetime, end: dt.datetime, every: str, strategy: str
) -> None:
    """Run MODEL as of every date from --from to --to, oldest first, with a progress bar."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from riskmon.config import Period
    from riskmon.plan import as_of_dates
    from riskmon.run import run_models

    config = app.config()
    chosen = config.model(model)
    if end < start:
        raise _CliError(f"--to {end:%Y-%m-%d} is before --from {start:%Y-%m-%d}", EXIT_USAGE)
    dates = as_of_dates(start.date(), end.date(), Period(count=1, unit=every))
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
            # not flood the channels with history
            (outcome,) = run_models(
                config,
                [chosen.name],
                day,
                store=store,
                strategy=strategy,  # type: ignore[arg-type]
                notify=day == dates[-1],
            )
            outcomes.append(outcome)
            progress.advance(task)
    for outcome in outcomes:
        _echo_outcome(outcome)
    failed = sum(not o.ok for o in outcomes)
    click.echo(f"{chosen.name}: {len(outcomes) - failed} of {len(outcomes)} runs succeeded")
    raise SystemExit(_exit_code(outcomes, None))


#: the population a figure is read from when --population is not given
_FIGURE_POPULATION = {
    "psi": "current",
    "csi": "current",
    "missing_rate": "current",
    "unseen_rate": "current",
}
_HISTORY_COLUMNS = (
    ("n_rows", "", "current"),
    ("psi", "score", "current"),
    ("bad_rate", "", "performance"),
    ("ks", "", "performance"),
    ("auc", "", "performance"),
    ("gini", "", "performance"),
)


@cli.command("history")
@click.argument("model")
@click.option("--figure", default=None, help="One figure (ks, auc, gini, psi, csi, iv, ...).")
@click.option("--variable", default=None, help="Its variable (a characteristic; 'score' for psi).")
@click.option("--segment", default="", help="A segment such as channel=web. Default: everyone.")
@click.option(
    "--population",
    type=click.Choice(["current", "performance"]),
    default=None,
    help="Default: current for psi/csi/missing_rate, else performance.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@click.pass_obj
def history_command(
    app: _App,
    model: str,
    figure: str | None,
    variable: str | None,
    segment: str,
    population: str | None,
    fmt: str,
) -> None:
    """Print MODEL's figures over its succeeded runs, oldest first."""
    from riskmon.records import Status

    name = app.config().model(model).name
    with _store(app) as store:
        runs = {r.as_of: r for r in store.runs(name) if r.status == "succeeded"}
        if figure is None:
            columns = [
                (f"{n}[{v}]" if v and v != "score" else n, n, v, p) for n, v, p in _HISTORY_COLUMNS
            ]
        else:
            var = variable if variable is not None else ("score" if figure == "psi" else "")
            pop = population or _FIGURE_POPULATION.get(figure, "performance")
            columns = [(f"{figure}[{var}]" if var else figure, figure, var, pop)]
        values = {
            label: {
                p.as_of: p.value
                for p in store.history(name, n, variable=v, segment=segment, population=p_)
            }
            for label, n, v, p_ in columns
        }
        status = {d: Status.worst(a.status for a in store.alerts(r.id)) for d, r in runs.items()}
    rows = [
        {
            "as_of": d.isoformat(),
            "status": status[d],
            **{label: values[label].get(d) for label, *_ in columns},
        }
        for d in sorted(runs)
    ]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["as_of", "status", *values])
        writer.writeheader()
        writer.writerows(rows)
        click.echo(out.getvalue(), nl=False)
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"{name}{f' ({segment})' if segment else ''}")
        for header in ("as_of", "status", *values):
            table.add_column(header, justify="left" if header in ("as_of", "status") else "right")
        for row in rows:
            table.add_row(*(v if isinstance(v, str) else _show(v) for v in row.values()))
        Console(width=max(100, 20 * len(values))).print(table)


def _show(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{int(value)}" if float(value).is_integer() and abs(value) >= 1 else f"{value:.4f}"


@cli.command("demo")
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("riskmon-demo"),
    show_default=True,
    help="Folder for the demo's loans, configuration, store and reports.",
)
def demo_command(folder: Path) -> None:
    """Build a demo: a synthetic book of 200,000+ scored loans, two models, a year of runs.

    An application scorecard (points, higher is safer) and a behavioural PD model are
    monitored monthly through 2024 while the population drifts, the PD model degrades and the
    broker channel turns bad. Prints the path of the reports' index.
    """
    from riskmon.demo import run_demo

    result = run_demo(folder)
    by_model = Counter((o.model, o.alert_status) for o in result.outcomes if o.ok)
    failed = [o for o in result.outcomes if not o.ok]
    click.echo(f"{result.n_loans:,} loans in {result.folder / 'loans.db'}")
    for model in dict.fromkeys(o.model for o in result.outcomes):
        tally = ", ".join(
            f"{n} {status}" for (m, status), n in sorted(by_model.items()) if m == model
        )
        click.echo(f"{model}: {tally}")
    for outcome in failed:
        click.echo(f"{outcome.model} as of {outcome.as_of}: failed: {outcome.error}")
    click.echo(f"configuration: {result.config_path}")
    click.echo(f"reports: {result.index_path}")
    if failed:
        raise SystemExit(EXIT_RUN_FAILED)


def main() -> None:
    """Entry point of the ``riskmon`` console script."""
    cli(prog_name="riskmon")
