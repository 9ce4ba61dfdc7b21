"""``riskmon export`` through the command line: its default path, its errors (one line, exit 2,
nothing written) and writes that never leave half an export behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from riskmon.cli import cli
from riskmon.export import ExportWriteError, Sheet, export_run
from riskmon.export._write import write_csv, write_xlsx
from riskmon.records import BinRecord, FigureRecord, RunCounts
from riskmon.store import MetricStore

from .runs import AS_OF, stored_run
from .sheets import csv_rows, workbook_rows

SQLITE = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


@pytest.fixture
def config(store: MetricStore, sqlite_url: str, tmp_path: Path) -> Path:
    """A configuration of the store (no model configured) holding one PD-like run."""
    stored_run(store, "retail_pd", [FigureRecord("auc", 0.75, "performance")])
    path = tmp_path / "riskmon.yaml"
    reports = tmp_path / "reports"
    path.write_text(yaml.safe_dump({"store": {"url": sqlite_url, "reports_dir": str(reports)}}))
    return path


def _export(config: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-c", str(config), "export", *args])


@SQLITE
def test_export_writes_beside_the_reports_by_default(config: Path, tmp_path: Path) -> None:
    result = _export(config, "retail_pd", "--as-of", AS_OF.isoformat())
    assert result.exit_code == 0, result.output
    written = tmp_path / "reports" / "retail_pd" / f"{AS_OF}-ecb.xlsx"
    assert result.output.splitlines() == [str(written)]
    book = workbook_rows(written)
    assert list(book) == ["About", "PD", "Other figures"]
    # the run stored only its AUC: every other section says it is not available, and why
    not_available = [r for r in book["PD"] if len(r) == 2 and str(r[1]).startswith("not avail")]
    assert {r[0] for r in not_available} == {
        "2.5.1", "2.5.2", "2.5.3.1", "2.5.5.1", "2.5.5.2", "2.5.5.3"
    }  # fmt: skip
    assert ("2.5.4.1", "(all)", "portfolio", 0.75) in book["PD"]
    latest = _export(config, "retail_pd", "--format", "csv")  # the newest succeeded run
    assert latest.exit_code == 0, latest.output
    folder = Path(latest.output.strip())
    assert folder == tmp_path / "reports" / "retail_pd" / f"{AS_OF}-ecb"
    assert ("2.5.4.1", "(all)", "portfolio", 0.75) in csv_rows(folder / "pd.csv")


@SQLITE
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "--as-of", "2025-06-30"], "unknown model 'nope': no run of it in the metric store (models with runs: retail_pd)"),  # noqa: E501
        (["retail_pd", "--as-of", "2025-05-31"], "no succeeded run of model 'retail_pd' as of 2025-05-31 in the metric store"),  # noqa: E501
        (["retail_pd", "--as-of", "2025-06-30", "--format", "pdf"], "'pdf' is not one of 'xlsx', 'csv'"),  # noqa: E501
        (["retail_pd", "--as-of", "30/06/2025"], "--as-of"),
    ],
)  # fmt: skip
def test_bad_input_is_one_clear_error_and_writes_nothing(
    config: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out" / "export.xlsx"
    out.parent.mkdir()
    result = _export(config, *args, "-o", str(out))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert list(out.parent.iterdir()) == []
    assert not (tmp_path / "reports").exists()


@SQLITE
def test_a_failed_run_is_not_exported(store: MetricStore, config: Path, tmp_path: Path) -> None:
    run_id = store.claim_run(
        "retail_pd", AS_OF.replace(day=29), score_direction="higher_is_riskier", config_hash="x"
    )
    store.fail_run(run_id, "the source was unreachable")
    result = _export(config, "retail_pd", "--as-of", "2025-06-29", "-o", str(tmp_path / "x.xlsx"))
    assert result.exit_code == 2, result.output
    assert "is failed, not succeeded: it stored no figures to export" in result.output
    assert not (tmp_path / "x.xlsx").exists()


def test_a_write_that_fails_leaves_the_earlier_export_whole(tmp_path: Path) -> None:
    good = Sheet("About", "about.csv", (("model", "retail_pd"),))
    folder = write_csv([good], tmp_path / "export")
    before = (folder / "about.csv").read_bytes()
    # the second sheet's file cannot be created: the write fails after the first file
    broken = Sheet("PD", "no-such-folder/pd.csv", (("x",),))
    with pytest.raises(ExportWriteError, match="cannot write"):
        write_csv([Sheet("About", "about.csv", (("model", "other"),)), broken], folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]
    assert [p.name for p in folder.iterdir()] == ["about.csv"]
    assert (folder / "about.csv").read_bytes() == before
    workbook = write_xlsx([good], tmp_path / "export.xlsx")
    kept = workbook.read_bytes()
    with pytest.raises(ValueError, match="Invalid character / found in sheet title"):
        write_xlsx([good, Sheet("P/D", "x.csv", (("x",),))], workbook)
    assert workbook.read_bytes() == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "export.xlsx"]


def test_text_a_spreadsheet_would_run_is_written_as_text(tmp_path: Path) -> None:
    row = ('=HYPERLINK("http://x")', "+1", "-1", "@x", "bell\x07", -1.5)
    sheet = Sheet("PD", "pd.csv", (row,))
    (cells,) = workbook_rows(write_xlsx([sheet], tmp_path / "x.xlsx"))["PD"]
    assert cells == ('=HYPERLINK("http://x")', "+1", "-1", "@x", "bell\\x07", -1.5)
    (csv_cells,) = csv_rows(write_csv([sheet], tmp_path / "x") / "pd.csv")
    assert csv_cells == ('\'=HYPERLINK("http://x")', "'+1", "'-1", "'@x", "bell\x07", -1.5)


@SQLITE
def test_without_openpyxl_xlsx_names_the_extra_and_csv_still_works(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if it were not installed
    out = tmp_path / "x.xlsx"
    result = _export(config, "retail_pd", "--as-of", AS_OF.isoformat(), "-o", str(out))
    assert result.exit_code == 4, result.output
    assert "--format xlsx needs openpyxl: pip install 'riskmon[xlsx]'" in result.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".x", "x"))]
    csv_result = _export(config, "retail_pd", "--format", "csv", "-o", str(tmp_path / "x"))
    assert csv_result.exit_code == 0, csv_result.output


@SQLITE
def test_bins_of_a_segment_without_figures_are_exported(store: MetricStore, tmp_path: Path) -> None:
    grades = [
        BinRecord("rating", "current", i, label, n, float(n), segment="channel=web",
                  actual_share=n / 30, expected_share=1 / 3)
        for i, (label, n) in enumerate([("A", 5), ("B", 10), ("C", 15)])
    ]  # fmt: skip
    run_id = store.claim_run(
        "bins_only", AS_OF, score_direction="higher_is_riskier", config_hash="x"
    )
    counts = RunCounts(n_current=30, n_matured=0, n_unmatured=30)
    store.complete_run(run_id, counts=counts, figures=[], bins=grades)
    out = export_run(store, "bins_only", AS_OF, tmp_path / "bins", format="csv")
    rows = csv_rows(out / "pd.csv")
    start = rows.index(
        ("section", "segment", "grade", "loans", "weight", "share", "share at baseline")
    )
    assert rows[start + 1 : start + 4] == [
        ("2.5.2", "channel=web", label, n, float(n), n / 30, 1 / 3)
        for label, n in [("A", 5), ("B", 10), ("C", 15)]
    ]
