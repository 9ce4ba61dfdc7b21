"""``riskmon review`` appends a validator's review of a run; ``riskmon reviews`` lists the
RED runs still without one."""

from __future__ import annotations

import datetime as dt

import click

from riskmon.cli._app import _App, _store
from riskmon.cli._dates import DATE, check_not_future

#: the decisions a review records (riskmon.store.models.REVIEW_DECISIONS)
DECISIONS = ("accepted", "action-required", "escalated")


@click.command("review")
@click.argument("model")
@click.option("--as-of", "as_of", type=DATE, required=True, help="The run's as-of date.")
@click.option("--decision", type=click.Choice(DECISIONS), required=True, help="The decision.")
@click.option("--by", "reviewer", required=True, help="The reviewer's name.")
@click.option(
    "--assessment",
    type=click.IntRange(1, 4),
    default=None,
    help="The ECB's four-level assessment: 1 no deficiencies, 2 minor, 3 major, 4 severe.",
)
@click.option("--note", default=None, help="What the reviewer found or asks for.")
@click.pass_obj
def review_command(
    app: _App,
    model: str,
    as_of: dt.date,
    decision: str,
    reviewer: str,
    assessment: int | None,
    note: str | None,
) -> None:
    """Append a review of MODEL's run as of --as-of to the metric store.

    A review is never changed or deleted: a later review of the same run supersedes it in the
    report and the index, and both stay in the run's history of reviews. The run's report and
    the index are rewritten to show it.
    """
    from riskmon.report import NoRunError, render_index, render_run_report

    config = app.config(sources=False)
    check_not_future(config, as_of=as_of)
    config.model(model)
    with _store(app) as store:
        run = store.run(model, as_of)
        if run is None:
            raise NoRunError(f"model {model!r} has no run as of {as_of} to review")
        stored = store.add_review(
            run.id, decision=decision, reviewer=reviewer, assessment=assessment, note=note
        )
        render_run_report(config, store, model, as_of)
        render_index(config, store)
    what = f"{stored.decision}" + (f", assessment {stored.assessment_text}" if assessment else "")
    click.echo(
        f"{model} as of {as_of}: review {stored.id} by {stored.reviewer} stored "
        f"({what}, {stored.reviewed_at:%Y-%m-%d %H:%M} UTC)"
    )


@click.command("reviews")
@click.argument("model", required=False)
@click.pass_obj
def reviews_command(app: _App, model: str | None) -> None:
    """List the RED runs (of MODEL, default every model) that no review has answered yet."""
    from riskmon.report import open_red_runs

    config = app.config(sources=False)
    names = [model] if model is not None else [m.name for m in config.models]
    with _store(app) as store:
        open_runs = [run for name in names for run in open_red_runs(store, name)]
    if not open_runs:
        click.echo("no RED run is waiting for a review")
        return
    for run in open_runs:
        click.echo(f"{run.model}  {run.as_of}  RED  no review  (run {run.id})")
