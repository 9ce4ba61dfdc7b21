"""A built wheel carries templates/ and migrations/, and works outside a checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

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


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh environment with the wheel installed (not editable), its
    dependencies taken from this one's site-packages without this one's editable riskmon."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # a path line in a .pth file adds that folder, without reading the .pth files inside it
    # (where the editable install's finder is declared)
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (Path(site) / "dependencies.pth").write_text(ours + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, str(wheel)],
        check=True,
        capture_output=True,
    )
    return python


def _python(installed: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RISKMON_CONFIG", "PYTHONPATH")}
    return subprocess.run(
        [str(installed), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_from_the_repository_root_an_installed_riskmon_finds_templates_and_migrations(
    installed: Path, tmp_path: Path
) -> None:
    from .collect.loans import load, loan_frame, model_config

    # started in the checkout's root, Python imports the checkout's riskmon, not the wheel's
    where = _python(installed, "-c", "import riskmon; print(riskmon.__file__)", cwd=REPO_ROOT)
    assert where.stdout.strip() == str(REPO_ROOT / "riskmon" / "__init__.py"), where.stderr
    editable = _python(installed, "-c", "import riskmon.templates", cwd=REPO_ROOT)
    assert "No module named 'riskmon.templates'" in editable.stderr  # as an installed riskmon

    source = f"sqlite:///{tmp_path / 'loans.db'}"
    load(source, loan_frame(seed=8, n=4000))
    model = model_config(source, performance_window="2 months")
    config = tmp_path / "riskmon.yaml"
    store = {"url": f"sqlite:///{tmp_path / 'riskmon.db'}", "reports_dir": str(tmp_path / "r")}
    document = {"store": store, "models": [model.model_dump(mode="json", by_alias=True)]}
    config.write_text(yaml.safe_dump(document))

    upgraded = _python(
        installed, "-m", "riskmon", "-c", str(config), "db", "upgrade", cwd=REPO_ROOT
    )
    assert upgraded.returncode == 0, upgraded.stderr
    assert "migrated from empty to revision" in upgraded.stdout

    readme = (REPO_ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    (example,) = [b for b in blocks if "run_models(" in b]
    assert 'load_config("riskmon.yaml")' in example
    example = example.replace('"riskmon.yaml"', repr(str(config)))
    example += "\nprint(outcome.status, outcome.report_path, outcome.report_error)\n"
    ran = _python(installed, "-c", example, cwd=REPO_ROOT)
    assert ran.returncode == 0, ran.stderr
    page = tmp_path / "r" / "retail_pd" / "2025-03-31.html"
    assert ran.stdout.split() == ["succeeded", str(page), "None"]
    assert page.read_text().startswith("<!DOCTYPE html>")
    report = _python(
        installed, "-m", "riskmon", "-c", str(config), "report", "retail_pd", cwd=REPO_ROOT
    )
    assert report.returncode == 0, report.stderr
