"""``riskmon history``: a model's figures over its runs, as a table, CSV or JSON.

Every figure column is labelled with the population it was measured on — the *current*
population (loans scored in the stability window ending at the as-of date) or the
*performance* cohort (loans scored one performance window earlier, whose outcomes have
matured) — and each row gives both populations' score dates, as the run recorded them. A name
that is not known (a figure, variable, segment, or a figure in a population it is not made
for) is a usage error listing the known ones, never a table of n/a.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from riskmon.cli._app import _App, _store

if TYPE_CHECKING:
    from riskmon.config import ModelKind
    from riskmon.store import MetricStore, RunRecord

#: riskmon.records.SCORE, CURRENT and PERFORMANCE, written out so that the CLI starts fast
_SCORE, _CURRENT, _PERFORMANCE = "score", "current", "performance"
#: what the table calls each population: a PD model's, and a back-tested (LGD, CCF, EAD) one's
_POPULATION_LABEL = {_CURRENT: "current", _PERFORMANCE: "cohort"}
_BACKTEST_LABEL = {_CURRENT: "current", _PERFORMANCE: "observed"}
_CAPTION = (
    "current: loans scored in the stability window ending at as_of; cohort: the "
    "performance cohort, scored one performance window earlier, outcomes matured"
)
_BACKTEST_CAPTION = (
    "observed: the facilities dated in the observation window ending at as_of, estimates "
    "against realised values"
)


@dataclass(frozen=True)
class _Column:
    """One figure column: a figure of one variable in one population."""

    figure: str
    variable: str
    population: str
    count: bool  # shown as a whole number

    @property
    def key(self) -> str:
        """``current.psi``, ``performance.ks``, ``current.csi[income]``."""
        name = self.figure if self.variable in ("", _SCORE) else f"{self.figure}[{self.variable}]"
        return f"{self.population}.{name}"

    def header(self, labels: dict[str, str]) -> str:
        name = self.key.split(".", 1)[1]
        return f"{name}\n({labels[self.population]})"

    def shown(self, value: float | None) -> float | int | None:
        return None if value is None else round(value) if self.count else value


def _known(names: Iterable[str]) -> str:
    shown = sorted({n for n in names if n}) or ["none"]
    return ", ".join(shown)


def _bad(option: str, message: str) -> click.BadParameter:
    return click.BadParameter(message, param_hint=f"'{option}'")


def _chosen_column(
    figure: str,
    variable: str | None,
    population: str | None,
    segment: str,
    stored: set[tuple[str, str, str, str]],
    configured: Sequence[str],
) -> _Column:
    """The one column ``--figure`` asks for, after checking every name against the catalog
    and against what the model's runs stored."""
    from riskmon.figures import CATALOG

    specs = [s for s in CATALOG.figures if s.name == figure]
    if not specs:
        known = _known(s.name for s in CATALOG.figures)
        raise _bad("--figure", f"unknown figure {figure!r} (known: {known})")
    made_for = {s.population for s in specs}
    if population is not None and population not in made_for:
        raise _bad("--population", f"{figure} is measured on the {_known(made_for)} population")
    default = CATALOG.default_population(figure, _PERFORMANCE)
    chosen = population or (default if default in made_for else specs[0].population)
    spec = next(s for s in specs if s.population == chosen)
    in_runs = {(v, g) for f, p, v, g in stored if (f, p) == (figure, chosen)}
    if spec.scope == "variable":
        # the variables its runs stored it for (a challenger's figures: the challengers; a
        # grade's: the grades); before any run, the names the configuration gives variables
        names = {v for v, _ in in_runs} if stored else set(configured)
        if stored and not names:
            raise _bad("--figure", f"{figure} is stored for no variable in the model's runs")
        if variable is None:
            raise _bad(
                "--variable",
                f"--figure {figure} is measured per variable: give --variable "
                f"(one of: {_known(names)})",
            )
        if variable not in names:
            raise _bad("--variable", f"unknown variable {variable!r} (known: {_known(names)})")
    elif variable is None:
        variable = _SCORE if any(v == _SCORE for v, _ in in_runs) or figure == "psi" else ""
    elif classes := {v for v, _ in in_runs if v and v != _SCORE}:
        # a figure of the whole score stored per class too (a back-test's grades)
        if variable not in classes:
            raise _bad("--variable", f"unknown variable {variable!r} (known: {_known(classes)})")
    elif variable != _SCORE or figure != "psi":
        raise _bad(
            "--variable",
            f"{figure} is measured on the whole score, not per variable: leave out --variable",
        )
    if stored and segment and (variable, segment) not in in_runs:
        segments = {g for v, g in in_runs if v == variable}
        raise _bad(
            "--segment",
            f"{figure} is not stored for segment {segment!r} (stored for: {_known(segments)})",
        )
    return _Column(figure, variable, chosen, spec.count)


def _default_columns(kind: ModelKind) -> list[_Column]:
    from riskmon.figures import CATALOG

    counts = {(s.name, s.population) for s in CATALOG.figures if s.count}
    return [
        _Column(c.figure, c.variable, c.population, (c.figure, c.population) in counts)
        for c in CATALOG.for_kind(kind).history
    ]


def _window(run: RunRecord, population: str) -> tuple[str | None, str | None]:
    window = (run.plan or {}).get(population)
    return (str(window[0]), str(window[1])) if window else (None, None)


def _status(store: MetricStore, run: RunRecord, variable: str | None, segment: str) -> str:
    from riskmon.records import Status

    return Status.worst(
        a.status
        for a in store.alerts(run.id)
        if (variable is None or a.variable == variable) and (not segment or a.segment == segment)
    )


@click.command("history")
@click.argument("model")
@click.option("--figure", default=None, help="One figure (ks, auc, gini, psi, csi, iv, ...).")
@click.option("--variable", default=None, help="Its variable (a characteristic; 'score' for psi).")
@click.option("--segment", default="", help="A segment such as channel=web. Default: everyone.")
@click.option(
    "--population",
    type=click.Choice([_CURRENT, _PERFORMANCE]),
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
@click.option(
    "--fingerprint",
    is_flag=True,
    help="Add each run's configuration fingerprint (what changed shows in its report).",
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
    fingerprint: bool,
) -> None:
    """Print MODEL's figures over its succeeded runs, oldest first.

    Each figure is labelled with its population: "current" (loans scored in the stability
    window ending at the as-of date) or the performance cohort (loans scored one performance
    window earlier, with matured outcomes); each row shows both windows. The status is the
    run's, or with --variable (--segment) that of the alerts on that variable (segment).
    """
    config = app.config(sources=False)
    chosen = config.model(model)
    if figure is None and (variable is not None or population is not None):
        raise _bad("--figure", "--variable and --population choose among one figure's values")
    with _store(app) as store:
        stored = store.figure_keys(chosen.name)
        segments = {g for *_, g in stored}
        if segment and stored and segment not in segments:
            raise _bad("--segment", f"unknown segment {segment!r} (known: {_known(segments)})")
        # the names the configuration gives variables: characteristics, challengers
        configured = [c.name for c in chosen.characteristics]
        configured += [c.label for c in chosen.challengers]
        if figure is None:
            # a family the model does not use (migrations, say) stores no figure: no column
            names = {(name, population) for name, population, *_ in stored}
            columns = [
                c
                for c in _default_columns(chosen.kind)
                if not names or (c.figure, c.population) in names
            ]
        else:
            columns = [_chosen_column(figure, variable, population, segment, stored, configured)]
        values = {
            c: {
                p.as_of: p.value
                for p in store.history(
                    chosen.name,
                    c.figure,
                    variable=c.variable,
                    segment=segment,
                    population=c.population,
                )
            }
            for c in columns
        }
        runs = [r for r in store.runs(chosen.name) if r.status == "succeeded"]
        rows = [_row(store, run, columns, values, variable, segment) for run in runs]
    if fingerprint:
        for row, run in zip(rows, runs, strict=True):
            row["config_fingerprint"] = run.config_hash
    whose = " ".join(filter(None, [variable, segment]))
    title = f"{chosen.name}{f' ({segment})' if segment else ''}"
    _print(rows, columns, fmt, title=title, whose=whose, backtested=chosen.kind != "pd")


def _row(
    store: MetricStore,
    run: RunRecord,
    columns: Sequence[_Column],
    values: dict[_Column, dict[Any, float | None]],
    variable: str | None,
    segment: str,
) -> dict[str, Any]:
    row: dict[str, Any] = {"as_of": run.as_of.isoformat()}
    row["status"] = str(_status(store, run, variable, segment))
    for population in dict.fromkeys(c.population for c in columns):
        start, end = _window(run, population)
        row[f"{population}.from"], row[f"{population}.to"] = start, end
        for column in (c for c in columns if c.population == population):
            row[column.key] = column.shown(values[column].get(run.as_of))
    return row


def _print(
    rows: list[dict[str, Any]],
    columns: Sequence[_Column],
    fmt: str,
    *,
    title: str,
    whose: str,
    backtested: bool = False,
) -> None:
    """The rows as JSON, CSV or a table (headers say each figure's population)."""
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["as_of", "status"])
        writer.writeheader()
        writer.writerows(rows)
        click.echo(out.getvalue(), nl=False)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, caption=_BACKTEST_CAPTION if backtested else _CAPTION)
    shown = _table_columns(columns, whose, _BACKTEST_LABEL if backtested else _POPULATION_LABEL)
    if rows and "config_fingerprint" in rows[0]:
        shown.insert(2, ("config\nfingerprint", False, lambda row: row["config_fingerprint"][:12]))
    for header, right, _ in shown:
        table.add_column(header, justify="right" if right else "left")
    for row in rows:
        table.add_row(*(cell(row) for _, _, cell in shown))
    console = Console()  # a terminal's width, or $COLUMNS
    needed = Console(width=_UNBOUNDED).measure(table).maximum
    if not console.is_terminal and "COLUMNS" not in os.environ:
        # a file or a pipe has no width: the table's own, so that no cell is cut
        console = Console(width=needed)
    console.print(table)
    if needed > console.width:
        click.echo(
            f"(the table needs {needed} columns, {console.width} shown: choose one --figure, "
            f"or read it whole with --format csv)"
        )


def _table_columns(
    columns: Sequence[_Column], whose: str, labels: dict[str, str]
) -> list[tuple[str, bool, Callable[[dict[str, Any]], str]]]:
    """(header, right-aligned, cell) of each column of the table: as_of, status, then per
    population its score dates and its figures."""

    def window(population: str) -> Callable[[dict[str, Any]], str]:
        def cell(row: dict[str, Any]) -> str:
            start, end = row[f"{population}.from"], row[f"{population}.to"]
            return f"{start} to {end}" if start else "not recorded"

        return cell

    def figure(column: _Column) -> Callable[[dict[str, Any]], str]:
        return lambda row: _number(row[column.key])

    shown: list[tuple[str, bool, Callable[[dict[str, Any]], str]]] = [
        ("as_of", False, lambda row: str(row["as_of"])),
        (f"{whose}\nstatus" if whose else "status", False, lambda row: str(row["status"])),
    ]
    for population in dict.fromkeys(c.population for c in columns):
        dated = "scored" if labels is _POPULATION_LABEL else "dated"
        shown.append((f"{labels[population]}\n{dated}", False, window(population)))
        shown += [
            (c.header(labels), True, figure(c)) for c in columns if c.population == population
        ]
    return shown


#: a width no table reaches: the table is measured in it
_UNBOUNDED = 100_000
#: below this, a figure is shown in scientific notation (the report's p-values are too)
SMALL_FIGURE = 1e-3


def _number(value: float | int | None) -> str:
    """A figure as the report shows a p-value: four decimals, or four significant digits in
    scientific notation below 0.001 (``1e-18``, never ``0.0000``)."""
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}" if 0 < abs(value) < SMALL_FIGURE else f"{value:.4f}"
