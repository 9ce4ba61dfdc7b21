"""The ``riskmon`` command line.

Domain errors (:class:`~riskmon.errors.RiskmonError`) become one line on stderr and the
error's exit code here, and only here: 2 for usage and configuration errors, 1 otherwise.
Every message goes through :func:`~riskmon.redact.redact` so passwords never reach a terminal.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import click

from riskmon import __version__
from riskmon.config import CONFIG_ENV_VAR, RiskmonConfig, load_config, resolve_config_path
from riskmon.errors import RiskmonError
from riskmon.redact import RedactingFilter, mask_url, redact
from riskmon.store.repository import MetricStore


class _CliError(click.ClickException):
    """A one-line error with a chosen exit code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares a class default

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"riskmon: error: {self.format_message()}", err=True, file=file)


class _Group(click.Group):
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
            target = mask_url(channel.webhook) if channel.webhook else channel.email
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
    from riskmon.baseline import SCORE, freeze
    from riskmon.collect import Source

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


def _show(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def main() -> None:
    """Entry point of the ``riskmon`` console script."""
    cli(prog_name="riskmon")
