"""``riskmon thresholds``: the threshold register of a model."""

from __future__ import annotations

import click

from riskmon.cli._app import _App


@click.command("thresholds")
@click.argument("model")
@click.pass_obj
def thresholds_command(app: _App, model: str) -> None:
    """Print MODEL's threshold register: each rule, its configuration key and levels, and
    their rationale, source and approval, or "riskmon default" for levels left at riskmon's
    defaults (undocumented levels that are configured say so)."""
    from riskmon.report import threshold_register

    chosen = app.config(sources=False).model(model)
    for entry in threshold_register(chosen):
        click.echo(f"{entry.rule}  ({entry.key})")
        click.echo(f"  levels: {entry.levels}")
        for name, value in entry.fields():
            click.echo(f"  {name}: {value}")
