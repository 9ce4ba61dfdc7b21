"""``riskmon report``: write a model's run report and the index from the metric store."""

from __future__ import annotations

import datetime as dt

import click

from riskmon.cli._app import _App, _store


@click.command("report")
@click.argument("model", required=False)
@click.option(
    "--as-of",
    "as_of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="The run's as-of date (YYYY-MM-DD). Default: MODEL's newest run.",
)
@click.option("--index-only", is_flag=True, help="Only rewrite the index of every model.")
@click.pass_obj
def report_command(
    app: _App, model: str | None, as_of: dt.datetime | None, index_only: bool
) -> None:
    """Write the HTML report of MODEL's run, and the index of every model.

    Reports go to store.reports_dir: <model>/<as-of date>.html and index.html. Each written
    path is printed.
    """
    from riskmon.report import render_index, render_run_report

    if index_only and (model is not None or as_of is not None):
        raise click.UsageError("--index-only takes no MODEL and no --as-of")
    if not index_only and model is None:
        raise click.UsageError("give a MODEL, or --index-only")
    config = app.config(sources=False)
    with _store(app) as store:
        if model is not None:
            day = as_of.date() if as_of is not None else None
            click.echo(str(render_run_report(config, store, model, day)))
        click.echo(str(render_index(config, store)))
