"""Every exit code of the command line means one thing, per command; ``--format json`` answers
every failure with a JSON document on stdout."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner, Result

from riskmon.cli import cli
from riskmon.errors import EXIT_ALERT, EXIT_FAILED, EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE
from riskmon.store import MetricStore

from .collect.loans import load, loan_frame, model_config
from .run.sources import closed_port

AS_OF = "2025-03-31"
PASSWORD = "Exit-c0de-secret"


def _unreachable_postgres() -> str:
    return f"postgresql+psycopg://risk:{PASSWORD}@127.0.0.1:{closed_port()}/x?connect_timeout=3"


def _config(tmp_path: Path, *, store: str | None = None, source: str | None = None) -> Path:
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    if not (tmp_path / "loans.db").exists():
        load(loans, loan_frame(seed=3, n=4000))
    model = model_config(source or loans, performance_window="2 months", schedule="0 2 * * *")
    document: dict[str, Any] = {
        "store": {
            "url": store or f"sqlite:///{tmp_path / 'store.db'}",
            "reports_dir": str(tmp_path / "reports"),
        },
        "models": [model.model_dump(mode="json", by_alias=True, exclude_none=True)],
    }
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def _invoke(config: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-c", str(config), *args], catch_exceptions=False)


def _migrated(tmp_path: Path, **kwargs: Any) -> Path:
    config = _config(tmp_path, **kwargs)
    assert _invoke(config, "db", "upgrade").exit_code == EXIT_OK
    return config


def _json_error(result: Result, code: int) -> dict[str, Any]:
    assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["exit_code"] == code
    assert document["error"]
    return document


def test_help_lists_every_exit_code() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == EXIT_OK
    codes = [line.split()[0] for line in result.output.split("Exit codes:")[1].splitlines()[1:6]]
    assert codes == ["0", "1", "2", "3", "4"]


def test_readme_documents_every_exit_code() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in (EXIT_OK, EXIT_ALERT, EXIT_USAGE, EXIT_FAILED, EXIT_UNAVAILABLE):
        assert f"| {code} |" in section


# ---------------------------------------------------------------------------- run


def test_run_with_an_unreachable_store_exits_4_in_json_too(tmp_path: Path) -> None:
    config = _config(tmp_path, store=_unreachable_postgres())
    document = _json_error(_invoke(config, "run", "--as-of", AS_OF, "--format", "json"), 4)
    assert "cannot connect to the metric store" in document["error"]
    assert PASSWORD not in json.dumps(document)


def test_run_on_a_store_not_migrated_exits_4(tmp_path: Path) -> None:
    result = _invoke(_config(tmp_path), "run", "--as-of", AS_OF)
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert "riskmon db upgrade" in result.output


def test_run_green_red_and_fail_on_exit_0_or_1(tmp_path: Path) -> None:
    config = _migrated(tmp_path)
    assert _invoke(config, "run", "--as-of", AS_OF).exit_code == EXIT_OK
    run = json.loads(_invoke(config, "run", "--as-of", AS_OF, "--format", "json").stdout)
    alert_status = run[0]["alert_status"]
    failing = {"RED": "red", "AMBER": "amber"}.get(alert_status)
    if failing is None:
        pytest.fail(f"the test loans should raise an alert, got {alert_status}")
    assert _invoke(config, "run", "--as-of", AS_OF, "--fail-on", failing).exit_code == EXIT_ALERT


def test_run_whose_source_is_unreachable_fails_the_run_and_exits_3(tmp_path: Path) -> None:
    config = _migrated(tmp_path, source=_unreachable_postgres())
    result = _invoke(config, "run", "--as-of", AS_OF, "--format", "json", "--fail-on", "red")
    assert result.exit_code == EXIT_FAILED, result.output
    (outcome,) = json.loads(result.stdout)
    assert outcome["status"] == "failed"
    assert "cannot connect to source" in outcome["error"]


def test_run_in_progress_in_another_process_exits_3(tmp_path: Path) -> None:
    config = _migrated(tmp_path)
    store = MetricStore.open(f"sqlite:///{tmp_path / 'store.db'}")
    store.claim_run(
        "retail_pd",
        dt.date.fromisoformat(AS_OF),
        score_direction="higher_is_riskier",
        config_hash="elsewhere",
        owner="another-host:1",
    )
    store.engine.dispose()
    result = _invoke(config, "run", "--as-of", AS_OF, "--format", "json")
    assert result.exit_code == EXIT_FAILED, result.output
    assert json.loads(result.stdout)[0]["status"] == "skipped"


def test_run_usage_errors_exit_2_with_a_json_document(tmp_path: Path) -> None:
    config = _migrated(tmp_path)
    document = _json_error(_invoke(config, "run", "nope", "--format", "json"), EXIT_USAGE)
    assert "no model named 'nope'" in document["error"]
    _json_error(_invoke(config, "run", "--as-of", "31/03/2025", "--format=json"), EXIT_USAGE)
    broken = tmp_path / "broken.yaml"
    broken.write_text("models: [{name: x}]\n", encoding="utf-8")
    _json_error(_invoke(broken, "run", "--format", "json"), EXIT_USAGE)


# ---------------------------------------------------------------------------- baseline


def test_baseline_freeze_with_an_unreachable_source_exits_4(tmp_path: Path) -> None:
    config = _migrated(tmp_path, source=_unreachable_postgres())
    result = _invoke(config, "baseline", "freeze")
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert "cannot connect to source" in result.output
    assert PASSWORD not in result.output


def test_baseline_freeze_with_an_unreachable_store_exits_4(tmp_path: Path) -> None:
    result = _invoke(_config(tmp_path, store=_unreachable_postgres()), "baseline", "freeze")
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert PASSWORD not in result.output


def test_baseline_freeze_of_loans_it_cannot_bin_exits_3(tmp_path: Path) -> None:
    config = _migrated(tmp_path)
    document = yaml.safe_load(config.read_text())
    document["models"][0]["baseline"] = {"start": "2020-01-01", "end": "2020-01-31"}
    config.write_text(yaml.safe_dump(document), encoding="utf-8")
    result = _invoke(config, "baseline", "freeze")
    assert result.exit_code == EXIT_FAILED, result.output
    assert "no loans scored in the baseline window" in result.output


def test_baseline_freeze_of_a_reversed_score_exits_2_unless_forced(tmp_path: Path) -> None:
    frame = loan_frame(seed=3, n=4000)
    rng = np.random.default_rng(3)
    frame["bad"] = (rng.random(len(frame)) < 2.5 * frame["pd_score"]).astype(int)  # a real PD
    load(f"sqlite:///{tmp_path / 'loans.db'}", frame)
    config = _migrated(tmp_path)
    document = yaml.safe_load(config.read_text())
    document["models"][0]["score_direction"] = "higher_is_safer"  # the PD declared the wrong way
    config.write_text(yaml.safe_dump(document), encoding="utf-8")
    refused = _invoke(config, "baseline", "freeze")
    assert refused.exit_code == EXIT_USAGE, refused.output
    assert "below 0.5 with score_direction 'higher_is_safer'" in refused.output
    assert "--force" in refused.output
    assert _invoke(config, "baseline", "show", "retail_pd").exit_code == EXIT_USAGE  # none
    forced = _invoke(config, "baseline", "freeze", "--force")
    assert forced.exit_code == EXIT_OK, forced.output
    assert "baseline version 1 frozen" in forced.output


def test_baseline_show_without_a_baseline_exits_2(tmp_path: Path) -> None:
    result = _invoke(_migrated(tmp_path), "baseline", "show", "retail_pd")
    assert result.exit_code == EXIT_USAGE, result.output
    assert "has no baseline yet" in result.output


# ---------------------------------------------------------------------------- the rest


def test_report_of_a_date_without_a_run_exits_2(tmp_path: Path) -> None:
    config = _migrated(tmp_path)
    result = _invoke(config, "report", "retail_pd", "--as-of", "2025-01-31")
    assert result.exit_code == EXIT_USAGE, result.output
    assert "no run of model 'retail_pd' as of 2025-01-31" in result.output


def test_history_of_an_unknown_model_exits_2_with_a_json_document(tmp_path: Path) -> None:
    config = _migrated(tmp_path)
    document = _json_error(_invoke(config, "history", "nope", "--format", "json"), EXIT_USAGE)
    assert "no model named 'nope'" in document["error"]


def test_history_with_an_unreachable_store_exits_4_with_a_json_document(tmp_path: Path) -> None:
    config = _config(tmp_path, store=_unreachable_postgres())
    document = _json_error(_invoke(config, "history", "retail_pd", "--format", "json"), 4)
    assert PASSWORD not in json.dumps(document)


@pytest.mark.parametrize("command", [["db", "current"], ["schedule"], ["report", "--index-only"]])
def test_other_commands_exit_4_on_an_unreachable_store(tmp_path: Path, command: list[str]) -> None:
    result = _invoke(_config(tmp_path, store=_unreachable_postgres()), *command)
    assert result.exit_code == EXIT_UNAVAILABLE, result.output
    assert PASSWORD not in result.output
