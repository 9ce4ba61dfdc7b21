"""``riskmon config``: check the configuration and show what it describes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from riskmon.cli._app import _App, _CliError
from riskmon.errors import RiskmonError
from riskmon.redact import mask_url, redact

if TYPE_CHECKING:
    from riskmon.config import RiskmonConfig


@click.group("config")
def config_group() -> None:
    """Inspect the configuration."""


@config_group.command("check")
@click.option(
    "--connect",
    is_flag=True,
    help="Also connect, read-only: the store's schema, and every source's table and columns.",
)
@click.pass_obj
def config_check(app: _App, connect: bool) -> None:
    """Validate the configuration and print what it describes.

    With --connect, also check that the metric store is reachable and migrated, and that
    each model's source has its table (or runs its query) with every configured column,
    reading nothing but their names and types; the exit code is then that of the first
    failed check's error.
    """
    from riskmon.cli._describe import model_lines
    from riskmon.config import resolve_config_path
    from riskmon.notify import channel_key

    config = app.config()
    path = resolve_config_path(app.config_path)
    click.echo(f"{path}: valid, {len(config.models)} model(s)")
    click.echo(f"store: {mask_url(config.store.url)} (reports in {Path(config.store.reports_dir)})")
    for model in config.models:
        source = model.source
        what = f"table {source.table}" if source.table else "query"
        click.echo(f"model {model.name}:")
        click.echo(f"  source: {mask_url(source.url)} ({what})")
        for line in model_lines(model):
            click.echo(line)
        for channel in model.notify:
            # a webhook URL is a secret (the path is its token): show its digest only
            target = channel_key(channel)
            click.echo(f"  notify: {target} on {channel.notify_on}")
    if connect:
        _connect(config)


def _connect(config: RiskmonConfig) -> None:
    """Check the store and every source, one line each; raise the first failure's exit code."""
    from riskmon.collect import Source, required_columns
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import check_schema, current_revision

    failures: list[RiskmonError] = []
    try:
        with opened_store(config.store.url) as engine:
            check_schema(engine)
            click.echo(f"store: connected, schema at revision {current_revision(engine)}")
    except RiskmonError as exc:
        failures.append(exc)
        click.echo(f"store: FAILED: {redact(str(exc))}")
    for model in config.models:
        try:
            with Source(model) as source:
                source.check_columns()
            what = f"table {model.source.table}" if model.source.table else "query"
            n_columns = len({c.name for c in required_columns(model)})
            click.echo(f"model {model.name}: source connected, {what} has all {n_columns} columns")
        except RiskmonError as exc:
            failures.append(exc)
            click.echo(f"model {model.name}: source FAILED: {redact(str(exc))}")
    if failures:
        checks = 1 + len(config.models)
        raise _CliError(
            f"{len(failures)} of {checks} connection checks failed", failures[0].exit_code
        )
