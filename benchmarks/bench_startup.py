"""Start-up time of the ``riskmon`` command and of riskmon's heavier modules.

Measured, each in a fresh interpreter, repeats interleaved so that machine noise spreads
evenly over the cases:

- ``riskmon --help``: wall time of the installed console script, from spawn to exit;
- ``import <module>`` for ``riskmon.metrics`` and ``riskmon.run``: wall time of
  ``python -c "import <module>"`` less that of ``python -c "pass"`` (the bare interpreter);
- ``riskmon.run`` imported and a migrated SQLite store opened as a run opens it (its
  revision and schema checked), less the bare interpreter;
- the fixed cost of a run: ``python -m riskmon run`` with a configuration of no model over a
  migrated SQLite store, less the bare interpreter: everything a ``riskmon run`` process does
  but the models' own work (start-up, imports, configuration, store, exit);
- what a PD model's run imports besides: ``riskmon.run`` and SciPy's special functions (which
  the figures of a PD model import when first computed), with the collector paused and the
  imports set aside as the ``riskmon`` command does (:mod:`riskmon.heap`), less the bare
  interpreter;
- which heavy third-party modules ``riskmon --help`` loads (none is the goal);
- every report template loaded, in a process whose cache of compiled templates is empty
  (``TMPDIR`` a new folder each time: every template compiled) and in one that finds them
  kept by an earlier process: the difference is what the cache saves each ``riskmon run``.

Reported: the median of ``--repeats`` runs (and the minimum, the least disturbed run).

    .venv/bin/python benchmarks/bench_startup.py --repeats 15
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: modules measured by ``import <module>``
MODULES = ("riskmon.metrics", "riskmon.run")
#: third-party modules that have no business loading for ``riskmon --help``
HEAVY = ("scipy", "pandas", "numpy", "sqlalchemy.orm", "apscheduler", "jinja2", "rich", "pydantic")


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("riskmon")
    if script.exists():
        return [str(script)]
    found = shutil.which("riskmon")
    return [found] if found else [sys.executable, "-m", "riskmon"]


#: loads every report template (compiling those not kept in the cache folder)
TEMPLATES = (
    "from riskmon.report.render import environment\n"
    "env = environment()\n"
    "for name in env.list_templates():\n"
    "    env.get_template(name)\n"
)


#: ``riskmon.run`` imported and a migrated store opened as a run opens it (its revision and
#: schema checked); ``step`` is ``upgrade`` to migrate it first
STORE = (
    "import riskmon.run\n"
    "from riskmon.store.engine import store_engine\n"
    "from riskmon.store.migrate import {step}\n"
    "{step}(store_engine({url!r}))\n"
)
OPEN = "import riskmon.run, a store opened"
#: a configuration with a store and no model: ``riskmon run`` then does all but a model's work
NO_MODEL = "store:\n  url: {url}\n  reports_dir: {reports}\nmodels: []\n"
FIXED = "riskmon run, no model (a run's fixed cost)"
#: what a PD model's run imports, as the ``riskmon`` command imports it (a ``--before`` checkout
#: older than the pause sets the imports aside only)
PD_IMPORTS = (
    "import riskmon.heap\n"
    "getattr(riskmon.heap, 'pause_for_imports', lambda: None)()\n"
    "from riskmon.heap import set_aside_imports\n"
    "import riskmon.run, scipy.special\n"
    "set_aside_imports()\n"
)
PD = "import riskmon.run and scipy.special, as the command does"
#: the checkout this script belongs to (PYTHONPATH of the cases compared with ``--before``)
CHECKOUT = str(Path(__file__).resolve().parents[1])
#: the folder every case runs in
OUTSIDE = tempfile.mkdtemp(prefix="riskmon-bench-cwd-")


def _wall(command: list[str], tmpdir: str | None = None, before: str | None = None) -> float:
    """Seconds from spawn to exit; with ``tmpdir``, the process's TMPDIR (where Jinja2 keeps
    its cache of compiled templates); with ``before``, its PYTHONPATH (riskmon imported from
    that checkout)."""
    env = dict(os.environ)
    if tmpdir is not None:
        env["TMPDIR"] = tmpdir
    if before is not None:
        env["PYTHONPATH"] = before
    start = time.perf_counter()
    subprocess.run(  # run outside any checkout: `python -c` imports first from its folder
        command,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=OUTSIDE,
    )
    return time.perf_counter() - start


def _loaded_by_help() -> list[str]:
    probe = (
        "import sys\n"
        "from riskmon.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='riskmon')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return done.stdout.split("\n")[-2].split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="runs of each case")
    parser.add_argument(
        "--before",
        metavar="CHECKOUT",
        help="also time the python cases with riskmon imported from this checkout of an "
        "earlier commit (PYTHONPATH), each right after its own (then imported from this "
        "script's checkout by PYTHONPATH as well)",
    )
    args = parser.parse_args()

    cases = {
        "riskmon --help": [*_console_script(), "--help"],
        "python (bare interpreter)": [sys.executable, "-c", "pass"],
        **{f"import {m}": [sys.executable, "-c", f"import {m}"] for m in MODULES},
        "templates compiled (empty cache)": [sys.executable, "-c", TEMPLATES],
        "templates kept by an earlier process": [sys.executable, "-c", TEMPLATES],
    }
    kept = tempfile.mkdtemp(prefix="riskmon-bench-kept-")
    store = f"sqlite:///{Path(tempfile.mkdtemp(prefix='riskmon-bench-store-')) / 'store.db'}"
    migrate = [sys.executable, "-c", STORE.format(url=store, step="upgrade")]
    subprocess.run(migrate, check=True, cwd=OUTSIDE)
    cases[OPEN] = [sys.executable, "-c", STORE.format(url=store, step="check_schema")]
    config = Path(store.removeprefix("sqlite:///")).with_name("riskmon.yaml")
    config.write_text(NO_MODEL.format(url=store, reports=config.with_name("reports")))
    run = ["run", "--as-of", "2025-01-31"]
    cases[FIXED] = [sys.executable, "-m", "riskmon", "-c", str(config), *run]
    cases[PD] = [sys.executable, "-c", PD_IMPORTS]

    def tmpdir(name: str) -> str | None:
        if name.startswith("templates compiled"):
            return tempfile.mkdtemp(prefix="riskmon-bench-empty-")
        return kept if name.startswith("templates kept") else None

    runs = [(name, command, None) for name, command in cases.items()]
    if args.before:  # this checkout on PYTHONPATH too: a longer sys.path costs each import
        runs = [
            run
            for name, command, _ in runs
            for run in [(name, command, CHECKOUT), (f"{name} [before]", command, args.before)]
            if command[0] == sys.executable or run[2] == CHECKOUT
        ]
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for name, command, before in runs:  # warm the file cache, the bytecode, the kept templates
        _wall(command, tmpdir(name), before)
    for _ in range(args.repeats):
        for name, command, before in runs:
            times[name].append(_wall(command, tmpdir(name), before))

    bare = times["python (bare interpreter)"]
    print(f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, ", end="")
    print(f"median of {args.repeats} runs (minimum in brackets)\n")
    print("| case | median | minimum |")
    print("|------|-------:|--------:|")
    for name, each in times.items():
        median, least = statistics.median(each), min(each)
        if name.startswith(("import ", OPEN, FIXED)):
            name = f"{name} (less the bare interpreter)"
            median, least = median - statistics.median(bare), least - min(bare)
        print(f"| `{name}` | {median:.3f} s | {least:.3f} s |")
    heavy = _loaded_by_help()
    print(f"\nheavy modules loaded by `riskmon --help`: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
