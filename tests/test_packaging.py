"""A built wheel carries templates/ and migrations/, and works outside a checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO_ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("riskmon-*.whl")
    return built


def test_every_package_is_listed_for_the_wheel() -> None:
    import tomllib

    listed = set(
        tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(path.parent.relative_to(REPO_ROOT).parts)
        for path in (REPO_ROOT / "riskmon").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


@pytest.mark.slow
def test_wheel_contains_templates_and_migrations(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    migrations = {p.name for p in (REPO_ROOT / "migrations" / "versions").glob("*.py")}
    assert "riskmon/migrations/env.py" in names
    assert "riskmon/migrations/script.py.mako" in names
    assert {f"riskmon/migrations/versions/{name}" for name in migrations} <= names
    templates = {p.name for p in (REPO_ROOT / "templates").glob("*.html")}
    assert {f"riskmon/templates/{name}" for name in templates} <= names
    assert "riskmon/templates/__init__.py" in names


@pytest.mark.slow
def test_installed_wheel_migrates_a_store_from_an_unrelated_folder(
    wheel: Path, tmp_path: Path
) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("RISKMON_CONFIG", None)
    where = subprocess.run(
        [sys.executable, "-c", "import riskmon; print(riskmon.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(target))
    result = subprocess.run(
        [sys.executable, "-m", "riskmon", "db", "upgrade"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "migrated from empty to revision" in result.stdout
    assert (elsewhere / "riskmon.db").exists()
