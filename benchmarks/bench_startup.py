"""Start-up time of the ``riskmon`` command and of riskmon's heavier modules.

Measured, each in a fresh interpreter, repeats interleaved so that machine noise spreads
evenly over the cases:

- ``riskmon --help``: wall time of the installed console script, from spawn to exit;
- ``import <module>`` for ``riskmon.metrics`` and ``riskmon.run``: wall time of
  ``python -c "import <module>"`` less that of ``python -c "pass"`` (the bare interpreter);
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


def _wall(command: list[str], tmpdir: str | None = None) -> float:
    """Seconds from spawn to exit; with ``tmpdir``, the process's TMPDIR (where Jinja2 keeps
    its cache of compiled templates)."""
    env = None if tmpdir is None else {**os.environ, "TMPDIR": tmpdir}
    start = time.perf_counter()
    subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
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
    args = parser.parse_args()

    cases = {
        "riskmon --help": [*_console_script(), "--help"],
        "python (bare interpreter)": [sys.executable, "-c", "pass"],
        **{f"import {m}": [sys.executable, "-c", f"import {m}"] for m in MODULES},
        "templates compiled (empty cache)": [sys.executable, "-c", TEMPLATES],
        "templates kept by an earlier process": [sys.executable, "-c", TEMPLATES],
    }
    kept = tempfile.mkdtemp(prefix="riskmon-bench-kept-")

    def tmpdir(name: str) -> str | None:
        if name.startswith("templates compiled"):
            return tempfile.mkdtemp(prefix="riskmon-bench-empty-")
        return kept if name.startswith("templates kept") else None

    times: dict[str, list[float]] = {name: [] for name in cases}
    for name, command in cases.items():  # warm the file cache, the bytecode, the kept templates
        _wall(command, tmpdir(name))
    for _ in range(args.repeats):
        for name, command in cases.items():
            times[name].append(_wall(command, tmpdir(name)))

    bare = times["python (bare interpreter)"]
    print(f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, ", end="")
    print(f"median of {args.repeats} runs (minimum in brackets)\n")
    print("| case | median | minimum |")
    print("|------|-------:|--------:|")
    for name, runs in times.items():
        median, least = statistics.median(runs), min(runs)
        if name.startswith("import "):
            name = f"{name} (less the bare interpreter)"
            median, least = median - statistics.median(bare), least - min(bare)
        print(f"| `{name}` | {median:.3f} s | {least:.3f} s |")
    heavy = _loaded_by_help()
    print(f"\nheavy modules loaded by `riskmon --help`: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
