"""Start-up time of the ``riskmon`` command and of riskmon's heavier modules.

Measured, each in a fresh interpreter, repeats interleaved so that machine noise spreads
evenly over the cases:

- ``riskmon --help``: wall time of the installed console script, from spawn to exit;
- ``import <module>`` for ``riskmon.metrics`` and ``riskmon.run``: wall time of
  ``python -c "import <module>"`` less that of ``python -c "pass"`` (the bare interpreter);
- which heavy third-party modules ``riskmon --help`` loads (none is the goal).

Reported: the median of ``--repeats`` runs (and the minimum, the least disturbed run).

    .venv/bin/python benchmarks/bench_startup.py --repeats 15
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import subprocess
import sys
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


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for command in cases.values():  # warm the file cache and the bytecode
        _wall(command)
    for _ in range(args.repeats):
        for name, command in cases.items():
            times[name].append(_wall(command))

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
