"""The command line: exit codes, one-line errors, masked passwords."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import inspect

from riskmon import __version__
from riskmon.cli import cli
from riskmon.store.engine import opened_store
from riskmon.store.models import Base

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "riskmon.example.yaml"


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def _write_config(path: Path, mutate: object = None) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    if callable(mutate):
        mutate(data)
    path.write_text(yaml.safe_dump(data))
    return path


def test_version_and_help() -> None:
    code, out = _run("--version")
    assert (code, out.strip()) == (0, f"riskmon, version {__version__}")
    code, out = _run("--help")
    assert code == 0, out
    assert {"db", "config"} <= {
        line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()
    }


def test_db_upgrade_creates_the_schema(store_url: str) -> None:
    code, out = _run("db", "upgrade", "--url", store_url)
    assert code == 0, out
    assert "migrated from empty to revision" in out
    with opened_store(store_url) as engine:
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    code, out = _run("db", "upgrade", "--url", store_url)
    assert (code, "already at revision" in out) == (0, True)


def test_db_upgrade_uses_the_store_url_of_the_config(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'from-config.db'}"
    config = _write_config(tmp_path / "riskmon.yaml", lambda d: d["store"].update(url=url))
    code, out = _run("--config", str(config), "db", "upgrade")
    assert code == 0, out
    assert (tmp_path / "from-config.db").exists()


def test_db_upgrade_without_any_config_uses_the_embedded_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RISKMON_CONFIG", raising=False)
    code, out = _run("db", "upgrade")
    assert code == 0, out
    assert (tmp_path / "riskmon.db").exists()


def test_config_check_prints_a_summary_with_masked_passwords() -> None:
    env = {"LOANS_DB_URL": "postgresql+psycopg://risk:hunter2@db.example/loans"}
    code, out = _run("--config", str(EXAMPLE), "config", "check", env=env)
    assert code == 0, out
    assert "valid, 1 model(s)" in out
    assert "source: postgresql+psycopg://risk:***@db.example/loans (table scored_loans)" in out
    assert "hunter2" not in out


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["models"][0].pop("score_direction"),
            "models[0].score_direction: required key is missing",
        ),
        (
            lambda d: d["models"][0].update(schedule="61 * * * *"),
            "models[0].schedule: expected a 5-field cron",
        ),
        (lambda d: d["models"][0].update(colour="red"), "models[0].colour: unknown key"),
    ],
)
def test_a_broken_config_exits_2_naming_the_file_and_key(
    tmp_path: Path, mutate: object, expected: str
) -> None:
    config = _write_config(tmp_path / "broken.yaml", mutate)
    code, out = _run("--config", str(config), "config", "check")
    assert code == 2, out
    assert out.strip().splitlines() == [
        f"riskmon: error: {config}: {expected}"
    ] or out.strip().startswith(f"riskmon: error: {config}: {expected}")
    assert len(out.strip().splitlines()) == 1


def test_a_missing_explicit_config_exits_2(tmp_path: Path) -> None:
    code, out = _run("--config", str(tmp_path / "none.yaml"), "config", "check")
    assert code == 2
    assert "none.yaml: configuration file not found" in out


def test_an_unreachable_store_exits_4_without_the_password() -> None:
    url = "postgresql+psycopg://risk:hunter2@127.0.0.1:9/riskmon?connect_timeout=2"
    code, out = _run("db", "upgrade", "--url", url)
    assert code == 4
    assert out.startswith("riskmon: error: cannot connect to the metric store")
    assert "risk:***@127.0.0.1:9" in out
    assert "hunter2" not in out


def test_python_dash_m_runs_the_same_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "riskmon", "--version"], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == f"riskmon, version {__version__}"


def test_demo_help_lists_the_demos_own_models() -> None:
    from riskmon.demo import DEMO_RUNS, demo_config

    models = demo_config(Path("."))["models"]
    assert isinstance(models, list)
    result = CliRunner().invoke(cli, ["demo", "--help"])
    assert result.exit_code == 0, result.output
    first, last = DEMO_RUNS
    assert f"Its {len(models)} models, run monthly from {first} to {last}:" in result.output
    listed = [line.split()[0] for line in result.output.splitlines() if line.startswith("  ")]
    assert [m["name"] for m in models] == [n for n in listed if n in {m["name"] for m in models}]
    assert "two models" not in result.output
