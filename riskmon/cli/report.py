"""``riskmon report``: write run reports and the index from the metric store."""

from __future__ import annotations

import datetime as dt

import click

from riskmon.cli._app import _App, _store
from riskmon.cli._dates import DATE, check_not_future


@click.command("report")
@click.argument("model", required=False)
@click.option(
    "--as-of",
    "as_of",
    type=DATE,
    default=None,
    help="The runs' as-of date (YYYY-MM-DD). Default: each model's newest run.",
)
@click.option("--index-only", is_flag=True, help="Only rewrite the index of every model.")
@click.pass_obj
def report_command(app: _App, model: str | None, as_of: dt.date | None, index_only: bool) -> None:
    """Write the HTML report of MODEL's run (default: of every model's), and the index.

    Reports go to store.reports_dir: <model>/<as-of date>.html and index.html. Each written
    path is printed. Without MODEL, a model with no run (as of --as-of) is skipped and said so
    on stderr; no run at all is an error (exit 2), as it is for a MODEL.
    """
    from riskmon.report import NoRunError, render_index, render_run_report

    if index_only and (model is not None or as_of is not None):
        raise click.UsageError("--index-only takes no MODEL and no --as-of")
    config = app.config(sources=False)
    check_not_future(config, as_of=as_of)
    day = as_of
    with _store(app) as store:
        if model is not None:
            click.echo(str(render_run_report(config, store, model, day)))
        elif not index_only:
            written = 0
            for each in config.models:
                try:
                    click.echo(str(render_run_report(config, store, each.name, day)))
                    written += 1
                except NoRunError as exc:
                    click.echo(f"riskmon report: {exc}: skipped", err=True)
            if not written:
                when = f" as of {day}" if day else ""
                raise NoRunError(f"no model has a run{when} in the metric store")
        click.echo(str(render_index(config, store)))
