"""``riskmon db``: create, migrate and inspect the metric store's schema."""

from __future__ import annotations

import click

from riskmon import __version__
from riskmon.cli._app import _App
from riskmon.redact import mask_url


@click.group()
def db() -> None:
    """Create and migrate the metric store."""


def _store_url(app: _App, url: str | None) -> str:
    return url if url is not None else app.config(required=False, sources=False).store.url


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
