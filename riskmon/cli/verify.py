"""``riskmon verify``: recompute a stored run and compare it figure by figure."""

from __future__ import annotations

import datetime as dt

import click

from riskmon.cli._app import _App, _store
from riskmon.cli._dates import DATE, check_not_future

#: exit status when the recomputed figures differ from the stored ones
EXIT_DIFFERENT = 1


@click.command("verify")
@click.argument("model")
@click.option("--as-of", "as_of", type=DATE, required=True, help="The run's as-of date.")
@click.option(
    "--from-store",
    is_flag=True,
    help="Recompute from the run's stored count tables alone (no source is read).",
)
@click.pass_obj
def verify_command(app: _App, model: str, as_of: dt.date, from_store: bool) -> None:
    """Recompute MODEL's run as of --as-of and compare its figures with the stored ones.

    Without --from-store, the run is recomputed from the source as it is now (the run's
    windows, the baseline it was compared with, the configuration as it is now); nothing is
    stored. Exit 0 when every figure agrees (relative tolerance 1e-9), else 1, listing the
    figures that differ and whether the source's rows (counts per window), the configuration
    or riskmon's version changed. With --from-store, the figures are recomputed from the
    count tables the run stored; families whose figures the stored tables do not determine
    are named, with what they would need.
    """
    from riskmon.verify import verify_from_store, verify_run

    config = app.config(sources=not from_store)
    check_not_future(config, as_of=as_of)
    chosen = config.model(model)
    with _store(app) as store:
        if from_store:
            found = verify_from_store(chosen, as_of, store=store)
            for line in found.lines():
                click.echo(line)
            if not found.identical:
                raise click.exceptions.Exit(EXIT_DIFFERENT)
            return
        result = verify_run(chosen, as_of, store=store)
    if result.identical:
        click.echo(
            f"{model} as of {as_of}: identical — {result.compared} figure(s) recomputed from "
            "the source as it is now agree with the stored run"
        )
        return
    click.echo(f"{model} as of {as_of}: {len(result.differences)} figure(s) differ")
    for difference in result.differences:
        click.echo(f"  {difference.line()}")
    click.echo("because:")
    for cause in result.causes():
        click.echo(f"  {cause}")
    raise click.exceptions.Exit(EXIT_DIFFERENT)
