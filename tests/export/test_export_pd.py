"""``riskmon export`` of the demo's PD runs (and of its LGD run), read back with openpyxl and as
CSV files, each cell against the figure or bin the metric store holds."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scipy import stats

from riskmon.cli import cli
from riskmon.records import FigureRecord
from riskmon.store import MetricStore, RunRecord

from .sheets import Block, blocks, csv_rows, same, segment, workbook_rows

AS_OF = dt.date(2024, 12, 31)
#: every figure the PD sheet shows, named here apart from the export's own table
PD_FIGURES = {
    "n_rows", "n_bads", "bad_rate", "calibration_n", "calibration_defaults", "mean_pd",
    "default_rate", "jeffreys_p", "jeffreys_p_exposure", "grade_jeffreys_p", "auc",
    "auc_test_p", "migration_rerated", "migration_mwb_upper", "migration_mwb_lower",
    "migration_within_one", "migration_stability_p", "rating_herfindahl",
    "rating_concentration_p", "rating_herfindahl_exposure",
}  # fmt: skip


def _export(folder: Path, *args: str) -> Any:
    config = str(folder / "riskmon.yaml")
    return CliRunner().invoke(cli, ["-c", config, "export", *args])


@pytest.fixture(scope="module")
def demo_run(demo: tuple[Path, str]) -> tuple[Path, RunRecord, dict[Any, FigureRecord], Any]:
    folder, _ = demo
    store = MetricStore.open(f"sqlite:///{folder / 'riskmon.db'}")
    run = store.run("behaviour_rating", AS_OF)
    assert run is not None
    figures = {(f.name, f.variable, f.segment): f for f in store.figures(run.id)}
    bins = store.bins(run.id)
    store.engine.dispose()
    return folder, run, figures, bins


@pytest.fixture(scope="module")
def workbook(demo_run: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    folder = demo_run[0]
    out = tmp_path_factory.mktemp("export") / "rating.xlsx"
    result = _export(folder, "behaviour_rating", "--as-of", AS_OF.isoformat(), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [str(out)]
    return workbook_rows(out)


def _section(pd_rows: list[Any], number: str, title_word: str = "") -> Block:
    return next(b for b in blocks(pd_rows) if b.number == number and title_word in b.title)


def test_the_workbook_has_the_pd_sections_numbered(workbook: dict[str, list[Any]]) -> None:
    assert list(workbook) == ["About", "PD", "Other figures"]
    assert workbook["PD"][0] == ("2.5 Probability of default",)
    numbers = [b.number for b in blocks(workbook["PD"])]
    assert numbers == [
        "2.5.1", "2.5.2", "2.5.3.1", "2.5.4.1", "2.5.5.1", "2.5.5.2", "2.5.5.2", "2.5.5.3"
    ]  # fmt: skip
    for block in blocks(workbook["PD"]):
        assert block.rows, block.number
        assert all(r[0] == block.number for r in block.raw)
        assert not any(str(r[1]).startswith("not available") for r in block.raw)


def test_jeffreys_per_grade_and_portfolio_are_the_stored_figures(
    workbook: dict[str, list[Any]], demo_run: Any
) -> None:
    _, _, figures, _ = demo_run
    block = _section(workbook["PD"], "2.5.3.1")
    graded = [k for k in figures if k[0] == "grade_jeffreys_p"]
    assert len([r for r in block.rows if r["grade"] != "portfolio"]) == len(graded)
    for row in block.rows:
        seg = segment(row["segment"])
        if row["grade"] == "portfolio":
            for header, name in [
                ("N", "calibration_n"),
                ("defaults", "calibration_defaults"),
                ("mean PD", "mean_pd"),
                ("default rate", "default_rate"),
                ("Jeffreys p", "jeffreys_p"),
                ("Jeffreys p by exposure", "jeffreys_p_exposure"),
            ]:
                assert same(row[header], figures[(name, "", seg)].value), (header, seg)
            continue
        grade = figures[("grade_jeffreys_p", row["grade"], seg)]
        assert same(row["Jeffreys p"], grade.value)
        assert row["N"] == grade.params["n"]
        assert row["defaults"] == grade.params["defaults"]
        assert same(row["mean PD"], grade.params["mean_pd"])
        assert same(row["default rate"], grade.params["default_rate"])
        # the row's own N, D and mean PD give its p-value (ECB: BETA.DIST(PD, D+½, N−D+½))
        n, d = row["N"], row["defaults"]
        assert row["Jeffreys p"] == pytest.approx(
            stats.beta.cdf(row["mean PD"], d + 0.5, n - d + 0.5), abs=1e-9
        )
    # grades best first within each segment, the portfolio last
    whole = [r["grade"] for r in block.rows if r["segment"] == "(all)"]
    assert whole[-1] == "portfolio"
    assert whole[:-1] == [b.label for b in sorted(
        (b for b in demo_run[3] if b.variable == "calibration" and b.segment == ""),
        key=lambda b: b.bin_index,
    )]  # fmt: skip


def test_auc_concentration_and_migration_sections_are_the_stored_figures(
    workbook: dict[str, list[Any]], demo_run: Any
) -> None:
    _, _, figures, _ = demo_run
    expected = {
        "2.5.1": [
            ("N", "n_rows", None),
            ("defaults", "n_bads", None),
            ("default rate", "bad_rate", None),
        ],
        "2.5.4.1": [
            ("AUC", "auc", None),
            ("initial AUC", "auc_test_p", "initial_auc"),
            ("s", "auc_test_p", "std_error"),
            ("S", "auc_test_p", "statistic"),
            ("p-value", "auc_test_p", None),
        ],
        "2.5.5.1": [
            ("re-rated", "migration_rerated", None),
            ("MWB upper", "migration_mwb_upper", None),
            ("MWB upper at baseline", "migration_mwb_upper", "baseline"),
            ("MWB lower", "migration_mwb_lower", None),
            ("MWB lower at baseline", "migration_mwb_lower", "baseline"),
            ("within one grade", "migration_within_one", None),
        ],
        "2.5.5.3": [
            ("HI", "rating_herfindahl", None),
            ("HI at baseline", "rating_herfindahl", "baseline"),
            ("p-value", "rating_concentration_p", None),
            ("HI by exposure", "rating_herfindahl_exposure", None),
        ],
    }
    segments = {k[2] for k in figures}
    for number, columns in expected.items():
        block = _section(workbook["PD"], number)
        assert {segment(r["segment"]) for r in block.rows} == segments, number
        for row in block.rows:
            assert row["grade"] == "portfolio"
            for header, name, param in columns:
                f = figures[(name, "", segment(row["segment"]))]
                assert same(row[header], f.value if param is None else f.params[param]), header
    stability = _section(workbook["PD"], "2.5.5.2", "smallest")
    for row in stability.rows:
        assert same(
            row["p-value"], figures[("migration_stability_p", "", segment(row["segment"]))].value
        )


def test_grade_distribution_and_migration_matrix_are_the_stored_bins(
    workbook: dict[str, list[Any]], demo_run: Any
) -> None:
    bins = demo_run[3]
    rating = {(b.segment, b.label): b for b in bins if b.variable == "rating"}
    block = _section(workbook["PD"], "2.5.2")
    assert len(block.rows) == len(rating)
    for row in block.rows:
        b = rating[(segment(row["segment"]), row["grade"])]
        assert row["loans"] == b.n_total
        assert same(row["weight"], b.total)
        assert same(row["share"], b.actual_share)
        assert same(row["share at baseline"], b.expected_share)
    cells = {(b.segment, b.label): b for b in bins if b.variable == "migration"}
    matrix = _section(workbook["PD"], "2.5.5.2", "per cell")
    assert len(matrix.rows) == len(cells)
    for row in matrix.rows:
        b = cells[(segment(row["segment"]), row["cell"])]
        assert row["obligors"] == b.n_total
        assert same(row["z"], b.extra.get("z"))
        assert same(row["p-value"], b.extra.get("p"))
    assert any(row["p-value"] is not None for row in matrix.rows)


def test_the_about_sheet_names_the_run_and_every_column(
    workbook: dict[str, list[Any]], demo_run: Any
) -> None:
    _, run, _, _ = demo_run
    about = workbook["About"]
    pairs = {r[0]: r[1] for r in about if len(r) == 2}
    assert pairs["model"] == "behaviour_rating"
    assert pairs["model kind"] == "pd"
    assert pairs["as-of date"] == AS_OF.isoformat()
    assert pairs["run id"] == run.id
    assert pairs["riskmon version of the run"] == run.riskmon_version
    assert pairs["configuration hash"] == run.config_hash
    assert pairs["current population's score dates"] == "2024-12-01 to 2024-12-31"
    assert pairs["performance cohort's score dates"] == "2023-12-01 to 2023-12-31"
    assert pairs["performance window"] == "12 months"
    start = about.index(("sheet", "section", "column", "description"))
    described = {(r[0], r[1], r[2]) for r in about[start + 1 :]}
    for block in blocks(workbook["PD"]):
        figure_table = block.header[2] == "grade" and block.header[-1] == "notes"
        for name in block.header[3:-1] if figure_table else block.header[2:]:
            assert ("PD", block.number, name) in described, (block.number, name)
    assert all(len(r) == 4 and r[3] for r in about[start + 1 :])


def test_every_figure_the_pd_sheet_does_not_show_is_in_other_figures(
    workbook: dict[str, list[Any]], demo_run: Any
) -> None:
    figures = demo_run[2]
    other = workbook["Other figures"]
    assert other[0] == (
        "figure",
        "population",
        "segment",
        "variable",
        "value",
        "reason",
        "parameters",
    )
    listed = {(r[0], r[3] or "", segment(r[2])): r for r in other[1:]}
    assert set(listed) == {k for k in figures if k[0] not in PD_FIGURES}
    for key, row in listed.items():
        assert same(row[4], figures[key].value)


def test_the_csv_folder_holds_the_same_rows_exactly(
    workbook: dict[str, list[Any]], demo_run: Any, tmp_path: Path
) -> None:
    folder, _, figures, _ = demo_run
    out = tmp_path / "rating"
    result = _export(
        folder, "behaviour_rating", "--as-of", "2024-12-31", "--format", "csv", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["about.csv", "other_figures.csv", "pd.csv"]
    for name, file in [("PD", "pd.csv"), ("Other figures", "other_figures.csv")]:
        from_csv = csv_rows(out / file)
        while not from_csv[-1]:  # a workbook keeps no empty row at the end of a sheet
            from_csv.pop()
        assert len(from_csv) == len(workbook[name])
        for a, b in zip(from_csv, workbook[name], strict=True):
            assert len(a) == len(b)
            assert all(
                same(x, y) if isinstance(y, float) else x == y for x, y in zip(a, b, strict=True)
            )
    jeffreys = _section(csv_rows(out / "pd.csv"), "2.5.3.1")
    for row in jeffreys.rows:  # exactly the stored values: CSV holds a float's every digit
        key = (
            ("jeffreys_p", "")
            if row["grade"] == "portfolio"
            else ("grade_jeffreys_p", row["grade"])
        )
        assert row["Jeffreys p"] == figures[(*key, segment(row["segment"]))].value


def test_a_model_without_migrations_says_so_in_their_sections(
    demo_run: Any, tmp_path: Path
) -> None:
    folder = demo_run[0]
    out = tmp_path / "scorecard"
    result = _export(folder, "application_scorecard", "--format", "csv", "-o", str(out))
    assert result.exit_code == 0, result.output
    sections = blocks(csv_rows(out / "pd.csv"))
    missing = "not available: the run stored no migrations (rating.migration is off, or the model has no grades)"  # noqa: E501
    for block in sections:
        if block.number in ("2.5.5.1", "2.5.5.2"):
            assert block.raw == [(block.number, missing)]
        else:
            assert block.rows, block.number
            assert not str(block.raw[0][1]).startswith("not available"), block.number
    pairs = {r[0]: r[1] for r in csv_rows(out / "about.csv") if len(r) == 2}
    assert pairs["as-of date"] == "2024-12-31"  # its newest succeeded run


def test_the_demos_lgd_run_fills_the_lgd_sheet_from_its_back_test(
    demo_run: Any, tmp_path: Path
) -> None:
    """The demo's LGD model, run by the back-testing family itself: every row of the t-test
    section (each ECB segment and the portfolio, whole population and per segment) and the gAUC
    section holds the stored figures."""
    folder = demo_run[0]
    out = tmp_path / "lgd"
    result = _export(
        folder, "retail_lgd", "--as-of", "2024-12-31", "--format", "csv", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    store = MetricStore.open(f"sqlite:///{folder / 'riskmon.db'}")
    run = store.run("retail_lgd", AS_OF)
    assert run is not None
    figures = {(f.name, f.variable, f.segment): f for f in store.figures(run.id)}
    store.engine.dispose()
    rows = csv_rows(out / "lgd.csv")
    ttest = _section(rows, "2.6.2")
    assert {segment(r["segment"]) for r in ttest.rows} == {
        "",
        "collateral=secured",
        "collateral=unsecured",
    }
    for row in ttest.rows:
        grade = "" if row["grade"] == "portfolio" else row["grade"]
        where = segment(row["segment"])
        for column, name in [("N", "backtest_n"), ("T", "backtest_t"), ("p-value", "backtest_p")]:
            assert row[column] == figures[(name, grade, where)].value, (row, column)
    gauc = _section(rows, "2.6.3")
    for row in gauc.rows:
        where = segment(row["segment"])
        assert row["gAUC"] == figures[("gauc", "", where)].value
        assert row["p-value"] == figures[("gauc_test_p", "", where)].value  # the ECB's p
