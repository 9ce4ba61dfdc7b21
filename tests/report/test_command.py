"""``riskmon report``, run through click as the CLI runs it."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli._app import _App
from riskmon.cli.report import report_command
from riskmon.config import RiskmonConfig
from riskmon.errors import EXIT_FAILED, EXIT_USAGE, RiskmonError
from riskmon.report import ReportWriteError
from riskmon.store import MetricStore

from .. import forkserver


@pytest.fixture
def cli(real_config: RiskmonConfig, tmp_path: Path) -> click.Group:
    """A CLI group holding the report command, on ``real_config`` written as YAML."""
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump(real_config.model_dump(mode="json", by_alias=True)))

    @click.group()
    @click.pass_context
    def group(ctx: click.Context) -> None:
        ctx.obj = _App(str(path))

    group.add_command(report_command)
    return group


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_report_writes_the_run_report_and_the_index(
    cli: click.Group, real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    reports = real_config.store.reports_dir
    result = CliRunner().invoke(cli, ["report", "retail_pd", "--as-of", "2025-02-28"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        str(reports / "retail_pd" / "2025-02-28.html"),
        str(reports / "index.html"),
    ]
    assert all(Path(line).is_file() for line in result.output.splitlines())
    latest = CliRunner().invoke(cli, ["report", "retail_pd"])
    assert latest.exit_code == 0, latest.output
    assert latest.output.splitlines()[0].endswith("2025-03-31.html")


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_report_index_only(
    cli: click.Group, real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    result = CliRunner().invoke(cli, ["report", "--index-only"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [str(real_config.store.reports_dir / "index.html")]
    assert not (real_config.store.reports_dir / "retail_pd").exists()


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_report_usage_errors(cli: click.Group, real_runs: MetricStore) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["report", "retail_pd", "--index-only"]).exit_code == 2
    assert runner.invoke(cli, ["report", "--as-of", "2025-02-28", "--index-only"]).exit_code == 2
    bad_date = runner.invoke(cli, ["report", "retail_pd", "--as-of", "31/03/2025"])
    assert bad_date.exit_code == 2
    missing = runner.invoke(cli, ["report", "retail_pd", "--as-of", "2025-01-31"])
    # this bare group has no error handling: riskmon's own maps the error to its exit code
    assert isinstance(missing.exception, RiskmonError)
    assert missing.exception.exit_code == EXIT_USAGE
    assert "no run of model 'retail_pd' as of 2025-01-31" in str(missing.exception)


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_report_without_a_model_writes_every_models_run(
    real_config: RiskmonConfig, real_runs: MetricStore, tmp_path: Path
) -> None:
    # a second model, configured but never run: skipped, and said so
    idle = real_config.models[0].model_copy(update={"name": "idle_pd"})
    config = real_config.model_copy(update={"models": [*real_config.models, idle]})
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(config.model_dump(mode="json", by_alias=True)))

    @click.group()
    @click.pass_context
    def group(ctx: click.Context) -> None:
        ctx.obj = _App(str(path))

    group.add_command(report_command)
    reports = real_config.store.reports_dir
    result = CliRunner().invoke(group, ["report"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        str(reports / "retail_pd" / "2025-03-31.html"),  # the newest run
        str(reports / "index.html"),
    ]
    assert "no run of model 'idle_pd' in the metric store: skipped" in result.stderr
    dated = CliRunner().invoke(group, ["report", "--as-of", "2025-02-28"])
    assert dated.exit_code == 0, dated.output
    assert dated.stdout.splitlines()[0] == str(reports / "retail_pd" / "2025-02-28.html")
    none = CliRunner().invoke(group, ["report", "--as-of", "2025-01-31"])
    assert isinstance(none.exception, RiskmonError)
    assert none.exception.exit_code == EXIT_USAGE
    assert str(none.exception) == "no model has a run as of 2025-01-31 in the metric store"


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_report_folder_that_cannot_be_made_is_named(
    cli: click.Group, real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    reports = real_config.store.reports_dir
    reports.parent.mkdir(parents=True, exist_ok=True)
    reports.write_text("a file where the reports folder should be")
    result = CliRunner().invoke(cli, ["report", "retail_pd"])
    # the command raises; riskmon's entry point turns the error into its exit code
    assert isinstance(result.exception, ReportWriteError)
    assert result.exception.exit_code == EXIT_FAILED
    page = reports / "retail_pd" / "2025-03-31.html"
    assert str(result.exception).startswith(f"cannot write the report {page}: ")


def _no_larger_files_than(limit: int) -> Callable[[], None]:
    def limited() -> None:
        # the process is refused writes past ``limit`` bytes, as a full disk refuses them:
        # the write fails with an error that names no file
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


@pytest.mark.slow
@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_report_that_does_not_fit_names_its_file(
    real_config: RiskmonConfig, real_runs: MetricStore, tmp_path: Path
) -> None:
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump(real_config.model_dump(mode="json", by_alias=True)))
    limit = 64_000  # more than the store's own files need to be read, less than a report
    result = subprocess.run(
        [sys.executable, "-m", "riskmon", "-c", str(path), "report", "retail_pd"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_no_larger_files_than(limit),
    )
    page = real_config.store.reports_dir / "retail_pd" / "2025-03-31.html"
    assert result.returncode == ReportWriteError.exit_code != 0, result.stderr
    assert f"riskmon: error: cannot write the report {page}: File too large" in result.stderr
    assert not page.parent.exists() or list(page.parent.iterdir()) == []  # no partial file
    written = forkserver.run(
        [sys.executable, "-m", "riskmon", "-c", str(path), "report", "retail_pd"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert written.returncode == 0, written.stderr
    assert page.stat().st_size > limit  # the report indeed did not fit
