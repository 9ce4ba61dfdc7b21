"""``riskmon history``: a model's figures over its runs, as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json

import click

from riskmon.cli._app import _App, _show, _store


@click.command("history")
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
    from riskmon.figures import CATALOG  # the catalog says which columns and populations
    from riskmon.records import SCORE, Status

    name = app.config(sources=False).model(model).name
    with _store(app) as store:
        runs = {r.as_of: r for r in store.runs(name) if r.status == "succeeded"}
        if figure is None:
            columns = [
                (
                    f"{c.figure}[{c.variable}]" if c.variable not in ("", SCORE) else c.figure,
                    c.figure,
                    c.variable,
                    c.population,
                )
                for c in CATALOG.history
            ]
        else:
            var = variable if variable is not None else (SCORE if figure == "psi" else "")
            pop = population or CATALOG.default_population(figure, "performance")
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
