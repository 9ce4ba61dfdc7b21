"""Benchmark: whether the runs of one process slow down one after another, as a backfill's do.

``bench_incremental.py``'s loans (``--rows`` at ``--per-day`` a day, PostgreSQL, database
``riskmon_bench_incremental_<rows>``, loaded unless there already) and model, its baseline
frozen into a new SQLite store, then ``run_models`` as of each of ``--days`` consecutive dates
ending at the newest day, oldest first, in this one process (``notify=False``). Printed per
date: the run's seconds, of which the report and the index (``riskmon.run``'s two render
helpers, wrapped to be timed apart); then the totals and the medians of the runs of dates
2-31, 61-90 and the last 30. With ``--objects``, also the objects the garbage collector tracks
after each run (not frozen; no collection forced, so as a run leaves them).

    .venv/bin/python benchmarks/bench_backfill_growth.py --rows 1000000 --per-day 3000 --days 150
    PYTHONPATH=/tmp/before .venv/bin/python benchmarks/bench_backfill_growth.py ...  # before
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_incremental as bi  # the loans, their loader and the model
import bench_run as br  # the baseline's freeze


def _timed(spent: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def inner(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    return inner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--per-day", type=int, default=3_000)
    parser.add_argument("--days", type=int, default=150)
    parser.add_argument("--objects", action="store_true")
    parser.add_argument("--pg-server", default=bi.bc.DEFAULT_PG_SERVER)
    args = parser.parse_args()
    args.score_decimals = 4
    if not bi._loaded(args):
        bi.load(args.pg_server, args.rows, args.per_day, True, 500_000, 2025, 4)
    work = Path(tempfile.mkdtemp(prefix="riskmon_bench_growth_"))
    config_file = bi.write_config(work, bi._url(args.pg_server, args.rows), 7)
    os.environ.update(bi._env(work / "store.db", work))
    br.freeze_template(config_file, work / "store.db", work)

    import riskmon.run as rr
    from riskmon.config import load_config
    from riskmon.store import MetricStore
    from riskmon.store.engine import store_engine

    spent = {"report": 0.0, "index": 0.0}
    rr._render_report = _timed(spent, "report", rr._render_report)  # type: ignore[assignment]
    rr._render_index = _timed(spent, "index", rr._render_index)  # type: ignore[assignment]
    config = load_config(config_file)
    store = MetricStore(store_engine(config.store.url))
    newest = bi.newest(args.rows, args.per_day)
    runs: list[tuple[float, float, float]] = []
    print("| date | run s | report s | index s |" + (" objects |" if args.objects else ""))
    for back in reversed(range(args.days)):
        day = newest - dt.timedelta(days=back)
        spent.update(report=0.0, index=0.0)
        start = time.perf_counter()
        (outcome,) = rr.run_models(config, [bi.MODEL], day, store=store, notify=False)
        seconds = time.perf_counter() - start
        assert outcome.ok, outcome.error
        runs.append((seconds, spent["report"], spent["index"]))
        objects = f" {len(gc.get_objects())} |" if args.objects else ""
        print(f"| {day} | {seconds:.3f} | {spent['report']:.3f} | {spent['index']:.3f} |{objects}")
    total = sum(r[0] for r in runs)
    report, index = sum(r[1] for r in runs), sum(r[2] for r in runs)
    print(f"\n{len(runs)} runs: {total:.1f} s (report {report:.1f} s, index {index:.1f} s)")
    for label, part in (("2-31", runs[1:31]), ("61-90", runs[60:90]), ("last 30", runs[-30:])):
        if part:
            print(f"median run, dates {label}: {statistics.median(r[0] for r in part):.3f} s")


if __name__ == "__main__":
    main()
