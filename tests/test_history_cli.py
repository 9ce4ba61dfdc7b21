"""`riskmon history`: unknown names are usage errors listing the known ones; every figure says
which population it was measured on, with that population's score dates; counts are whole
numbers; with --variable the status is the variable's."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.figures import CATALOG, HistoryColumn
from riskmon.records import Status
from riskmon.store import MetricStore

from .collect.loans import load, loan_frame, model_config

AS_OF = ("2025-02-28", "2025-03-31")
#: the windows the model's plan gives each as-of date: 1-month stability window, cohort
#: scored 2 months before (README, "Windows")
WINDOWS = {
    "2025-02-28": (("2025-02-01", "2025-02-28"), ("2024-12-01", "2024-12-31")),
    "2025-03-31": (("2025-03-01", "2025-03-31"), ("2025-01-01", "2025-01-31")),
}
CHARACTERISTICS = ("income", "region", "grade")


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("history")
    source = f"sqlite:///{folder / 'loans.db'}"
    load(source, loan_frame(seed=11, n=8000))
    model = model_config(source, performance_window="2 months").model_dump(
        mode="json", by_alias=True
    )
    path = folder / "riskmon.yaml"
    path.write_text(yaml.safe_dump({"store": {"url": "sqlite:///store.db"}, "models": [model]}))
    assert CliRunner().invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    for as_of in AS_OF:
        result = CliRunner().invoke(cli, ["-c", str(path), "run", "--as-of", as_of])
        assert result.exit_code == 0, result.output
    return path


#: no $COLUMNS: the table is printed whole, at its own width, as to a file
WHOLE: dict[str, str | None] = {"COLUMNS": None}


def _history(config: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["-c", str(config), "history", "retail_pd", *args], env=WHOLE)
    return result.exit_code, result.output


def _rows(config: Path, *args: str) -> list[dict[str, Any]]:
    code, out = _history(config, *args, "--format", "json")
    assert code == 0, out
    return list(json.loads(out))


@pytest.mark.parametrize(
    ("args", "option", "says"),
    [
        (["--figure", "KS"], "--figure", "unknown figure 'KS' (known: accepted_bad_rate, "),
        (
            ["--figure", "csi"],
            "--variable",
            "--figure csi is measured per variable: give --variable (one of: grade, "
            "income, region)",
        ),
        (
            ["--figure", "csi", "--variable", "incme"],
            "--variable",
            "unknown variable 'incme' (known: grade, income, region)",
        ),
        (
            ["--figure", "ks", "--variable", "income"],
            "--variable",
            "ks is measured on the whole score, not per variable",
        ),
        (
            ["--figure", "ks", "--population", "current"],
            "--population",
            "ks is measured on the performance population",
        ),
        (
            ["--segment", "channel=post"],
            "--segment",
            "unknown segment 'channel=post' (known: channel IS NULL, channel=branch, channel=web)",
        ),
        (
            ["--figure", "csi", "--variable", "income", "--segment", "channel=web"],
            "--segment",
            "csi is not stored for segment 'channel=web' (stored for: none)",
        ),
        (["--population", "current"], "--figure", "--variable and --population choose among"),
    ],
)
def test_unknown_names_exit_2_listing_the_known_ones(
    config: Path, args: list[str], option: str, says: str
) -> None:
    code, out = _history(config, *args)
    assert code == 2, out
    assert f"Invalid value for '{option}': {says}" in " ".join(out.split())


def test_every_figure_is_labelled_with_its_population_and_its_dates(config: Path) -> None:
    rows = _rows(config)
    assert [r["as_of"] for r in rows] == list(AS_OF)
    for row in rows:
        (current, cohort) = WINDOWS[row["as_of"]]
        assert (row["current.from"], row["current.to"]) == current
        assert (row["performance.from"], row["performance.to"]) == cohort
    columns = _catalog_columns(config)
    populations = list(dict.fromkeys(c.population for c in columns))
    assert list(rows[0]) == [
        "as_of",
        "status",
        *(
            key
            for population in populations
            for key in (
                f"{population}.from",
                f"{population}.to",
                *(f"{population}.{c.figure}" for c in columns if c.population == population),
            )
        ),
    ]
    label = {"current": "current", "performance": "cohort"}
    code, table = _history(config)
    assert code == 0
    assert _headers(table) == [
        "as_of",
        "status",
        *(
            header
            for population in populations
            for header in (
                f"{label[population]} scored",
                *(
                    f"{c.figure} ({label[population]})"
                    for c in columns
                    if c.population == population
                ),
            )
        ),
    ]
    assert f"{WINDOWS[AS_OF[1]][1][0]} to {WINDOWS[AS_OF[1]][1][1]}" in table


def _catalog_columns(config: Path) -> list[HistoryColumn]:
    """The catalog's history columns, in order, of the families the model's runs store figures
    of (a model without migrations stores no figure of the migration family)."""
    store = MetricStore.open(f"sqlite:///{config.parent / 'store.db'}")
    try:
        run = store.latest_run("retail_pd")
        assert run is not None
        stored = {f.name for f in store.figures(run.id)}
    finally:
        store.engine.dispose()
    used = [
        c
        for family in CATALOG.for_kind("pd").families
        if stored & {f.name for f in family.figures}
        for c in family.history
    ]
    return sorted(used, key=lambda c: c.order)


def _headers(table: str) -> list[str]:
    """The column headers of a table printed by rich, each header's lines joined."""
    lines = [line.strip("┃").split("┃") for line in table.splitlines() if line.startswith("┃")]
    return [
        " ".join(part.strip() for part in column if part.strip())
        for column in zip(*lines, strict=True)
    ]


def test_counts_are_whole_numbers(config: Path) -> None:
    store = MetricStore.open(f"sqlite:///{config.parent / 'store.db'}")
    try:
        stored = {
            p.as_of.isoformat(): p.value
            for p in store.history("retail_pd", "n_rows", population="current")
        }
        breaks = store.history("retail_pd", "lift_order_breaks", population="performance")
    finally:
        store.engine.dispose()
    rows = _rows(config)
    assert [r["current.n_rows"] for r in rows] == [int(stored[d]) for d in AS_OF]
    assert all(type(r["current.n_rows"]) is int for r in rows)
    code, csv_out = _history(config, "--figure", "lift_order_breaks", "--format", "csv")
    assert code == 0
    values = [r["performance.lift_order_breaks"] for r in csv.DictReader(io.StringIO(csv_out))]
    assert values == [str(round(p.value)) for p in breaks if p.value is not None]
    code, table = _history(config, "--figure", "lift_order_breaks")
    assert ".0000" not in table


def test_with_a_variable_the_status_is_the_variables(config: Path) -> None:
    store = MetricStore.open(f"sqlite:///{config.parent / 'store.db'}")
    try:
        runs = {r.as_of.isoformat(): r for r in store.runs("retail_pd")}
        alerts = {d: store.alerts(r.id) for d, r in runs.items()}
    finally:
        store.engine.dispose()

    def worst(day: str, variable: str | None = None) -> str:
        return str(Status.worst(a.status for a in alerts[day] if variable in (None, a.variable)))

    differs = [v for v in CHARACTERISTICS if any(worst(d, v) != worst(d) for d in AS_OF)]
    assert differs, "the test needs a characteristic whose status is not the run's"
    for variable in CHARACTERISTICS:
        rows = _rows(config, "--figure", "csi", "--variable", variable)
        assert [r["status"] for r in rows] == [worst(d, variable) for d in AS_OF], variable
    assert [r["status"] for r in _rows(config, "--figure", "ks")] == [worst(d) for d in AS_OF]


# --------------------------------------------------------------------------- display


def test_the_table_takes_the_terminals_width_and_says_what_does_not_fit(config: Path) -> None:
    narrow = CliRunner().invoke(cli, ["-c", str(config), "history", "retail_pd"],
                                env={"COLUMNS": "60"})  # fmt: skip
    assert narrow.exit_code == 0, narrow.output
    lines = narrow.output.splitlines()
    assert max(len(line) for line in lines[:-1]) <= 60
    assert lines[-1].startswith("(the table needs ")
    assert lines[-1].split(" columns, ")[1].startswith("60 shown")
    # a file or a pipe (no terminal, no $COLUMNS): the table's own width, no cell cut
    whole = CliRunner().invoke(cli, ["-c", str(config), "history", "retail_pd"], env=WHOLE)
    assert whole.exit_code == 0, whole.output
    assert "…" not in whole.output
    assert "(the table needs" not in whole.output
    for row in _rows(config):
        assert f"{row['current.n_rows']}" in whole.output


@pytest.mark.parametrize("value", [1e-18, 4.977e-19, 0.000999, 0.001, 0.0362, 0.5, 0.0, 1.0])
def test_figures_are_shown_as_the_report_shows_p_values(value: float) -> None:
    from riskmon.cli.history import _number
    from riskmon.report.render import environment

    assert _number(value) == environment().filters["param"](value)
    assert _number(value) != "0.0000" or value == 0


def test_a_tiny_p_value_is_not_shown_as_zero(config: Path) -> None:
    store = MetricStore.open(f"sqlite:///{config.parent / 'store.db'}")
    try:
        points = store.history("retail_pd", "jeffreys_p", population="performance")
    finally:
        store.engine.dispose()
    code, table = _history(config, "--figure", "jeffreys_p")
    assert code == 0, table
    for point in points:
        assert point.value is not None
        shown = f"{point.value:.4g}" if point.value < 1e-3 else f"{point.value:.4f}"
        assert shown in table


@pytest.fixture(scope="module")
def with_challenger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model with a challenger (its income, named alt) and one run."""
    folder = tmp_path_factory.mktemp("challenger")
    source = f"sqlite:///{folder / 'loans.db'}"
    load(source, loan_frame(seed=12, n=4000))
    model = model_config(
        source, performance_window="2 months", challengers=[{"column": "income", "name": "alt"}]
    ).model_dump(mode="json", by_alias=True)
    path = folder / "riskmon.yaml"
    path.write_text(yaml.safe_dump({"store": {"url": "sqlite:///store.db"}, "models": [model]}))
    assert CliRunner().invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    result = CliRunner().invoke(cli, ["-c", str(path), "run", "--as-of", AS_OF[1]])
    assert result.exit_code in (0, 1), result.output
    return path


@pytest.mark.parametrize("figure", ["challenger_auc", "challenger_delong_p", "challenger_n"])
def test_a_challengers_figure_suggests_the_challengers(with_challenger: Path, figure: str) -> None:
    code, out = _history(with_challenger, "--figure", figure)
    assert code == 2, out
    assert "give --variable (one of: alt)" in " ".join(out.split())
    code, out = _history(with_challenger, "--figure", figure, "--variable", "income")
    assert code == 2, out
    assert "unknown variable 'income' (known: alt)" in " ".join(out.split())
    code, out = _history(with_challenger, "--figure", figure, "--variable", "alt")
    assert code == 0, out


def test_a_figure_the_runs_never_stored_says_so(config: Path) -> None:
    code, out = _history(config, "--figure", "challenger_auc")
    assert code == 2, out
    assert "challenger_auc is stored for no variable in the model's runs" in " ".join(out.split())
