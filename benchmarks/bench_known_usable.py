"""Benchmark: a whole run's statements on PostgreSQL with and without the test of each loan's
score and weight (``riskmon.collect.exclusions.known_usable``: a window the count of excluded
loans finds nothing to leave out of is read without it).

Needs a database and workdir that ``bench_whole.py --engines postgresql --keep --workdir DIR``
left (its loans, its model and its template store with the baseline frozen). The run's collect
request is built as a run builds it (as of 2025-03-31) and collected twice, once as the
PostgreSQL profile reads (``one_snapshot``) and once as if every statement had to test the
loans; each statement both collects send to the loans' database is recorded with its
parameters. Then each statement of both lists is timed in turn, ``--repeats`` times
interleaved, on one connection with riskmon's settings (``jit`` and ``enable_sort`` off), with
PostgreSQL's parallel workers (``--workers``, default 2, as a run has them) or without (0: one
process, so that the figure is the statement's CPU time and the machine's noise matters less).
Printed: per statement its minimum and median seconds both ways, and the totals of the minima
and of the medians::

    .venv/bin/python benchmarks/bench_whole.py --rows 1000000 --repeats 1 --engines postgresql \
        --keep --workdir /tmp/bw
    .venv/bin/python benchmarks/bench_known_usable.py --workdir /tmp/bw/postgresql --workers 0
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

from riskmon.baseline import for_run
from riskmon.collect import Source, collect
from riskmon.config import load_config
from riskmon.plan import plan_run
from riskmon.store import MetricStore
from riskmon.store.engine import store_engine

AS_OF = dt.date(2025, 3, 31)
MODEL = "bench_pd"
#: the statements timed: those that read the loans (not the catalogue, not the settings)
MARKER = "FROM loans"
#: per way of reading, the statements sent and their parameters
Statements = dict[str, list[tuple[str, Any]]]


def _statements(workdir: Path, scratch: Path) -> tuple[str, Statements]:
    """The loans' URL, and per way of reading the statements a collect sent, with parameters."""
    os.environ["BENCH_STORE_URL"] = f"sqlite:///{scratch / 'store.db'}"
    os.environ["BENCH_REPORTS_DIR"] = str(scratch / "reports")
    shutil.copy(workdir / "template.db", scratch / "store.db")
    config = load_config(workdir / "riskmon.yaml")
    model = config.model(MODEL)
    store = MetricStore(store_engine(config.store.url))
    out: dict[str, list[tuple[str, Any]]] = {}
    with Source(model) as source:
        request = for_run(model, source, store, plan_run(model, AS_OF)).request
        for name, one_snapshot in (("tested", False), ("untested", True)):
            source.profile = dataclasses.replace(source.profile, one_snapshot=one_snapshot)
            seen: list[tuple[str, Any]] = []

            def record(_c: Any, _cur: Any, statement: str, parameters: Any, *_: Any) -> None:
                if MARKER in statement:
                    seen.append((statement, parameters))  # noqa: B023  (used in this pass)

            event.listen(source.engine, "before_cursor_execute", record)
            try:
                collect(source, request)
            finally:
                event.remove(source.engine, "before_cursor_execute", record)
            out[name] = seen
        url = source.engine.url.render_as_string(hide_password=False)
    return url, out


def _time(
    url: str, statements: dict[str, list[tuple[str, Any]]], repeats: int, workers: int
) -> None:
    import psycopg

    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    seconds: dict[str, list[list[float]]] = {k: [[] for _ in v] for k, v in statements.items()}
    with psycopg.connect(dsn, autocommit=True) as connection:
        for setting in ("jit = off", "enable_sort = off"):
            connection.execute(f"SET {setting}")
        connection.execute(f"SET max_parallel_workers_per_gather = {int(workers)}")
        with connection.cursor() as cursor:
            for _ in range(repeats):
                for name, listed in statements.items():
                    for i, (sql, parameters) in enumerate(listed):
                        start = time.perf_counter()
                        cursor.execute(sql.encode(), parameters)
                        cursor.fetchall()
                        seconds[name][i].append(time.perf_counter() - start)
    tested, untested = seconds["tested"], seconds["untested"]
    print("| statement | tested min s | untested min s | tested median s | untested median s |")
    print("|---|---:|---:|---:|---:|")
    for i, (sql, _) in enumerate(statements["tested"]):
        a, b = tested[i], untested[i]
        head = " ".join(sql.split())[:60].replace("|", "/")
        print(
            f"| {i} `{head}` | {min(a):.3f} | {min(b):.3f} | "
            f"{statistics.median(a):.3f} | {statistics.median(b):.3f} |"
        )
    total = {k: sum(min(s) for s in v) for k, v in seconds.items()}
    medians = {k: sum(statistics.median(s) for s in v) for k, v in seconds.items()}
    print(
        f"| total | {total['tested']:.3f} | {total['untested']:.3f} | "
        f"{medians['tested']:.3f} | {medians['untested']:.3f} |"
    )
    print(
        f"\nuntested / tested: {total['untested'] / total['tested']:.3f} (minima), "
        f"{medians['untested'] / medians['tested']:.3f} (medians); workers {workers}, "
        f"{repeats} repeats"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        url, statements = _statements(args.workdir, Path(scratch))
    if len(statements["tested"]) != len(statements["untested"]):
        raise SystemExit(
            f"the two collects sent {len(statements['tested'])} and "
            f"{len(statements['untested'])} statements"
        )
    _time(url, statements, args.repeats, args.workers)


if __name__ == "__main__":
    main()
