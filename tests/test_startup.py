"""Start-up: ``riskmon --help`` loads none of the heavy libraries, and imports follow the layers.

Checked by what a fresh interpreter has in ``sys.modules``, never by timing.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from riskmon.cli import COMMANDS
from riskmon.cli._app import CONFIG_ENV_VAR
from riskmon.config import CONFIG_ENV_VAR as CONFIG_MODEL_ENV_VAR

REPO_ROOT = Path(__file__).resolve().parents[1]
#: what ``riskmon --help`` must not import: each costs a noticeable part of a second
HEAVY = ("scipy", "pandas", "numpy", "sqlalchemy.orm", "apscheduler", "jinja2", "rich", "pydantic")


def _loaded_after(argv: list[str]) -> set[str]:
    probe = (
        "import sys\n"
        "from riskmon.cli import cli\n"
        "try:\n"
        f"    cli({argv!r}, prog_name='riskmon')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('loaded:', *sorted(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("loaded:")]
    return set(line.split()[1:])


@pytest.mark.parametrize(
    "argv", [["--help"], ["run", "--help"], ["schedule", "--help"], ["report", "--help"]]
)
def test_help_imports_no_heavy_library(argv: list[str]) -> None:
    loaded = _loaded_after(argv)
    assert not {m for m in HEAVY if m in loaded}, sorted(m for m in HEAVY if m in loaded)


def test_every_command_module_is_imported_for_the_help() -> None:
    # the help lists each command's first docstring line, so every module is imported
    assert {module for module, _ in COMMANDS.values()} <= _loaded_after(["--help"])


def test_the_cli_names_the_configuration_variable_the_configuration_reads() -> None:
    assert CONFIG_ENV_VAR == CONFIG_MODEL_ENV_VAR


def test_python_dash_m_riskmon_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "riskmon", "--help"], check=True, capture_output=True, text=True
    )
    assert "Usage: riskmon" in done.stdout


def test_a_run_opens_its_store_without_alembic(tmp_path: Path) -> None:
    """Alembic (and each migration script) is loaded to migrate or compare a schema, not by a
    run: ``riskmon.run`` imported and a migrated store opened and checked, no ``alembic``."""
    probe = (
        "import sys\n"
        "from riskmon.store.engine import store_engine\n"
        "from riskmon.store.migrate import check_schema\n"
        "import riskmon.run\n"
        f"engine = store_engine({'sqlite:///' + str(tmp_path / 'store.db')!r})\n"
        "check_schema(engine)\n"
        "print('loaded:', *sorted(sys.modules))\n"
    )
    migrate = (
        "from riskmon.store.engine import store_engine\n"
        "from riskmon.store.migrate import upgrade\n"
        f"upgrade(store_engine({'sqlite:///' + str(tmp_path / 'store.db')!r}))\n"
    )
    subprocess.run([sys.executable, "-c", migrate], check=True)
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("loaded:")]
    loaded = set(line.split()[1:])
    assert "riskmon.run" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("alembic", "mako")}


def _collector_after(entry: str, argv: list[str], cwd: Path) -> tuple[bool, int, object]:
    """In a fresh interpreter, ``entry`` (``main`` or ``cli``) given ``argv``: then whether the
    garbage collector runs, how many objects are frozen, and the exit code."""
    call = "main()" if entry == "main" else f"cli({argv!r}, prog_name='riskmon')"
    probe = (
        "import gc, sys\n"
        "from riskmon.cli import cli, main\n"
        f"sys.argv = ['riskmon', *{argv!r}]\n"
        "try:\n"
        f"    {call}\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print('collector:', gc.isenabled(), gc.get_freeze_count(), code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=cwd
    )
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("collector:")]
    enabled, frozen, code = line.split()[1:]
    return enabled == "True", int(frozen), code


@pytest.fixture
def no_model_config(tmp_path: Path) -> Path:
    """A configuration with a SQLite store and no model (the store created by the test)."""
    path = tmp_path / "riskmon.yaml"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    path.write_text(f"store:\n  url: {store}\n  reports_dir: {tmp_path / 'reports'}\nmodels: []\n")
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["db", "upgrade"],
        ["db", "current", "--url", "{store}"],
        ["config", "check"],
        ["run", "--as-of", "2025-01-31"],
    ],
)
def test_the_command_resumes_the_collector_it_paused_for_its_start_up(
    argv: list[str], no_model_config: Path
) -> None:
    store = f"sqlite:///{no_model_config.with_name('store.db')}"
    args = ["-c", str(no_model_config), *(a.format(store=store) for a in argv)]
    if argv[0] != "db":
        assert _collector_after("main", ["-c", str(no_model_config), "db", "upgrade"], REPO_ROOT)
    enabled, frozen, code = _collector_after("main", args, no_model_config.parent)
    assert code == "0"
    # paused for the imports (riskmon.heap), which are then frozen out of the collector's walks;
    # it runs again for the command's own work
    assert enabled
    assert frozen > 0


def test_riskmon_called_from_python_does_not_pause_the_collector(no_model_config: Path) -> None:
    args = ["-c", str(no_model_config), "db", "upgrade"]
    enabled, _, code = _collector_after("cli", args, no_model_config.parent)
    assert (enabled, code) == (True, "0")


def test_a_nightly_run_of_every_demo_model_imports_neither_pandas_nor_scipy_stats(
    demo: tuple[Path, str], tmp_path: Path
) -> None:
    """pandas (with pyarrow, when installed, which pandas then imports) is most of a process's
    memory before it reads a loan: a run whose database sums its rows (every shape but
    ``stream``), its figures and its reports use numpy alone. scipy.stats costs a run about
    half a second to import: the figures take their distributions from scipy.special. Every
    demo model (the scorecard's override test among them) run again (``--force``) with the
    ``packed`` shape on a copy of the demo, its reports written."""
    folder = tmp_path / "riskmon-demo"
    folder.mkdir()
    # the databases through SQLite's backup: other tests read the demo meanwhile, and its
    # write-ahead log comes and goes with their connections
    for name in ("loans.db", "riskmon.db"):
        source, copy = sqlite3.connect(demo[0] / name), sqlite3.connect(folder / name)
        with closing(source), closing(copy):
            source.backup(copy)
    shutil.copy(demo[0] / "riskmon.yaml", folder)
    config = folder / "riskmon.yaml"
    config.write_text(config.read_text().replace(str(demo[0]), str(folder)))
    argv = ["-c", str(config), "run", "--as-of", "2024-12-31", "--force", "--format", "json"]
    probe = (
        "import sys\n"
        "from riskmon.cli import cli\n"
        "try:\n"
        f"    cli({[*argv, '--strategy', 'packed']!r}, prog_name='riskmon')\n"
        "except SystemExit as exc:\n"
        "    print('exit:', exc.code)\n"
        "print('loaded:', *sorted(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    printed, _, rest = done.stdout.partition("\nexit:")
    summaries = json.loads(printed)
    assert len(summaries) == 5, printed
    assert {s["status"] for s in summaries} == {"succeeded"}, summaries
    (line,) = [line for line in rest.splitlines() if line.startswith("loaded:")]
    loaded = set(line.split()[1:])
    assert {"riskmon.figures", "riskmon.report"} <= loaded
    assert not {m for m in loaded if m.split(".")[0] in ("pandas", "pyarrow")}
    assert not {m for m in loaded if m == "scipy.stats" or m.startswith("scipy.stats.")}
