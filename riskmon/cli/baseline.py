"""``riskmon baseline``: freeze the baselines runs are compared with, and show them."""

from __future__ import annotations

import click

from riskmon.cli._app import _App, _CliError, _show, _store
from riskmon.errors import EXIT_USAGE


@click.group()
def baseline() -> None:
    """Freeze and inspect the baselines runs are compared with."""


@baseline.command("freeze")
@click.argument("models", nargs=-1)
@click.option(
    "--force",
    is_flag=True,
    help="Freeze even a baseline whose AUC is significantly below 0.5 (a score that ranks "
    "bads as safer than goods, most often a reversed score_direction).",
)
@click.pass_obj
def baseline_freeze(app: _App, models: tuple[str, ...], force: bool) -> None:
    """Freeze a new baseline version of MODELS (default: every model).

    Fits the bins on the model's development window and stores its distributions and
    headline figures; later runs use this version, earlier runs keep theirs. Refuses (exit 2)
    a baseline whose AUC is significantly below 0.5 unless --force. Exits 4 when the store or
    a source cannot be reached, 3 when the loans cannot be frozen.
    """
    from riskmon.baseline import freeze
    from riskmon.collect import Source
    from riskmon.records import SCORE

    config = app.config()
    chosen = [config.model(name) for name in models] if models else config.models
    with _store(app) as store:
        for model in chosen:
            with Source(model) as source:
                frozen = freeze(model, source, store, force=force)
            ks, auc = frozen.figure("ks"), frozen.figure("auc")
            score_bins = len(frozen.variables[SCORE].binning.get("edges", [])) + 1
            click.echo(
                f"{model.name}: baseline version {frozen.version} frozen on "
                f"{frozen.window_start} to {frozen.window_end}: {frozen.n_rows} loans, "
                f"{frozen.n_bads} bads, {score_bins} score bins; "
                f"KS {_show(ks.value if ks else None)}, AUC {_show(auc.value if auc else None)}"
            )


@baseline.command("show")
@click.argument("model")
@click.pass_obj
def baseline_show(app: _App, model: str) -> None:
    """Show MODEL's newest baseline: window, the score's and characteristics' bins, and
    headline figures (riskmon's own tables of the score are not shown)."""
    from riskmon.records import is_internal_variable

    with _store(app) as store:
        frozen = store.latest_baseline(app.config(sources=False).model(model).name)
    if frozen is None:
        raise _CliError(
            f"model {model!r} has no baseline yet: run `riskmon baseline freeze`", EXIT_USAGE
        )
    frozen_at = f"{frozen.frozen_at:%Y-%m-%d %H:%M} UTC"
    window = f"{frozen.window_start} to {frozen.window_end}"
    click.echo(f"{frozen.model} baseline version {frozen.version}, frozen {frozen_at}")
    click.echo(f"  window {window}: {frozen.n_rows} loans, {frozen.n_bads} bads")
    for name, var in frozen.variables.items():
        if is_internal_variable(name):
            continue
        n_bins = len(set(var.bins.column("bin_index", range(len(var.bins))))) or "-"
        click.echo(f"  {name}: {var.kind}, {n_bins} bins")
    for figure in frozen.figures:
        if figure.segment or is_internal_variable(figure.variable):
            continue
        what = f"{figure.name}({figure.variable})" if figure.variable else figure.name
        click.echo(
            f"  {what} = {_show(figure.value)}" + (f" ({figure.reason})" if figure.reason else "")
        )
