"""Peak RSS of each step of one run of ``bench_messy.py``'s model: where its memory goes.

Runs ``bench_messy.child`` (one ``run_models`` of the 5,000-segment model) in this process with
each step of ``riskmon.run.run_model`` wrapped — the baseline (``for_run``), the collect, the
figures (``compute_run``), judging, storing (``MetricStore.complete_run``), the report and the
index, and inside the collect its aggregate's read and ``assemble`` — and prints, per step, the
resident memory before it, its peak (``VmHWM``, reset before each step through
``/proc/self/clear_refs``; a step holding others, the collect, counts its peak from the reset
of the last one inside it) and after it, and its wall time. Linux only.

The loans must be loaded already: ``bench_messy.py`` drops its database at the end, so load it
with its functions first, e.g.

    .venv/bin/python -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_messy as b;
    b.load_postgresql(b.DEFAULT_PG_SERVER, 1_000_000,
                      b.loan_chunks(1_000_000, 5_000, 50_000, 250_000, 7))"
    mkdir /tmp/first && .venv/bin/python benchmarks/bench_messy_steps.py \\
        postgresql+psycopg://postgres@127.0.0.1:5432/riskmon_messy_bench_1000000 /tmp/first new
    cp -r /tmp/first /tmp/next && .venv/bin/python benchmarks/bench_messy_steps.py \\
        postgresql+psycopg://postgres@127.0.0.1:5432/riskmon_messy_bench_1000000 /tmp/next force

(the first runs on an empty store and freezes the baseline; the second, forced, is the same
date again on a copy of the store the first left). With ``--python-objects`` after the mode,
each step's line also gives the Python objects (numpy's arrays included) held before it, at
its peak and after it, as ``tracemalloc`` counts them (the run is then several times slower).

Since each step resets ``VmHWM``, the process's own peak (and ``/usr/bin/time``'s, read from the
same counter) covers only the steps from the last reset on: the run's peak is the highest of
the steps' peaks, printed last as ``run peak``.
"""

from __future__ import annotations

import functools
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
if sys.argv[4:] == ["--python-objects"]:
    tracemalloc.start()  # before riskmon is imported, so that its modules are counted

import bench_messy


def _memory() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in MB."""
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) // 1024
    return out


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _objects() -> str:
    """What tracemalloc counts now (before a step), when it is tracing; resets its peak."""
    if not tracemalloc.is_tracing():
        return ""
    tracemalloc.reset_peak()
    return str(tracemalloc.get_traced_memory()[0] // 2**20)


def _objects_after(before: str) -> str:
    if not before:
        return ""
    now, peak = (n // 2**20 for n in tracemalloc.get_traced_memory())
    return f"; objects before {before:>4s} MB, peak {peak:4d} MB, after {now:4d} MB"


#: the highest peak of any step so far, in MB
_highest = [0]


def _traced(function: Callable[..., Any], label: str) -> Callable[..., Any]:
    @functools.wraps(function)
    def traced(*args: Any, **kwargs: Any) -> Any:
        _reset_peak()
        objects = _objects()
        before, began = _memory()["VmRSS"], time.perf_counter()
        result = function(*args, **kwargs)
        now = _memory()
        _highest[0] = max(_highest[0], now["VmHWM"])
        print(
            f"{label:18s} RSS before {before:5d} MB, peak {now['VmHWM']:5d} MB, "
            f"after {now['VmRSS']:5d} MB, {time.perf_counter() - began:6.1f} s"
            f"{_objects_after(objects)}",
            file=sys.stderr,
            flush=True,
        )
        return result

    return traced


def main() -> None:
    import riskmon.collect as collect_module
    import riskmon.run as run_module
    from riskmon.store import MetricStore

    url, folder, mode = sys.argv[1:4]
    for name, label in (("_aggregate", "  collect: read"), ("assemble", "  collect: tables")):
        setattr(collect_module, name, _traced(getattr(collect_module, name), label))
    for name, label in (
        ("for_run", "baseline"),
        ("collect", "collect"),
        ("compute_run", "figures"),
        ("_judge", "judge"),
        ("keep_cells", "keep cells"),
        ("_render_report", "report"),
        ("_render_index", "index"),
    ):
        setattr(run_module, name, _traced(getattr(run_module, name), label))
    MetricStore.complete_run = _traced(MetricStore.complete_run, "store")
    print(f"imports            RSS {_memory()['VmRSS']} MB", file=sys.stderr)
    print(json.dumps(bench_messy.child(url, folder, mode == "force")))
    print(f"run peak           {_highest[0]} MB (the highest step's)", file=sys.stderr)


if __name__ == "__main__":
    main()
