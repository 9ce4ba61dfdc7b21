"""Benchmark: collecting a run's count tables from Apache Spark (a Thrift server, ``local[2]``).

The loans of ``bench_collect.py`` (``--sizes``, default 1M and 10M rows: 12 numeric and 8
categorical characteristics, a weight, a segment), written as Parquet and read by Spark as a
table over the files. For each size a fresh Thrift server is started (``tests/spark_server.py``,
``--driver-memory``, default 4g) and stopped by its PID; measured, repeats interleaved, medians
reported:

- ``riskmon/<shape>``: :func:`riskmon.collect.collect` through ``hive://`` with each collect
  shape, each repeat in a fresh subprocess reporting its wall time and peak RSS (``VmHWM``);
- ``floor/<shape>``: hand-written Spark SQL for the same tables, results fetched and
  discarded: ``bench_collect.py``'s shapes (one statement per variable, ``UNION ALL``, a CTE,
  packs, ``GROUPING SETS``) and Spark's own unpivot, ``LATERAL VIEW stack`` (one scan, one
  aggregate); the floor is the fastest of them;
- ``pull/toPandas``: a PySpark session (its own JVM, ``local[2]``) reads the Parquet files,
  filters the windows and ``toPandas()`` the needed columns, then the tables are computed in
  memory as ``bench_collect.py``'s ``read_sql`` does (peak RSS of the Python process and of
  its JVM);

The Spark driver's (the Thrift server's) resident memory is read from ``/proc`` after each
method (``VmRSS``) and at the end (``VmHWM``, its peak).

Run (Java and ``pip install pyspark 'riskmon[spark]'`` needed):

    .venv/bin/python benchmarks/bench_spark.py --sizes 1000000 --repeats 3
    .venv/bin/python benchmarks/bench_spark.py --sizes 10000000 --repeats 2 --methods \\
        riskmon/packed riskmon/union_all floor/packed floor/cte floor/stack pull/toPandas
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_collect import (
    CATEGORICAL,
    COLUMN_SQL,
    CURRENT,
    NUMERIC,
    PERFORMANCE,
    TABLE,
    chunks,
    count_in_memory,
    fit_binnings,
    floor_statements,
    make_request,
    run_child,
)

from tests import spark_server

SHAPES = ["packed", "grouping_sets", "union_all", "per_variable"]
FLOORS = ["packed", "union_all", "cte", "grouping_sets", "stack"]
NEEDED = ["score_date", "pd_score", "bad", "exposure", "channel", *NUMERIC, *CATEGORICAL]


# ---------------------------------------------------------------------------- data
def write_parquet(folder: Path, rows: int, chunk_rows: int, seed: int) -> Path:
    """The loans as Parquet files in ``folder`` (one file per chunk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    types = {"BIGINT": pa.int64(), "DATE": pa.date32(), "SMALLINT": pa.int16()}
    types |= {"DOUBLE PRECISION": pa.float64(), "VARCHAR": pa.string()}
    schema = pa.schema([(name, types[kind]) for name, kind in COLUMN_SQL])
    for i, frame in enumerate(chunks(rows, chunk_rows, seed)):
        table = pa.Table.from_pandas(frame[[c for c, _ in COLUMN_SQL]], schema=schema)
        pq.write_table(table, folder / f"part-{i:04d}.parquet")
    return folder


def create_table(server: spark_server.SparkServer, folder: Path) -> None:
    spark_server.sql(server, f"DROP TABLE IF EXISTS {TABLE}")
    spark_server.sql(server, f"CREATE TABLE {TABLE} USING parquet LOCATION '{folder}'")


def proc_mb(pid: int | str, field: str) -> float:
    """A memory field of ``/proc/<pid>/status`` (``VmRSS``, its peak ``VmHWM``) in MB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------------- the floor
def _literal_sql(statement: Any, url: str) -> str:
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        return str(statement.compile(engine, compile_kwargs={"literal_binds": True}))
    finally:
        engine.dispose()


def floor_sql(url: str, request: Any, shape: str) -> list[str]:
    """The floor's statements for ``shape`` as Spark SQL text."""
    from sqlalchemy import Double, MetaData, Table, create_engine, select

    engine = create_engine(url)
    with engine.connect() as connection:
        loans = Table(TABLE, MetaData(), autoload_with=connection)
    engine.dispose()
    if shape != "stack":
        return [_literal_sql(s, url) for s in floor_statements(loans, request, shape, "case")]
    # one scan: the keys of every variable computed once, then each loan unpivoted into one
    # row per variable by stack() and grouped by one aggregate
    (packed,) = floor_statements(loans, request, "grouping_sets", "case")
    keys = [c for c in packed.selected_columns if c.name.startswith("k_")][: len(request.variables)]
    head = [c for c in packed.selected_columns if c.name in ("population", "channel", "bad")]
    inner = select(*head, loans.c.exposure, *(k.cast(Double).label(k.name) for k in keys))
    inner = inner.where(packed.whereclause)
    stacked = ", ".join(f"{i}, {k.name}" for i, k in enumerate(keys))
    return [
        f"SELECT population, channel, bad, v, k, count(*) AS n, sum(exposure) AS w "
        f"FROM ({_literal_sql(inner, url)}) AS tagged "
        f"LATERAL VIEW stack({len(keys)}, {stacked}) s AS v, k "
        "GROUP BY population, channel, bad, v, k"
    ]


def time_floor(server: spark_server.SparkServer, statements: list[str]) -> dict[str, Any]:
    from pyhive import hive

    connection = hive.connect(host="127.0.0.1", port=server.port, database="default")
    try:
        cursor = connection.cursor()
        start = time.perf_counter()
        rows = 0
        for statement in statements:
            cursor.execute(statement)
            rows += len(cursor.fetchall())
        return {"seconds": time.perf_counter() - start, "result_rows": rows}
    finally:
        connection.close()


# ---------------------------------------------------------------------------- pulling the loans
def child_topandas(folder: str, binnings_file: str, driver_memory: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as f

    from riskmon.metrics import Binning

    binnings = {
        k: Binning.from_dict(v) for k, v in json.loads(Path(binnings_file).read_text()).items()
    }
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", driver_memory)
        # the whole result comes to the driver: no cap on its size (the default is 1 GB)
        .config("spark.driver.maxResultSize", "0")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]
    start = time.perf_counter()
    date = f.col("score_date")
    windows = (date.between(*PERFORMANCE)) | (date.between(*CURRENT))
    frame = spark.read.parquet(folder).where(windows).select(*NEEDED).toPandas()
    read_seconds = time.perf_counter() - start
    jvm_peak = proc_mb(jvm, "VmHWM")
    n_tables = count_in_memory(frame, binnings)
    seconds = time.perf_counter() - start
    spark.stop()
    return {
        "seconds": seconds,
        "read_seconds": read_seconds,
        "rss_mb": proc_mb("self", "VmHWM"),
        "jvm_rss_mb": jvm_peak,
        "tables": n_tables,
    }


# ---------------------------------------------------------------------------- the run
def measure(
    rows: int, args: argparse.Namespace, workdir: Path, binnings_file: Path
) -> list[dict[str, Any]]:
    data = write_parquet(workdir / f"loans_{rows}", rows, args.chunk_rows, args.seed)
    server = spark_server.start(workdir / f"spark_{rows}", driver_memory=args.driver_memory)
    records: list[dict[str, Any]] = []
    try:
        create_table(server, data)
        request = make_request(json.loads(binnings_file.read_text()))
        methods: list[tuple[str, Callable[[], dict[str, Any]]]] = []
        for shape in SHAPES:
            child = ["collect", server.url, shape, str(binnings_file)]
            methods.append((f"riskmon/{shape}", functools.partial(run_child, child)))
        for shape in FLOORS:
            statements = floor_sql(server.url, request, shape)
            methods.append((f"floor/{shape}", functools.partial(time_floor, server, statements)))
        pull = ["topandas", str(data), str(binnings_file), args.pull_memory]
        methods.append(("pull/toPandas", functools.partial(run_child, pull, __file__)))
        if args.methods:
            methods = [(name, fn) for name, fn in methods if name in args.methods]
        for repeat in range(args.repeats):
            for name, fn in methods:
                if name.startswith("pull/") and repeat >= args.pull_repeats:
                    continue
                result = fn()
                result["driver_rss_mb"] = proc_mb(server.pid, "VmRSS")
                record = {"rows": rows, "method": name, "repeat": repeat, **result}
                print(json.dumps(record), flush=True)
                records.append(record)
        records.append({"rows": rows, "method": "driver", "peak_mb": proc_mb(server.pid, "VmHWM")})
    finally:
        spark_server.stop(server.pid)
    return records


def summary(records: list[dict[str, Any]]) -> str:
    lines = [
        "| rows | method | median s | riskmon RSS MB | driver RSS MB after | n |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    keys = sorted({(r["rows"], r["method"]) for r in records if "seconds" in r})
    for rows, method in keys:
        runs = [r for r in records if (r["rows"], r["method"]) == (rows, method)]
        seconds = statistics.median(r["seconds"] for r in runs)
        rss = [r["rss_mb"] for r in runs if "rss_mb" in r]
        rss_text = f"{statistics.median(rss):.0f}" if rss else ""
        if method == "pull/toPandas":
            rss_text += f" (+ JVM {statistics.median(r['jvm_rss_mb'] for r in runs):.0f})"
        driver = statistics.median(r["driver_rss_mb"] for r in runs)
        lines.append(
            f"| {rows:,} | {method} | {seconds:.1f} | {rss_text} | {driver:.0f} | {len(runs)} |"
        )
    for r in records:
        if r["method"] == "driver":
            lines.append(f"\nSpark driver peak RSS at {r['rows']:,} rows: {r['peak_mb']:.0f} MB")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pull-repeats", type=int, default=1)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--pull-memory", default="12g", help="toPandas' Spark driver memory")
    parser.add_argument("--methods", nargs="+", help="only these (e.g. riskmon/packed)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    why = spark_server.missing()
    if why:
        sys.exit(why)
    print(f"# {platform.platform()}, Python {platform.python_version()}, {dt.date.today()}")
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="riskmon_spark_bench_") as tmp:
        workdir = Path(tmp)
        binnings_file = workdir / "binnings.json"
        binnings_file.write_text(json.dumps(fit_binnings(args.seed)))
        for rows in args.sizes:
            records += measure(rows, args, workdir, binnings_file)
    if args.out:
        args.out.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    print(summary(records))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        kind, *rest = sys.argv[2:]
        children: dict[str, Callable[..., dict[str, Any]]] = {
            "topandas": child_topandas,
        }
        print(json.dumps(children[kind](*rest)))
    else:
        main()
