"""``riskmon demo``: build the synthetic demo book, its configuration, store and reports."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import click

from riskmon.cli.runs import EXIT_RUN_FAILED
from riskmon.heap import set_aside_imports


def _model_line(model: dict[str, Any]) -> str:
    """What one of the demo's models is, from its configuration."""
    columns, calibration = model["columns"], model.get("calibration", {})
    parts = [f"score {columns['score']} ({model['score_direction'].replace('_', ' ')})"]
    if columns.get("weight"):
        parts.append(f"weighted by {columns['weight']}")
    if "grades" in calibration:
        parts.append("a master scale")
    if "cutoff" in calibration:
        parts.append(f"a cut-off at {calibration['cutoff']}")
    parts += [f"challenger {c['name']}" for c in model.get("challengers", [])]
    if model.get("rating", {}).get("migration"):
        parts.append("rating migrations")
    return ", ".join(parts)


class _DemoCommand(click.Command):
    """The demo command, whose help lists the demo's models as its configuration has them
    (read only when that help is asked for: ``riskmon --help`` stays fast)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        from riskmon.demo import DEMO_RUNS, demo_config

        models: list[dict[str, Any]] = demo_config(Path("."))["models"]  # type: ignore[assignment]
        first, last = DEMO_RUNS
        with formatter.section(f"Its {len(models)} models, run monthly from {first} to {last}"):
            formatter.write_dl([(m["name"], _model_line(m)) for m in models])


@click.command("demo", cls=_DemoCommand)
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("riskmon-demo"),
    show_default=True,
    help="Folder for the demo's loans, configuration, store and reports.",
)
def demo_command(folder: Path) -> None:
    """Build a demo: synthetic books of scored loans and re-rated accounts, its models, a year
    of monthly runs and their reports.

    The models below are monitored monthly, as of month ends, while the population drifts,
    the behavioural PD model degrades, the broker channel turns bad and the accounts' ratings
    move farther. Prints the path of the reports' index.
    """
    from riskmon.demo import run_demo

    set_aside_imports()  # the demo reads no configuration file (riskmon.heap)
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
