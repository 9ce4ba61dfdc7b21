"""The README's metrics example runs as written, and its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from riskmon.cli import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_the_notebook_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    (example,) = [b for b in blocks if "from riskmon.metrics import" in b]
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert namespace["points_auc"].auc == namespace["auc"].auc  # type: ignore[attr-defined]


def test_every_command_in_the_operations_table_exists() -> None:
    commands = set(re.findall(r"^\| `riskmon ([a-z]+)", README, re.M))
    assert {"run", "backfill", "history", "report", "baseline", "db", "config", "demo"} <= commands
    for command in commands:
        result = CliRunner().invoke(cli, [command, "--help"])
        assert result.exit_code == 0, (command, result.output)


def test_every_database_extra_is_named() -> None:
    import pytest

    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"]) - {"test"}
    assert {"postgres", "duckdb", "mysql"} <= extras
    named = set(re.findall(r"`\[([a-z]+)\]`", README))
    assert extras <= named, f"extras the README does not name: {sorted(extras - named)}"
