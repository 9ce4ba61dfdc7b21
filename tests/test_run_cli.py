"""`riskmon run`, `backfill` and `history`: outcomes, exit codes, JSON, failures."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.cli.runs import EXIT_ALERT, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE
from riskmon.store import MetricStore

from .collect.loans import load, loan_frame, model_config


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    source = f"sqlite:///{tmp_path / 'loans.db'}"
    load(source, loan_frame(seed=3, n=12000))
    model = model_config(source, performance_window="2 months").model_dump(
        mode="json", by_alias=True
    )
    path = tmp_path / "riskmon.yaml"
    store = {"url": f"sqlite:///{tmp_path / 'store.db'}", "reports_dir": str(tmp_path / "reports")}
    path.write_text(yaml.safe_dump({"store": store, "models": [model]}))
    assert CliRunner().invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    return path


def _invoke(path: Path, *args: str) -> tuple[int, str]:
    """Exit code, and stdout alone for --format json (log lines go to stderr), else all."""
    # no $COLUMNS: a table is printed whole, at its own width, as to a file
    result = CliRunner().invoke(
        cli, ["-c", str(path), *args], catch_exceptions=False, env={"COLUMNS": None}
    )
    return result.exit_code, result.stdout if "json" in args else result.output


def _store(path: Path) -> MetricStore:
    return MetricStore.open(yaml.safe_load(path.read_text())["store"]["url"])


def test_run_stores_everything_and_prints_a_json_summary(config_path: Path) -> None:
    code, out = _invoke(config_path, "run", "--as-of", "2025-03-31", "--format", "json")
    assert code == EXIT_OK, out
    (summary,) = json.loads(out)
    assert summary["model"] == "retail_pd"
    assert summary["status"] == "succeeded"
    assert summary["alert_status"] in {"GREEN", "AMBER", "RED"}
    assert summary["baseline_version"] == 1
    assert summary["counts"]["current"] > 0
    assert {"ks", "auc", "gini", "bad_rate", "n_rows"} <= set(summary["figures"]["performance"])
    assert {"psi", "csi[income]", "missing_rate[income]"} <= set(summary["figures"]["current"])
    rules = {a["rule"] for a in summary["alerts"]}
    assert {"ks_band", "psi", "csi", "auc_drop", "iv_drop", "volume_change"} <= rules
    assert all({"status", "value", "thresholds", "message"} <= set(a) for a in summary["alerts"])
    report = Path(summary["report"])
    assert report.name == "2025-03-31.html"
    assert report.is_file()
    assert (report.parent.parent / "index.html").is_file()
    store = _store(config_path)
    (run,) = store.runs("retail_pd")
    stored = {(f.name, f.variable, f.segment, f.population): f.value for f in store.figures(run.id)}
    assert stored[("ks", "", "", "performance")] == summary["figures"]["performance"]["ks"]
    assert len(store.alerts(run.id)) == len(summary["alerts"])
    assert {b.variable for b in store.bins(run.id)} >= {"score", "income", "gains", "curve"}
    store.engine.dispose()


def test_fail_on_turns_a_red_alert_into_exit_1(config_path: Path) -> None:
    code, out = _invoke(config_path, "run", "--as-of", "2025-03-31", "--format", "json")
    (summary,) = json.loads(out)
    assert summary["alert_status"] == "RED"  # random scores: KS far below 0.20
    assert code == EXIT_OK
    code, _ = _invoke(config_path, "run", "--as-of", "2025-03-31", "--fail-on", "red")
    assert code == EXIT_ALERT
    code, _ = _invoke(config_path, "run", "--as-of", "2025-03-31", "--fail-on", "amber")
    assert code == EXIT_ALERT


def test_a_rerun_replaces_the_earlier_run(config_path: Path) -> None:
    _invoke(config_path, "run", "--as-of", "2025-03-31")
    store = _store(config_path)
    (first,) = store.runs("retail_pd")
    n_figures = store.count_rows("figures")
    _invoke(config_path, "run", "--as-of", "2025-03-31", "--force")
    (second,) = store.runs("retail_pd")
    assert second.id == first.id
    assert second.started_at > first.started_at
    assert store.count_rows("figures") == n_figures
    store.engine.dispose()


def test_a_failed_run_exits_3_and_leaves_no_figures(config_path: Path, tmp_path: Path) -> None:
    data: dict[str, Any] = yaml.safe_load(config_path.read_text())
    data["models"][0]["source"]["url"] = "postgresql+psycopg://risk:hunter2@127.0.0.1:9/loans"
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(data))
    code, out = _invoke(broken, "run", "--as-of", "2025-03-31")
    assert code == EXIT_RUN_FAILED
    assert "retail_pd as of 2025-03-31: failed: model 'retail_pd': cannot connect" in out
    assert "hunter2" not in out
    store = _store(broken)
    (run,) = store.runs("retail_pd")
    assert run.status == "failed"
    assert run.error is not None
    assert "risk:***@127.0.0.1:9" in run.error
    assert store.count_rows("figures") == 0
    store.engine.dispose()


def test_an_empty_performance_cohort_keeps_figures_as_not_available(config_path: Path) -> None:
    # the data starts 2024-12-15: as of 2025-01-31 the cohort (November 2024) is empty
    code, out = _invoke(config_path, "run", "--as-of", "2025-01-31", "--format", "json")
    assert code == EXIT_OK, out
    (summary,) = json.loads(out)
    assert summary["figures"]["performance"]["auc"] is None
    assert summary["figures"]["performance"]["n_rows"] == 0
    statuses = {a["rule"]: a["status"] for a in summary["alerts"] if a["segment"] == ""}
    assert statuses["ks_band"] == "NOT_EVALUABLE"
    assert statuses["psi"] in {"GREEN", "AMBER", "RED"}


def test_unknown_model_and_bad_date_are_usage_errors(config_path: Path) -> None:
    code, out = _invoke(config_path, "run", "nope")
    assert code == EXIT_USAGE
    assert "no model named 'nope'" in out
    code, out = _invoke(config_path, "run", "--as-of", "31/03/2025")
    assert code == EXIT_USAGE
    code, out = _invoke(
        config_path, "backfill", "retail_pd", "--from", "2025-03-31", "--to", "2025-01-31"
    )
    assert code == EXIT_USAGE
    assert "is before --from" in out


def test_backfill_then_history(config_path: Path) -> None:
    code, out = _invoke(
        config_path, "backfill", "retail_pd", "--from", "2025-02-28", "--to", "2025-04-30"
    )
    assert code == EXIT_OK, out
    assert "retail_pd: 3 of 3 runs succeeded" in out
    store = _store(config_path)
    assert [str(r.as_of) for r in store.runs("retail_pd")] == [
        "2025-02-28",
        "2025-03-31",
        "2025-04-30",
    ]
    # the index, written once after the last date, links every date's report
    index = (config_path.parent / "reports" / "index.html").read_text()
    for day in ("2025-02-28", "2025-03-31", "2025-04-30"):
        assert f"retail_pd/{day}" in index, day
    ks = {str(p.as_of): p.value for p in store.history("retail_pd", "ks", population="performance")}
    store.engine.dispose()
    code, out = _invoke(config_path, "history", "retail_pd", "--format", "csv")
    assert code == EXIT_OK, out
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["as_of"] for r in rows] == ["2025-02-28", "2025-03-31", "2025-04-30"]
    assert [float(r["performance.ks"]) for r in rows] == pytest.approx(
        [ks[r["as_of"]] for r in rows]
    )
    code, out = _invoke(
        config_path,
        "history",
        "retail_pd",
        "--figure",
        "csi",
        "--variable",
        "income",
        "--format",
        "json",
    )
    assert code == EXIT_OK, out
    keys = {"as_of", "status", "current.from", "current.to", "current.csi[income]"}
    assert [set(r) for r in json.loads(out)] == [keys] * 3
    code, out = _invoke(config_path, "history", "retail_pd")
    assert code == EXIT_OK
    assert "2025-04-30" in out


def test_a_run_whose_report_cannot_be_written_says_so_and_exits_3(
    config_path: Path, tmp_path: Path
) -> None:
    document = yaml.safe_load(config_path.read_text())
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("the reports folder cannot be made under a file")
    document["store"]["reports_dir"] = str(blocker / "reports")
    config_path.write_text(yaml.safe_dump(document))
    page = blocker / "reports" / "retail_pd" / "2025-03-31.html"

    code, out = _invoke(config_path, "run", "--as-of", "2025-03-31")
    assert code == EXIT_RUN_FAILED, out
    status_line = next(line for line in out.splitlines() if line.startswith("retail_pd as of"))
    assert status_line.startswith("retail_pd as of 2025-03-31: succeeded, REPORT NOT WRITTEN, ")
    assert f"  report not written: cannot write the report {page}: " in out
    code, out = _invoke(config_path, "run", "--as-of", "2025-03-31", "--format", "json", "--force")
    assert code == EXIT_RUN_FAILED
    (summary,) = json.loads(out)
    assert summary["status"] == "succeeded"
    assert summary["report"] is None
    assert summary["report_error"].startswith(f"cannot write the report {page}: ")
    store = _store(config_path)
    try:  # the figures are stored all the same
        run = store.run("retail_pd", dt.date(2025, 3, 31))
        assert run is not None
        assert run.status == "succeeded"
        assert store.figures(run.id)
    finally:
        store.engine.dispose()


def test_run_without_a_date_runs_as_of_yesterday_as_a_scheduled_run(config_path: Path) -> None:
    before = dt.datetime.now(dt.timezone.utc).date()
    _invoke(config_path, "run")
    after = dt.datetime.now(dt.timezone.utc).date()
    store = _store(config_path)
    try:
        (run,) = store.runs("retail_pd")
    finally:
        store.engine.dispose()
    # scheduler.timezone is UTC by default: the last day that has ended there
    assert run.as_of in {before - dt.timedelta(days=1), after - dt.timedelta(days=1)}


def test_backfill_by_schedule_takes_the_scheduled_runs_as_of_dates(config_path: Path) -> None:
    code, out = _invoke(
        config_path, "backfill", "retail_pd", "--from", "2025-02-01", "--to", "2025-04-30",
        "--every", "schedule",
    )  # fmt: skip
    assert code == EXIT_USAGE
    assert "model 'retail_pd' has no schedule" in out
    document = yaml.safe_load(config_path.read_text())
    document["models"][0]["schedule"] = "0 2 1 * *"  # monthly, on the 1st
    config_path.write_text(yaml.safe_dump(document))
    code, out = _invoke(
        config_path, "backfill", "retail_pd", "--from", "2025-02-01", "--to", "2025-04-30",
        "--every", "schedule",
    )  # fmt: skip
    assert code == EXIT_OK, out
    store = _store(config_path)
    try:
        # the fires of 1 March, 1 April and 1 May run as of the month ends before them
        assert [str(r.as_of) for r in store.runs("retail_pd")] == [
            "2025-02-28",
            "2025-03-31",
            "2025-04-30",
        ]
    finally:
        store.engine.dispose()
