"""The layers of docs/ARCHITECTURE.md, enforced: import-linter's contracts hold, every module
of the package sits in a layer, and a module that imports across the layers breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    return list(config["tool"]["importlinter"]["contracts"])


def _lint(root: Path, package_parent: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package found under ``package_parent``, with ``root``'s contracts."""
    env = dict(os.environ, PYTHONPATH=str(package_parent))
    return subprocess.run(
        [str(LINT), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_import_contracts_are_kept() -> None:
    done = _lint(REPO_ROOT, REPO_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_contracts()) >= 6  # layers, cycles, store, metrics' face, report, baseline
    assert f"Contracts: {len(_contracts())} kept, 0 broken." in done.stdout


def test_every_module_of_the_package_sits_in_a_layer() -> None:
    (layers,) = [c["layers"] for c in _contracts() if c["type"] == "layers"]
    listed = {m.strip() for layer in layers for m in str(layer).split("|")}  # type: ignore[attr-defined]
    package = REPO_ROOT / "riskmon"
    found = {
        f"riskmon.{p.stem if p.is_file() else p.name}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert found == listed


@pytest.mark.parametrize(
    ("module", "imported", "broken"),
    [
        ("records.py", "riskmon.cli", "riskmon.records is not allowed to import riskmon.cli"),
        ("store/reads.py", "riskmon.figures", "riskmon.store is not allowed to import"),
        ("figures/quality.py", "riskmon.collect", "riskmon.figures is not allowed to import"),
        ("report/render.py", "riskmon.metrics._woe", "Illegal imports of protected package"),
        ("evaluate.py", "riskmon.store", "riskmon.evaluate is not allowed to import riskmon.store"),
        (
            "report/_summary.py",
            "riskmon.figures.stability",
            "riskmon.report is not allowed to import riskmon.figures.stability",
        ),
        (
            "baseline/_freeze.py",
            "riskmon.figures.strength",
            "riskmon.baseline is not allowed to import riskmon.figures.strength",
        ),
    ],
)
def test_a_module_importing_across_the_layers_breaks_the_contracts(
    tmp_path: Path, module: str, imported: str, broken: str
) -> None:
    shutil.copytree(REPO_ROOT / "riskmon", tmp_path / "riskmon")
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "riskmon" / module
    # a function-level import counts as much as one at the top of the module
    target.write_text(target.read_text() + f"\n\ndef _reach():\n    import {imported}\n")
    done = _lint(tmp_path, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert broken in done.stdout
