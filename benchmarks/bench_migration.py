"""Benchmark: the rating migration matrix counted by the database against pulling the snapshots.

Synthetic obligor-snapshots (``--sizes``, default 1M and 10M rows): half scored in March 2024
(the start of a 12-month horizon), half in March 2025 (its end); 90 % of the obligors are in
both, the others appeared or left; 0.2 % of the rows are a second row of an obligor on the same
date (a duplicate). Columns: ``obligor_id``, ``score_date``, ``pd`` (a PD, 4 decimals),
``bad`` (0/1 on start rows, NULL at the end), ``exposure`` and ``segment`` (3 values). Loaded
into PostgreSQL (``COPY``) and DuckDB.

The request: grades on a 7-grade master scale of the PD, weighted, per segment. Measured per
database and size, each repeat in a fresh subprocess that reports its peak RSS (``VmHWM``):

- ``riskmon/pushdown``: :func:`riskmon.collect.collect_migrations` (one statement: snapshots
  tagged, ranked by window functions, pivoted per obligor and grouped);
- ``riskmon/stream``: the same with ``strategy="stream"`` (rows in obligor order, a chunk at a
  time; 1M only unless ``--stream-10m``);
- ``read_sql+crosstab``: ``pandas.read_sql`` of both snapshots' columns, each obligor's latest
  row kept (duplicates dropped), the two merged on the obligor and ``pandas.crosstab`` of the
  grades — the whole-population matrix only, no margins or segments.

Every method's K×K matrix (whole population) is checked equal. Repeats are interleaved; the
report gives medians.

Run (PostgreSQL on 127.0.0.1; the script creates and drops its database):

    .venv/bin/python benchmarks/bench_migration.py --databases postgresql duckdb \
        --sizes 1000000 10000000 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

START = (dt.date(2024, 3, 1), dt.date(2024, 3, 31))
END = (dt.date(2025, 3, 1), dt.date(2025, 3, 31))
EDGES = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
SEGMENTS = np.array(["retail", "sme", "corporate"], dtype=object)
DEFAULT_PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
BENCH_DB = "riskmon_migration_bench"
TABLE = "ratings"
CREATE = f"""CREATE TABLE {TABLE} (
    obligor_id BIGINT, score_date DATE, pd DOUBLE PRECISION, bad INTEGER,
    exposure DOUBLE PRECISION, segment VARCHAR(16))"""
COLUMNS = ["obligor_id", "score_date", "pd", "bad", "exposure", "segment"]


def snapshot_chunks(rows: int, chunk_rows: int, seed: int) -> Iterator[pd.DataFrame]:
    """``rows`` obligor-snapshots in chunks: obligor i's start row, then (for most) its end row."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    obligors = rows // 2
    for first in range(0, obligors, chunk_rows // 2):
        n = min(chunk_rows // 2, obligors - first)
        ids = np.arange(first, first + n, dtype=np.int64)
        logit = rng.normal(-3.5, 1.2, n)
        moved = logit + rng.normal(0, 0.5, n)
        start_in = rng.random(n) < 0.95
        end_in = ~start_in | (rng.random(n) < 0.95)
        parts = []
        for present, window, score, labeled in (
            (start_in, START, logit, True),
            (end_in, END, moved, False),
        ):
            k = int(present.sum())
            days = rng.integers(0, (window[1] - window[0]).days + 1, k)
            parts.append(
                pd.DataFrame(
                    {
                        "obligor_id": ids[present],
                        "score_date": pd.to_datetime(window[0]) + pd.to_timedelta(days, "D"),
                        "pd": np.round(1 / (1 + np.exp(-score[present])), 4),
                        "bad": (
                            pd.array((rng.random(k) < 0.03).astype(int), dtype="Int64")
                            if labeled
                            else pd.array([pd.NA] * k, dtype="Int64")
                        ),
                        "exposure": np.round(rng.gamma(2.0, 5000.0, k), 2),
                        "segment": SEGMENTS[ids[present] % 3],
                    }
                )
            )
        frame = pd.concat(parts, ignore_index=True)
        twice = frame.sample(frac=0.002, random_state=int(rng.integers(1 << 31)))
        frame = pd.concat([frame, twice], ignore_index=True)
        frame["score_date"] = frame["score_date"].dt.date
        yield frame


def pg_url(server: str, rows: int) -> str:
    return server.rsplit("/", 1)[0] + f"/{BENCH_DB}_{rows}"


def _admin(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def load_postgresql(server: str, rows: int, chunk_rows: int, seed: int) -> None:
    import psycopg

    with psycopg.connect(_admin(server), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}_{rows} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {BENCH_DB}_{rows}")
    with psycopg.connect(_admin(pg_url(server, rows)), autocommit=True) as conn:
        conn.execute(CREATE)
        for frame in snapshot_chunks(rows, chunk_rows, seed):
            buffer = io.StringIO()
            frame[COLUMNS].to_csv(buffer, index=False, header=False)
            with conn.cursor() as cur, cur.copy(f"COPY {TABLE} FROM STDIN (FORMAT csv)") as copy:
                copy.write(buffer.getvalue())
        conn.execute(f"CREATE INDEX ON {TABLE} (score_date)")
        conn.execute(f"VACUUM (ANALYZE) {TABLE}")


def drop_postgresql(server: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(_admin(server), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}_{rows} WITH (FORCE)")


def load_duckdb(path: Path, rows: int, chunk_rows: int, seed: int) -> None:
    import duckdb

    path.unlink(missing_ok=True)
    with duckdb.connect(str(path)) as conn:
        conn.execute(CREATE)
        for frame in snapshot_chunks(rows, chunk_rows, seed):
            conn.register("frame", frame[COLUMNS])
            conn.execute(f"INSERT INTO {TABLE} SELECT * FROM frame")
            conn.unregister("frame")
        conn.execute("CHECKPOINT")


# ---------------------------------------------------------------------------- children
def _peak_rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _model(url: str) -> Any:
    from riskmon.config import parse_config

    model = {
        "name": "bench",
        "source": {"url": url, "table": TABLE},
        "columns": {
            "id": "obligor_id",
            "score_date": "score_date",
            "score": "pd",
            "label": "bad",
            "weight": "exposure",
            "segments": ["segment"],
        },
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-03-01", "end": "2024-03-31"},
        "calibration": {"grades": EDGES},
        "rating": {"migration": True},
    }
    return parse_config({"models": [model]}, source="bench", env={}).models[0]


def child_riskmon(url: str, strategy: str) -> dict[str, Any]:
    from riskmon.collect import (
        CollectRequest,
        MigrationRequest,
        Population,
        Source,
        Variable,
        collect_migrations,
    )
    from riskmon.metrics import Binning
    from riskmon.plan import DateWindow

    grades = Binning("numeric", edges=tuple(EDGES))
    request = MigrationRequest(
        CollectRequest(
            populations=[
                Population("start", DateWindow(*START), labeled=True),
                Population("end", DateWindow(*END), labeled=False),
            ],
            variables=[Variable("pd_grade", "pd", grades)],
            score_date="score_date",
            label="bad",
            weight="exposure",
            segments=("segment",),
        ),
        obligor="obligor_id",
    )
    began = time.perf_counter()
    with Source(_model(url)) as source:
        tables = collect_migrations(source, request, strategy=strategy)  # type: ignore[arg-type]
    seconds = time.perf_counter() - began
    k = len(EDGES) + 1
    whole = tables.segments[""]
    matrix = [[whole.count((i, j)) for j in range(k)] for i in range(k)]
    return {
        "seconds": seconds,
        "peak_rss_mb": _peak_rss_mb(),
        "matrix": matrix,
        "duplicates": list(tables.duplicates),
    }


def child_read_sql(url: str) -> dict[str, Any]:
    import pandas as pd
    from sqlalchemy import create_engine, text

    began = time.perf_counter()
    engine = create_engine(url)
    query = text(
        f"SELECT obligor_id, score_date, pd, bad, exposure, segment FROM {TABLE} "
        "WHERE score_date BETWEEN :a AND :b"
    )
    snapshots = []
    with engine.connect() as conn:
        for lo, hi in (START, END):
            frame = pd.read_sql(query, conn, params={"a": lo, "b": hi})
            frame = frame.sort_values(["obligor_id", "score_date"])
            last = frame.groupby("obligor_id")["score_date"].transform("max")
            frame = frame[frame["score_date"] == last]
            frame = frame[~frame["obligor_id"].duplicated(keep=False)]  # duplicates dropped
            frame["grade"] = pd.cut(frame["pd"], [-np.inf, *EDGES, np.inf], labels=False)
            snapshots.append(frame)
    engine.dispose()
    then, now = snapshots
    # obligors duplicated in either snapshot leave the matrix, as riskmon leaves them out
    then = then[then["bad"] != 1]
    both = then.merge(now, on="obligor_id", suffixes=("_then", "_now"))
    table = pd.crosstab(both["grade_then"], both["grade_now"])
    k = len(EDGES) + 1
    table = table.reindex(index=range(k), columns=range(k), fill_value=0)
    seconds = time.perf_counter() - began
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), "matrix": table.to_numpy().tolist()}


def run_child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "_child", *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", nargs="+", default=["postgresql", "duckdb"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk-rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pg-server", default=DEFAULT_PG_SERVER)
    parser.add_argument("--stream-10m", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("bench_migration.jsonl"))
    args = parser.parse_args(argv)
    if args.databases and args.databases[0] == "_child":  # pragma: no cover
        raise SystemExit("use: bench_migration.py _child ...")
    records = []
    workdir = Path(tempfile.mkdtemp(prefix="riskmon-migration-bench-"))
    for rows in args.sizes:
        for database in args.databases:
            began = time.perf_counter()
            if database == "postgresql":
                load_postgresql(args.pg_server, rows, args.chunk_rows, args.seed)
                url = pg_url(args.pg_server, rows)
            else:
                path = workdir / f"ratings_{rows}.duckdb"
                load_duckdb(path, rows, args.chunk_rows, args.seed)
                url = f"duckdb:///{path}"
            print(f"{database} {rows:,}: loaded in {time.perf_counter() - began:.0f} s", flush=True)
            methods = [("riskmon/pushdown", ["riskmon", url, "auto"])]
            if rows <= 1_000_000 or args.stream_10m:
                methods.append(("riskmon/stream", ["riskmon", url, "stream"]))
            methods.append(("read_sql+crosstab", ["read_sql", url]))
            matrices = {}
            for repeat in range(args.repeats):
                for name, child in methods:
                    result = run_child(child)
                    matrices[name] = result.pop("matrix")
                    record = {"database": database, "rows": rows, "method": name}
                    record |= {"repeat": repeat} | result
                    records.append(record)
                    print(json.dumps(record), flush=True)
            reference = matrices["riskmon/pushdown"]
            for name, matrix in matrices.items():
                assert matrix == reference, f"{name} counts a different matrix on {database}"
            if database == "postgresql":
                drop_postgresql(args.pg_server, rows)
            else:
                path.unlink(missing_ok=True)
    write_records(args.out, records)
    print(summarize(records))
    print(f"\n{platform.platform()}, Python {platform.python_version()}")


def write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """The records as JSON lines in ``path`` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


def summarize(records: list[dict[str, Any]]) -> str:
    lines = [
        "| database | rows | method | median s | per repeat s | peak RSS MB |",
        "|---|---:|---|---:|---|---:|",
    ]
    keys = dict.fromkeys((r["database"], r["rows"], r["method"]) for r in records)
    for database, rows, method in keys:
        mine = [
            r
            for r in records
            if (r["database"], r["rows"], r["method"]) == (database, rows, method)
        ]
        seconds = [r["seconds"] for r in mine]
        rss = max(r["peak_rss_mb"] for r in mine)
        each = ", ".join(f"{s:.2f}" for s in seconds)
        median = statistics.median(seconds)
        lines.append(f"| {database} | {rows:,} | {method} | {median:.2f} | {each} | {rss:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        kind, *rest = sys.argv[2:]
        result = child_riskmon(*rest) if kind == "riskmon" else child_read_sql(*rest)
        print(json.dumps(result))
    else:
        main()
