"""``riskmon demo``: build the synthetic demo book, its configuration, store and reports."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from riskmon.cli.runs import EXIT_RUN_FAILED


@click.command("demo")
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("riskmon-demo"),
    show_default=True,
    help="Folder for the demo's loans, configuration, store and reports.",
)
def demo_command(folder: Path) -> None:
    """Build a demo: a synthetic book of 200,000+ scored loans, two models, a year of runs.

    An application scorecard (points, higher is safer) and a behavioural PD model are
    monitored monthly through 2024 while the population drifts, the PD model degrades and the
    broker channel turns bad. Prints the path of the reports' index.
    """
    from riskmon.demo import run_demo

    result = run_demo(folder)
    by_model = Counter((o.model, o.alert_status) for o in result.outcomes if o.ok)
    failed = [o for o in result.outcomes if not o.ok]
    click.echo(f"{result.n_loans:,} loans in {result.folder / 'loans.db'}")
    for model in dict.fromkeys(o.model for o in result.outcomes):
        tally = ", ".join(
            f"{n} {status}" for (m, status), n in sorted(by_model.items()) if m == model
        )
        click.echo(f"{model}: {tally}")
    for outcome in failed:
        click.echo(f"{outcome.model} as of {outcome.as_of}: failed: {outcome.error}")
    click.echo(f"configuration: {result.config_path}")
    click.echo(f"reports: {result.index_path}")
    if failed:
        raise SystemExit(EXIT_RUN_FAILED)
