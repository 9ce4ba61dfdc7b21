"""What a model's history costs each run: its report and the index, with a year of runs stored.

Every run writes its report (and rewrites its previous run's, so that it links the new one)
and the index; both list the model's runs. A daily backfill or a year of nightly runs makes
that list 365 runs long. This script builds the demo (``riskmon demo``), copies its store,
gives ``--model`` ``--runs`` more runs before its first one (each a copy of its newest run:
its row, figures, bins and alerts), and times, in this process, rendering the newest run's
report (with its neighbours) and the index, ``--repeats`` times; the median is reported.
Compare two versions of riskmon by running it with ``PYTHONPATH`` at a checkout of each.

    .venv/bin/python benchmarks/bench_history.py --runs 365 --repeats 7
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _demo(workdir: Path) -> Path:
    folder = workdir / "demo"
    if not (folder / "riskmon.yaml").exists():
        riskmon = Path(sys.executable).with_name("riskmon")
        subprocess.run([str(riskmon), "demo", "--dir", str(folder)], check=True)
    return folder


def _copy_rows(db: sqlite3.Connection, table: str, run_id: int, new_id: int) -> None:
    columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] != "id"]
    chosen = ", ".join("?" if c == "run_id" else c for c in columns)
    db.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} FROM {table} WHERE run_id = ?",
        (new_id, run_id),
    )


def grow(store: Path, model: str, runs: int) -> tuple[int, dt.date]:
    """Add ``runs`` runs of ``model`` before its first, copies of its newest; return how many
    it has and its newest as-of date."""
    db = sqlite3.connect(store)
    try:
        (model_id,) = db.execute("SELECT id FROM models WHERE name = ?", (model,)).fetchone()
        newest_id, newest, first = db.execute(
            "SELECT id, as_of, (SELECT min(as_of) FROM runs WHERE model_id = ?) FROM runs "
            "WHERE model_id = ? ORDER BY as_of DESC LIMIT 1",
            (model_id, model_id),
        ).fetchone()
        columns = [r[1] for r in db.execute("PRAGMA table_info(runs)") if r[1] != "id"]
        row = dict(
            zip(
                columns,
                db.execute(
                    f"SELECT {', '.join(columns)} FROM runs WHERE id = ?", (newest_id,)
                ).fetchone(),
                strict=True,
            )
        )
        start = dt.date.fromisoformat(first)
        for i in range(1, runs + 1):
            row["as_of"] = (start - dt.timedelta(days=i)).isoformat()
            cursor = db.execute(
                f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                list(row.values()),
            )
            for table in ("figures", "bin_stats", "alerts"):
                _copy_rows(db, table, newest_id, int(cursor.lastrowid or 0))
        db.commit()
        (count,) = db.execute(
            "SELECT count(*) FROM runs WHERE model_id = ?", (model_id,)
        ).fetchone()
        return int(count), dt.date.fromisoformat(newest)
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=365)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--model", default="behaviour_pd")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/riskmon-bench-history"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    demo = _demo(args.workdir)
    store = args.workdir / "history.db"
    shutil.copy(demo / "riskmon.db", store)
    n, newest = grow(store, args.model, args.runs)

    import riskmon
    from riskmon.config import load_config
    from riskmon.report.render import render_index, render_run_report
    from riskmon.store import MetricStore

    loaded = load_config(demo / "riskmon.yaml")
    where = {"url": f"sqlite:///{store}", "reports_dir": args.workdir / "reports"}
    config = loaded.model_copy(update={"store": loaded.store.model_copy(update=where)})
    metric_store = MetricStore.open(config.store.url)
    times = []
    for _ in range(args.repeats + 1):  # the first warms the templates
        start = time.perf_counter()
        render_run_report(config, metric_store, args.model, newest)
        render_index(config, metric_store)
        times.append(time.perf_counter() - start)
    print(f"# riskmon {riskmon.__version__} from {Path(riskmon.__file__).parent}")
    print(
        f"{args.model}: {n} runs; the newest run's report and the index: median "
        f"{statistics.median(times[1:]):.3f} s ({', '.join(f'{t:.3f}' for t in times[1:])})"
    )


if __name__ == "__main__":
    main()
