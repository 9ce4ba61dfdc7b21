"""``riskmon db``: create, migrate, inspect and check the metric store's schema."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from riskmon import __version__
from riskmon.cli._app import _App
from riskmon.heap import set_aside_imports
from riskmon.redact import mask_url


@click.group()
def db() -> None:
    """Create and migrate the metric store."""


def _store_url(app: _App, url: str | None) -> str:
    if url is not None:
        set_aside_imports()  # no configuration to read (riskmon.heap)
        return url
    return app.config(required=False, sources=False).store.url


#: how many of a failed check's findings ``db check`` prints
SHOWN_PROBLEMS = 20

_URL_OPTION = click.option(
    "--url", default=None, help="Metric store URL. Default: store.url from the configuration."
)


@contextmanager
def _target(revision: str) -> Iterator[None]:
    """A ``--revision`` Alembic cannot find is a usage error naming the revisions shipped."""
    from alembic.util import CommandError

    from riskmon.store.migrate import known_revisions

    try:
        yield
    except CommandError as exc:
        shipped = ", ".join(known_revisions())
        raise click.BadParameter(
            f"{exc} (riskmon {__version__} ships {shipped}, and 'head' and 'base')",
            param_hint="'--revision'",
        ) from None


@db.command("upgrade")
@_URL_OPTION
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@click.pass_obj
def db_upgrade(app: _App, url: str | None, revision: str) -> None:
    """Create the metric store's tables, or migrate them to this riskmon's schema.

    Each migration commits with its version bump: an upgrade interrupted at any point is
    run again as it is. A damaged store, or one a newer riskmon migrated, is refused.
    """
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import current_revision, upgrade

    target = _store_url(app, url)
    with opened_store(target) as engine:
        before = current_revision(engine)
        with _target(revision):
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
    with opened_store(target) as engine, _target(revision):
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


@db.command("check")
@_URL_OPTION
@click.pass_obj
def db_check(app: _App, url: str | None) -> None:
    """Check that the metric store is sound: its file (SQLite), revision, schema and tables.

    Prints each check and what it found; exits 4 when one fails.
    """
    from riskmon.errors import StoreError
    from riskmon.store.engine import opened_store
    from riskmon.store.integrity import first_problems
    from riskmon.store.migrate import check_store, head_revision

    target = _store_url(app, url)
    with opened_store(target) as engine:
        checks = check_store(engine)
    click.echo(f"metric store {mask_url(target)} (riskmon {__version__} needs {head_revision()}):")
    for check in checks:
        if check.skipped:
            click.echo(f"  skipped  {check.what}: {check.skipped}")
        elif check.problems:
            click.echo(f"  FAILED   {check.what}:")
            for problem in check.problems[:SHOWN_PROBLEMS]:
                click.echo(f"             {problem}")
            if len(check.problems) > SHOWN_PROBLEMS:
                click.echo(f"             and {len(check.problems) - SHOWN_PROBLEMS} more")
        else:
            click.echo(f"  ok       {check.what}")
    failed = [check for check in checks if check.problems]
    if failed:
        raise StoreError(
            f"metric store {mask_url(target)}: {len(failed)} of {len(checks)} checks failed, "
            f"the first: {failed[0].what}: {first_problems(failed[0].problems)}"
        )
    click.echo(f"metric store {mask_url(target)}: sound ({len(checks)} checks passed)")
