"""Benchmark: a whole run of a model with 5,000 segments and a 50,000-level categorical.

Synthetic loans (``--rows``, default 1M) scored uniformly from January 2024 to January 2025:
the development window is January to June 2024, the performance cohort of a run as of
31 January 2025 (6-month performance window) July 2024, its current population January 2025
(about 77,000 loans each month, 15 per segment).
Columns: ``loan_id``, ``score_date``, ``pd_score`` (a PD, 6 decimals, the true default
probability), ``default_12m``, ``channel`` (the segment: ``--segments`` values, 5,000 by
default, drawn uniformly), ``zip`` (a categorical characteristic of ``--levels`` values, 50,000
by default, drawn from a Zipf-like law, so that a few hundred codes hold most loans and every
code appears in the development window) and ``x0``..``x4`` (numeric characteristics). Loaded
into PostgreSQL (``COPY``) and SQLite.

Measured per database, each in a fresh subprocess that reports its wall time and peak RSS
(``VmHWM``) and the size of the report it wrote:

- ``first run``: ``riskmon.run.run_models`` as of 2025-01-31 on an empty metric store (SQLite):
  the baseline frozen (5,001 segments × 7 variables of bins), collected, computed, evaluated,
  stored, the report and the index written;
- ``next run``: the same run again, forced (``force=True``: a date that succeeded is otherwise
  not computed again), on a copy of the store the first run left (the baseline read, not
  frozen; every day of the windows read again, the run itself replaced): what a nightly job
  costs at most.

Run (PostgreSQL on 127.0.0.1; the script creates and drops its database):

    .venv/bin/python benchmarks/bench_messy.py --databases postgresql sqlite --repeats 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

# the same helpers as the migration benchmark beside this script
from bench_migration import _admin, _peak_rss_mb, write_records

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
BENCH_DB = "riskmon_messy_bench"
TABLE = "loans"
NUMERIC = [f"x{i}" for i in range(5)]
COLUMNS = ["loan_id", "score_date", "pd_score", "default_12m", "channel", "zip", *NUMERIC]
CREATE = f"""CREATE TABLE {TABLE} (
    loan_id BIGINT, score_date DATE, pd_score DOUBLE PRECISION, default_12m INTEGER,
    channel VARCHAR(16), zip VARCHAR(16), {", ".join(f"{c} DOUBLE PRECISION" for c in NUMERIC)})"""
AS_OF = dt.date(2025, 1, 31)
FIRST_DAY = dt.date(2024, 1, 1)
DAYS = (AS_OF - FIRST_DAY).days + 1
DEVELOPMENT_DAYS = 182  # January to June 2024


def loan_chunks(
    rows: int, segments: int, levels: int, chunk_rows: int, seed: int
) -> Iterator[pd.DataFrame]:
    import pandas as pd

    rng = np.random.default_rng(seed)
    law = 1.0 / np.arange(1, levels + 1) ** 1.1
    law /= law.sum()
    codes = np.array([f"Z{i:05d}" for i in range(levels)], dtype=object)
    channels = np.array([f"ch{i:04d}" for i in range(segments)], dtype=object)
    for begin in range(0, rows, chunk_rows):
        n = min(chunk_rows, rows - begin)
        zips = rng.choice(codes, n, p=law)
        days = rng.integers(0, DAYS, n)
        if begin == 0:  # every code once in the development window
            zips[:levels] = codes
            days[:levels] = rng.integers(0, DEVELOPMENT_DAYS, levels)
        logit = rng.normal(-2.6, 0.9, n)
        pd_true = 1 / (1 + np.exp(-logit))
        frame = pd.DataFrame(
            {
                "loan_id": np.arange(begin, begin + n, dtype=np.int64),
                "score_date": [FIRST_DAY + dt.timedelta(days=int(d)) for d in days],
                "pd_score": np.round(pd_true, 6),
                "default_12m": (rng.random(n) < pd_true).astype(np.int64),
                "channel": rng.choice(channels, n),
                "zip": zips,
            }
        )
        for column in NUMERIC:
            frame[column] = np.round(rng.normal(size=n) + 0.4 * logit, 3)
        yield frame[COLUMNS]


def pg_url(server: str, rows: int) -> str:
    return server.rsplit("/", 1)[0] + f"/{BENCH_DB}_{rows}"


def load_postgresql(server: str, rows: int, chunks: Iterator[pd.DataFrame]) -> str:
    import psycopg

    with psycopg.connect(_admin(server), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}_{rows} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {BENCH_DB}_{rows}")
    url = pg_url(server, rows)
    with psycopg.connect(_admin(url), autocommit=True) as conn:
        conn.execute(CREATE)
        for frame in chunks:
            buffer = io.StringIO()
            frame.to_csv(buffer, index=False, header=False)
            with conn.cursor() as cur, cur.copy(f"COPY {TABLE} FROM STDIN (FORMAT csv)") as copy:
                copy.write(buffer.getvalue())
        conn.execute(f"CREATE INDEX ON {TABLE} (score_date)")
        conn.execute(f"VACUUM (ANALYZE) {TABLE}")
    return url


def drop_postgresql(server: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(_admin(server), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}_{rows} WITH (FORCE)")


def load_sqlite(path: Path, chunks: Iterator[pd.DataFrame]) -> str:
    import sqlite3

    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute(CREATE)
        for frame in chunks:
            frame = frame.assign(score_date=frame["score_date"].map(dt.date.isoformat))
            conn.executemany(
                f"INSERT INTO {TABLE} VALUES ({', '.join('?' * len(COLUMNS))})",
                frame.itertuples(index=False, name=None),
            )
        conn.execute(f"CREATE INDEX score_dates ON {TABLE} (score_date)")
    return f"sqlite:///{path}"


# ---------------------------------------------------------------------------- children
def _config(url: str, folder: Path) -> Any:
    from riskmon.config import parse_config

    model = {
        "name": "bench",
        "source": {"url": url, "table": TABLE},
        "columns": {
            "id": "loan_id",
            "score_date": "score_date",
            "score": "pd_score",
            "label": "default_12m",
            "segments": ["channel"],
        },
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
        "performance_window": "6 months",
        "characteristics": [
            {"name": "zip", "kind": "categorical"},
            *({"name": c, "kind": "numeric"} for c in NUMERIC),
        ],
    }
    document = {
        "store": {
            "url": f"sqlite:///{folder / 'store.db'}",
            "reports_dir": str(folder / "reports"),
        },
        "models": [model],
    }
    return parse_config(document, source="bench", env={})


def child(url: str, folder: str, force: bool) -> dict[str, Any]:
    from riskmon.run import run_models
    from riskmon.store import MetricStore
    from riskmon.store.migrate import check_schema

    config = _config(url, Path(folder))
    # as a user does: `riskmon db upgrade` in its own process (Alembic is not imported by a
    # run), then the run checks the schema as `riskmon run` does
    riskmon = Path(sys.executable).with_name("riskmon")
    subprocess.run([riskmon, "db", "upgrade", "--url", config.store.url], check=True)
    store = MetricStore.open(config.store.url)
    check_schema(store.engine)
    began = time.perf_counter()
    (outcome,) = run_models(config, [], AS_OF, store=store, force=force)
    seconds = time.perf_counter() - began
    if not outcome.ok:
        return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), "error": outcome.error}
    report = Path(outcome.report_path) if outcome.report_path else None
    statuses: dict[str, int] = {}
    for alert in outcome.alerts:
        statuses[str(alert.status)] = statuses.get(str(alert.status), 0) + 1
    return {
        "seconds": seconds,
        "peak_rss_mb": _peak_rss_mb(),
        "report_bytes": report.stat().st_size if report else None,
        "index_bytes": (Path(folder) / "reports" / "index.html").stat().st_size,
        "alerts": statuses,
        "run_status": str(outcome.alert_status),
    }


def run_child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "_child", *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_child":
        print(json.dumps(child(argv[1], argv[2], argv[3] == "force")))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", nargs="+", default=["postgresql", "sqlite"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--segments", type=int, default=5_000)
    parser.add_argument("--levels", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    parser.add_argument("--out", type=Path, default=Path("bench_messy.jsonl"))
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="riskmon-messy-bench-"))
    records = []
    for database in args.databases:
        chunks = loan_chunks(args.rows, args.segments, args.levels, args.chunk_rows, args.seed)
        began = time.perf_counter()
        if database == "postgresql":
            url = load_postgresql(args.pg_server, args.rows, chunks)
        else:
            url = load_sqlite(workdir / "loans.db", chunks)
        print(f"{database}: loaded in {time.perf_counter() - began:.0f} s", flush=True)
        for repeat in range(args.repeats):
            first = workdir / f"{database}-{repeat}-first"
            first.mkdir()
            result = run_child([url, str(first), "new"])
            records.append({"database": database, "what": "first run", "repeat": repeat} | result)
            print(json.dumps(records[-1]), flush=True)
            following = workdir / f"{database}-{repeat}-next"
            shutil.copytree(first, following)
            result = run_child([url, str(following), "force"])
            records.append({"database": database, "what": "next run", "repeat": repeat} | result)
            print(json.dumps(records[-1]), flush=True)
        if database == "postgresql":
            drop_postgresql(args.pg_server, args.rows)
    shutil.rmtree(workdir, ignore_errors=True)
    write_records(args.out, records)
    print(summarize(records))
    print(f"\n{platform.platform()}, Python {platform.python_version()}")


def summarize(records: list[dict[str, Any]]) -> str:
    lines = [
        "| database | run | median s | per repeat s | peak RSS MB | report bytes | alerts |",
        "|---|---|---:|---|---:|---:|---|",
    ]
    for key in dict.fromkeys((r["database"], r["what"]) for r in records):
        mine = [r for r in records if (r["database"], r["what"]) == key]
        seconds = [r["seconds"] for r in mine]
        each = ", ".join(f"{s:.1f}" for s in seconds)
        rss = max(r["peak_rss_mb"] for r in mine)
        size = max(r.get("report_bytes") or 0 for r in mine)
        alerts = mine[-1].get("alerts") or mine[-1].get("error")
        lines.append(
            f"| {key[0]} | {key[1]} | {statistics.median(seconds):.1f} | {each} | {rss:.0f} | "
            f"{size:,} | {alerts} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
