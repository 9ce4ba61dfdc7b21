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
