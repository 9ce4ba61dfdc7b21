"""``riskmon config``: check the configuration and show what it describes."""

from __future__ import annotations

from pathlib import Path

import click

from riskmon.cli._app import _App
from riskmon.redact import mask_url


@click.group("config")
def config_group() -> None:
    """Inspect the configuration."""


@config_group.command("check")
@click.pass_obj
def config_check(app: _App) -> None:
    """Validate the configuration and print what it describes."""
    from riskmon.config import resolve_config_path
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
