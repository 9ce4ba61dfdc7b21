"""``riskmon report``, run through click as the CLI runs it."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli._app import _App
from riskmon.cli.report import report_command
from riskmon.config import RiskmonConfig
from riskmon.errors import EXIT_USAGE, RiskmonError
from riskmon.store import MetricStore


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
    assert runner.invoke(cli, ["report"]).exit_code == 2
    assert runner.invoke(cli, ["report", "retail_pd", "--index-only"]).exit_code == 2
    bad_date = runner.invoke(cli, ["report", "retail_pd", "--as-of", "31/03/2025"])
    assert bad_date.exit_code == 2
    missing = runner.invoke(cli, ["report", "retail_pd", "--as-of", "2025-01-31"])
    # this bare group has no error handling: riskmon's own maps the error to its exit code
    assert isinstance(missing.exception, RiskmonError)
    assert missing.exception.exit_code == EXIT_USAGE
    assert "no run of model 'retail_pd' as of 2025-01-31" in str(missing.exception)
