"""``riskmon export``: a stored run's figures laid out as the ECB's validation reporting."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from riskmon.cli._app import _App, _store
from riskmon.cli._dates import DATE, check_not_future

#: riskmon.export.FORMATS, written out so that the CLI starts without importing the export
_FORMATS = ("xlsx", "csv")


@click.command("export")
@click.argument("model")
@click.option(
    "--as-of",
    "as_of",
    type=DATE,
    default=None,
    help="The run's as-of date (YYYY-MM-DD). Default: the model's newest succeeded run.",
)
@click.option(
    "--format",
    "export_format",
    type=click.Choice(_FORMATS),
    default="xlsx",
    show_default=True,
    help="xlsx: one workbook (needs the riskmon[xlsx] extra); csv: a folder, a file per sheet.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write it. Default: store.reports_dir/<model>/<as-of>-ecb.xlsx (csv: a "
    "folder <as-of>-ecb).",
)
@click.pass_obj
def export_command(
    app: _App, model: str, as_of: dt.date | None, export_format: str, output: Path | None
) -> None:
    """Write MODEL's stored run as the ECB's validation reporting lays it out.

    One sheet per area of the ECB's Instructions for reporting the validation results of
    internal models (IRB, February 2019) that the model's kind reports (PD 2.5; LGD 2.6, ELBE
    2.7, LGD in-default 2.8; CCF 2.9), each section under its number; a first sheet with the
    run's identity and what each column is; a last one with the figures no section shows.
    Reads the metric store only. The written path is printed; an unknown model or a date
    without a succeeded run is an error (exit 2) and writes nothing.
    """
    from riskmon.export import export_kind, export_run
    from riskmon.report import model_folder

    config = app.config(sources=False)
    check_not_future(config, as_of=as_of)
    configured = {m.name: m for m in config.models}
    found = configured.get(model)
    kind = export_kind(found.kind, found.backtest.estimate) if found is not None else None
    with _store(app) as store:
        if output is None:
            from riskmon.export import find_run

            run = find_run(store, model, as_of)
            suffix = ".xlsx" if export_format == "xlsx" else ""
            name = f"{run.as_of.isoformat()}-ecb{suffix}"
            output = config.store.reports_dir / model_folder(model) / name
        written = export_run(store, model, as_of, output, format=export_format, kind=kind)
    click.echo(str(written))
