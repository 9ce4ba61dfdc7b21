"""Benchmark: collecting a run's count tables from PostgreSQL, DuckDB and SQLite.

Synthetic scored loans (``--sizes``, default 1M and 10M rows), every one inside the run's
windows (half in the performance cohort, half in the current population), are generated in
chunks of ``--chunk-rows`` and loaded into each database (PostgreSQL by ``COPY``, DuckDB
natively, SQLite by ``executemany``). Columns: ``loan_id``, ``score_date``, ``pd_score`` (a PD
rounded to 4 decimals), ``bad`` (0/1, NULL when not matured and on every current loan),
``exposure`` (the weight), ``channel`` (the segment, 3 values), 12 numeric characteristics
``num_01..num_12`` with NULLs and 8 categorical ones ``cat_01..cat_08`` (text, some with
NULLs, some with categories the baseline never had).

The request: two populations (current, unlabeled; performance, labeled), the score on 10
baseline bins and on its raw values, the 20 characteristics on 10 bins each (fitted with
``fit_binning`` on a separate baseline sample), weighted, segmented by channel. Measured per
database and size:

- ``riskmon/<strategy>``: :func:`riskmon.collect.collect` with each strategy the dialect has,
  each repeat in a fresh subprocess, which also reports its peak RSS (``VmHWM``);
- ``floor/<shape>``: hand-written SQL for the same tables timed on a raw DBAPI cursor, results
  fetched and discarded — one statement per variable, ``UNION ALL``, ``GROUPING SETS``, a
  ``LATERAL`` unpivot (one scan, one hash aggregate), with numeric bins as a ``CASE`` tree or
  (PostgreSQL) ``width_bucket`` over an array of edges;
- ``read_sql``: ``pandas.read_sql`` of the needed columns, then ``Binning.assign`` and
  ``CountTable.from_bins`` / ``from_scores`` / ``from_values`` in memory (subprocess, peak RSS).

With ``--calibration``, each riskmon strategy is also timed with calibration's PD sums (see
:data:`CALIBRATION_VARIANTS`): ``riskmon/<strategy>+sums`` and ``+grades``.

Repeats are interleaved (every method once, then again) so machine noise spreads evenly; the
report gives medians. Results go to ``--out`` (JSON lines) and a Markdown table on stdout.

Run (PostgreSQL on 127.0.0.1, its database created and dropped by the script):

    .venv/bin/python benchmarks/bench_collect.py --databases postgresql duckdb --sizes 1000000
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import io
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

N_NUMERIC = 12
N_CATEGORICAL = 8
N_BINS = 10
NUMERIC = [f"num_{i + 1:02d}" for i in range(N_NUMERIC)]
CATEGORICAL = [f"cat_{i + 1:02d}" for i in range(N_CATEGORICAL)]
CHANNELS = np.array(["web", "branch", "broker"], dtype=object)
PERFORMANCE = (dt.date(2025, 1, 1), dt.date(2025, 1, 31))
CURRENT = (dt.date(2025, 3, 1), dt.date(2025, 3, 31))
#: share of performance loans whose outcome has not matured (NULL label)
UNMATURED_SHARE = 0.04
BASELINE_ROWS = 200_000
SQLITE_BATCH = 50_000

DEFAULT_PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
BENCH_DB = "riskmon_bench"
TABLE = "loans"

STRATEGIES = {
    "postgresql": ["packed", "grouping_sets", "union_all", "per_variable", "stream"],
    "duckdb": ["packed", "grouping_sets", "union_all", "per_variable", "stream"],
    "sqlite": ["stream", "packed", "union_all"],
}


# ---------------------------------------------------------------------------- the loans
def _numeric(rng: np.random.Generator, i: int, z: np.ndarray) -> np.ndarray:
    n = z.size
    kind = i % 4
    x: np.ndarray
    if kind == 0:  # amounts: lognormal, rounded to whole units (ties)
        x = np.round(rng.lognormal(8.0 + 0.1 * z, 0.8), 0)
    elif kind == 1:  # ratios in [0, 1.5]
        x = np.round(np.clip(rng.normal(0.35 + 0.05 * z, 0.2), 0.0, 1.5), 3)
    elif kind == 2:  # counts
        x = rng.poisson(np.exp(0.5 + 0.3 * z)).astype(np.float64)
    else:  # months on book, scores
        x = np.round(rng.gamma(2.0 + i / 6, 12.0, n) - 5.0 * z, 1)
    x[rng.random(n) < 0.01 + 0.01 * i] = np.nan
    return x


def _levels(i: int) -> np.ndarray:
    return np.array([f"c{i + 1}_{j:02d}" for j in range(6 + i % 5)], dtype=object)


def _categorical(rng: np.random.Generator, i: int, z: np.ndarray, baseline: bool) -> np.ndarray:
    n = z.size
    levels = _levels(i)
    p = np.linspace(2.0, 0.5, levels.size)
    codes = rng.choice(levels.size, n, p=p / p.sum())
    shift = z > 1.0  # riskier loans lean to the last levels
    codes[shift] = np.minimum(codes[shift] + 1, levels.size - 1)
    values = levels[codes]
    if i % 2 == 0:  # half of them with NULLs
        values[rng.random(n) < 0.03] = None
    if not baseline and i % 3 == 0:  # some with categories the baseline never had
        new = rng.random(n) < 0.02
        values[new] = np.array([f"c{i + 1}_new"], dtype=object)[0]
    return values


def loan_chunk(seed: int, first_id: int, n: int, *, baseline: bool = False) -> pd.DataFrame:
    """``n`` loans, ids from ``first_id``; a baseline sample has no unseen categories."""
    rng = np.random.default_rng([seed, first_id])
    z = rng.normal(size=n)  # latent risk
    pd_score = np.round(1.0 / (1.0 + np.exp(-(-2.6 + 0.9 * z))), 4)
    performance = rng.random(n) < 0.5
    day = rng.integers(0, 31, n).astype("timedelta64[D]")
    start = np.where(
        performance, np.datetime64(PERFORMANCE[0], "D"), np.datetime64(CURRENT[0], "D")
    )
    bad = (rng.random(n) < pd_score).astype(np.int64)
    label = pd.array(bad, dtype="Int64")
    label[~performance | (rng.random(n) < UNMATURED_SHARE)] = pd.NA
    frame = {
        "loan_id": np.arange(first_id, first_id + n, dtype=np.int64),
        "score_date": (start + day).astype("datetime64[s]"),
        "pd_score": pd_score,
        "bad": label,
        "exposure": np.round(rng.gamma(2.0, 5000.0, n), 2),
        "channel": CHANNELS[rng.choice(3, n, p=[0.5, 0.3, 0.2])],
    }
    for i, name in enumerate(NUMERIC):
        frame[name] = _numeric(rng, i, z)
    for i, name in enumerate(CATEGORICAL):
        frame[name] = _categorical(rng, i, z, baseline)
    out = pd.DataFrame(frame)
    out["score_date"] = out["score_date"].dt.date
    return out


def chunks(rows: int, chunk_rows: int, seed: int) -> Iterator[pd.DataFrame]:
    for first in range(0, rows, chunk_rows):
        yield loan_chunk(seed, first, min(chunk_rows, rows - first))


# ---------------------------------------------------------------------------- loaders
COLUMN_SQL = [
    ("loan_id", "BIGINT"),
    ("score_date", "DATE"),
    ("pd_score", "DOUBLE PRECISION"),
    ("bad", "SMALLINT"),
    ("exposure", "DOUBLE PRECISION"),
    ("channel", "VARCHAR"),
    *((name, "DOUBLE PRECISION") for name in NUMERIC),
    *((name, "VARCHAR") for name in CATEGORICAL),
]
CREATE = f"CREATE TABLE {TABLE} ({', '.join(f'{c} {t}' for c, t in COLUMN_SQL)})"


def pg_admin_url(server: str) -> str:
    return server.replace("postgresql+psycopg://", "postgresql://")


def bench_db(rows: int) -> str:
    return f"{BENCH_DB}_{rows}"


def pg_url(server: str, rows: int) -> str:
    return server.rsplit("/", 1)[0] + f"/{bench_db(rows)}"


def pg_loaded(server: str, rows: int) -> bool:
    """Whether the benchmark database of ``rows`` loans is there, complete."""
    import psycopg

    with psycopg.connect(pg_admin_url(server), autocommit=True) as admin:
        found = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (bench_db(rows),)
        ).fetchone()
    if not found:
        return False
    with psycopg.connect(pg_admin_url(pg_url(server, rows))) as conn:
        try:
            count = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
        except psycopg.errors.UndefinedTable:
            return False
    return count is not None and count[0] == rows


def load_postgresql(server: str, rows: int, chunk_rows: int, seed: int) -> None:
    import psycopg

    with psycopg.connect(pg_admin_url(server), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {bench_db(rows)} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {bench_db(rows)}")
    with psycopg.connect(pg_admin_url(pg_url(server, rows)), autocommit=True) as conn:
        conn.execute(CREATE)
        columns = ", ".join(c for c, _ in COLUMN_SQL)
        for frame in chunks(rows, chunk_rows, seed):
            buffer = io.StringIO()
            frame.to_csv(buffer, index=False, header=False)
            with (
                conn.cursor() as cur,
                cur.copy(f"COPY {TABLE} ({columns}) FROM STDIN (FORMAT csv)") as copy,
            ):
                copy.write(buffer.getvalue())
        # set hint bits and statistics, as a table that has been there a while has them
        conn.execute(f"VACUUM (ANALYZE) {TABLE}")


def load_duckdb(path: Path, rows: int, chunk_rows: int, seed: int) -> None:
    import duckdb

    path.unlink(missing_ok=True)
    with duckdb.connect(str(path)) as conn:
        conn.execute(CREATE)
        for frame in chunks(rows, chunk_rows, seed):
            conn.register("frame", frame)
            conn.execute(f"INSERT INTO {TABLE} SELECT * FROM frame")
            conn.unregister("frame")
        conn.execute("CHECKPOINT")


def load_sqlite(path: Path, rows: int, chunk_rows: int, seed: int) -> None:
    path.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(CREATE.replace("DOUBLE PRECISION", "REAL"))
        marks = ", ".join("?" * len(COLUMN_SQL))
        for frame in chunks(rows, chunk_rows, seed):
            frame = frame.astype(object).where(frame.notna(), None)
            frame["score_date"] = frame["score_date"].map(str)
            values = frame.itertuples(index=False, name=None)
            conn.executemany(f"INSERT INTO {TABLE} VALUES ({marks})", values)
            conn.commit()
        conn.execute(f"ANALYZE {TABLE}")
        conn.commit()


# ---------------------------------------------------------------------------- the request
def fit_binnings(seed: int) -> dict[str, dict[str, Any]]:
    """Baseline bins, fitted on a separate sample without the new categories."""
    from riskmon.metrics import fit_binning

    sample = loan_chunk(seed + 1, 0, BASELINE_ROWS, baseline=True)
    out = {"pd_score": fit_binning(sample["pd_score"], n_bins=N_BINS).to_dict()}
    for name in NUMERIC:
        out[name] = fit_binning(sample[name], n_bins=N_BINS).to_dict()
    for name in CATEGORICAL:
        out[name] = fit_binning(sample[name], kind="categorical").to_dict()
    return out


#: a master scale of PD upper edges (the last grade open), as a calibration pass groups it
MASTER_SCALE = (0.005, 0.01, 0.02, 0.04, 0.08, 0.15)
#: what a calibration pass adds to the request: nothing; PD sums on the score's baseline bins
#: (calibration's default grades); or a master scale of grades on the PD, with sums. And
#: "checks": no PD sums, but the loans' checks a run makes (invalid loans left out and counted,
#: duplicate ids counted: the request names its score and id columns)
CALIBRATION_VARIANTS = ("none", "sums", "grades", "checks")


def make_request(binnings: dict[str, dict[str, Any]], calibration: str = "none") -> Any:
    """The benchmark's request; ``calibration`` as in :data:`CALIBRATION_VARIANTS`."""
    from riskmon.collect import CollectRequest, PdSource, Population, Variable
    from riskmon.metrics import Binning
    from riskmon.plan import DateWindow

    score = Binning.from_dict(binnings["pd_score"])
    extra = []
    if calibration == "grades":
        grades = Binning("numeric", edges=MASTER_SCALE)
        extra = [Variable("pd_grade", "pd_score", grades, sums=True)]
    variables = [
        Variable("score", "pd_score", score, sums=calibration == "sums"),
        Variable("score_values", "pd_score"),
        *(Variable(n, n, Binning.from_dict(binnings[n])) for n in NUMERIC + CATEGORICAL),
    ]
    return CollectRequest(
        populations=[
            Population("current", DateWindow(*CURRENT), labeled=False),
            Population("performance", DateWindow(*PERFORMANCE), labeled=True),
        ],
        variables=[*variables, *extra],
        score_date="score_date",
        label="bad",
        weight="exposure",
        segments=("channel",),
        pd=None if calibration in ("none", "checks") else PdSource("pd_score"),
        score="pd_score" if calibration == "checks" else None,
        exclude_invalid=calibration == "checks",
        id="loan_id" if calibration == "checks" else None,
    )


def model_config(url: str) -> Any:
    from riskmon.config import parse_config

    characteristics = [{"name": n, "kind": "numeric"} for n in NUMERIC]
    characteristics += [{"name": n, "kind": "categorical"} for n in CATEGORICAL]
    config = {
        "models": [
            {
                "name": "bench_pd",
                "source": {"url": url, "table": TABLE, "statement_timeout_seconds": 7200},
                "columns": {
                    "id": "loan_id",
                    "score_date": "score_date",
                    "score": "pd_score",
                    "label": "bad",
                    "weight": "exposure",
                    "segments": ["channel"],
                },
                "score_direction": "higher_is_riskier",
                "characteristics": characteristics,
                "baseline": {"start": "2024-06-01", "end": "2024-06-30"},
            }
        ]
    }
    return parse_config(config, source="benchmark", env={}).models[0]


# ---------------------------------------------------------------------------- child processes
def _peak_rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child_collect(
    url: str, strategy: str, binnings_file: str, calibration: str = "none"
) -> dict[str, Any]:
    from riskmon.collect import Source, collect

    request = make_request(json.loads(Path(binnings_file).read_text()), calibration)
    rss_before = _peak_rss_mb()
    with Source(model_config(url)) as source:
        start = time.perf_counter()
        tables = collect(source, request, strategy=strategy)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
    cells = sum(len(t) for t in tables.tables.values())
    return {
        "seconds": seconds,
        "rss_mb": _peak_rss_mb(),
        "rss_start_mb": rss_before,
        "tables": len(tables.tables),
        "cells": cells,
        "digest": _digest(tables),
        "pd_tables": len(tables.pd_tables),
    }


def _digest(tables: Any) -> list[float]:
    key = ("performance", "num_01", "")
    table = tables.tables[key]
    perf = tables.counts[("performance", "")]
    return [float(table.total.sum()), float(table.bads.sum()), perf.n_rows, perf.n_unlabeled]


def _read_sql(query: str, engine: Any, params: Any, chunk_rows: int) -> pd.DataFrame:
    """``pandas.read_sql``; with ``chunk_rows``, read in chunks and concatenated, so that the
    rows as Python objects never exist all at once (10M rows would need about 24 GB)."""
    if not chunk_rows:
        return pd.read_sql(query, engine, params=params)
    parts = pd.read_sql(query, engine, params=params, chunksize=chunk_rows)
    return pd.concat(list(parts), ignore_index=True)


def count_in_memory(frame: pd.DataFrame, binnings: dict[str, Any]) -> int:
    """The request's count tables computed in memory from the loans read (``Binning.assign``,
    ``CountTable.from_bins`` / ``from_scores`` / ``from_values``); how many."""
    from riskmon.metrics import CountTable

    dates = pd.to_datetime(frame["score_date"])
    n_tables = 0
    populations = {
        "current": (dates >= pd.Timestamp(CURRENT[0])).to_numpy(),
        "performance": (dates < pd.Timestamp(PERFORMANCE[1] + dt.timedelta(days=1))).to_numpy(),
    }
    for population, in_window in populations.items():
        part = frame[in_window]
        labeled = population == "performance"
        if labeled:
            part = part[part["bad"].notna()]
        y = part["bad"].to_numpy(dtype=np.int64) if labeled else None
        w = part["exposure"].to_numpy(dtype=np.float64)
        channel = part["channel"].fillna("missing").to_numpy(dtype=object)
        masks = [None] + [channel == c for c in np.unique(channel)]
        for name in ["pd_score", "pd_score_values", *NUMERIC, *CATEGORICAL]:
            if name == "pd_score_values":
                s = part["pd_score"].to_numpy(dtype=np.float64)
                for m in masks:
                    sm, wm = (s, w) if m is None else (s[m], w[m])
                    if y is not None:
                        CountTable.from_scores((y if m is None else y[m]), sm, sample_weight=wm)
                    else:
                        CountTable.from_values(sm, sample_weight=wm)
                    n_tables += 1
                continue
            values = part[name]
            if values.dtype == object:
                values = values.where(values.notna(), None)
            index = binnings[name].assign(values)
            for m in masks:
                CountTable.from_bins(
                    index if m is None else index[m],
                    binnings[name],
                    None if y is None else (y if m is None else y[m]),
                    sample_weight=w if m is None else w[m],
                )
                n_tables += 1
    return n_tables


def child_read_sql(url: str, binnings_file: str, chunk_rows: str = "0") -> dict[str, Any]:
    from sqlalchemy import create_engine

    from riskmon.metrics import Binning

    binnings = {
        k: Binning.from_dict(v) for k, v in json.loads(Path(binnings_file).read_text()).items()
    }
    engine = create_engine(url)
    names = ["score_date", "pd_score", "bad", "exposure", "channel", *NUMERIC, *CATEGORICAL]
    query = (
        f"SELECT {', '.join(names)} FROM {TABLE} WHERE "
        "(score_date >= %(p0)s AND score_date < %(p1)s)"
        " OR (score_date >= %(c0)s AND score_date < %(c1)s)"
    )
    window = {
        "p0": PERFORMANCE[0],
        "p1": PERFORMANCE[1] + dt.timedelta(days=1),
        "c0": CURRENT[0],
        "c1": CURRENT[1] + dt.timedelta(days=1),
    }
    rss_before = _peak_rss_mb()
    start = time.perf_counter()
    if engine.dialect.name == "postgresql":
        frame = _read_sql(query, engine, window, int(chunk_rows))
    else:  # qmark/numeric paramstyles: the same query with positional markers
        marks = query.replace("%(p0)s", "?").replace("%(p1)s", "?").replace("%(c0)s", "?")
        marks = marks.replace("%(c1)s", "?")
        params = tuple(
            str(window[k]) if engine.dialect.name == "sqlite" else window[k]
            for k in ("p0", "p1", "c0", "c1")
        )
        frame = _read_sql(marks, engine, params, int(chunk_rows))
    read_seconds = time.perf_counter() - start
    n_tables = count_in_memory(frame, binnings)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "read_seconds": read_seconds,
        "rss_mb": _peak_rss_mb(),
        "rss_start_mb": rss_before,
        "tables": n_tables,
    }


def child_duckdb_bare(path: str, sql_file: str, memory_limit: str) -> dict[str, Any]:
    """riskmon's statements (literal SQL) in a process that imports nothing but duckdb: how
    much of riskmon's peak RSS is DuckDB's own."""
    import duckdb

    config: dict[str, Any] = {"memory_limit": memory_limit} if memory_limit else {}
    connection = duckdb.connect(path, read_only=True, config=config)
    rss_before = _peak_rss_mb()
    start = time.perf_counter()
    n_rows = 0
    for statement in json.loads(Path(sql_file).read_text()):
        n_rows += len(connection.execute(statement).fetchall())
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "rss_mb": _peak_rss_mb(),
        "rss_start_mb": rss_before,
        "result_rows": n_rows,
    }


def duckdb_sql_file(path: Path, request: Any, strategy: str, out: Path) -> Path:
    """riskmon's statements for ``strategy`` with the values written in, as a JSON list."""
    from sqlalchemy import create_engine

    from riskmon.collect import profile_for, pushdown

    engine = create_engine(f"duckdb:///{path}")
    loans = _duckdb_table()
    shape: Any = strategy
    statements = pushdown.statements(loans, request, shape, profile_for("duckdb"))
    texts = [
        str(s.select.compile(engine, compile_kwargs={"literal_binds": True})) for s in statements
    ]
    engine.dispose()
    out.write_text(json.dumps(texts))
    return out


def _child(args: list[str]) -> Callable[[], dict[str, Any]]:
    return functools.partial(run_child, args)


def run_child(args: list[str], script: str = __file__) -> dict[str, Any]:
    """The JSON result of ``script _child args``, run in a fresh process."""
    out = subprocess.run(
        [sys.executable, script, "_child", *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------- the floor
def _case_tree(x: Any, edges: Sequence[float], low: int, high: int) -> Any:
    from sqlalchemy import Double, Integer, case, literal

    if low == high:
        return literal(low, Integer)
    middle = (low + high) // 2
    return case(
        (x <= literal(edges[middle], Double), _case_tree(x, edges, low, middle)),
        else_=_case_tree(x, edges, middle + 1, high),
    )


def _floor_key(loans: Any, variable: Any, binning_sql: str) -> Any:
    """The bin (or raw value) of one variable: CASE tree, or width_bucket on negated values;
    ``rawcat``: a categorical column's text (its bin is then a lookup of the few texts)."""
    from sqlalchemy import Double, Integer, String, case, cast, func, literal
    from sqlalchemy.dialects.postgresql import ARRAY

    x = loans.c[variable.column]
    binning = variable.binning
    if binning is None:
        return x
    if binning.kind == "categorical" and binning_sql == "rawcat":
        return cast(x, String)
    if binning.kind == "categorical":
        whens = [(x.is_(None), binning.missing_index)]
        whens += [(cast(x, String).in_(list(g)), i) for i, g in enumerate(binning.levels) if g]
        return case(*whens, else_=binning.unseen_index)
    edges = [float(e) for e in binning.edges]
    if binning_sql == "width_bucket":
        # width_bucket counts the edges <= its operand (left-closed bins); on -x against the
        # negated edges in ascending order it counts the edges >= x, so k minus that is the
        # number of edges < x: the right-closed bin (lo, hi] of Binning.assign
        negated = literal([-e for e in reversed(edges)], ARRAY(Double))
        index = literal(len(edges), Integer) - func.width_bucket(-x, negated)
        return func.coalesce(index, binning.missing_index)
    tree = _case_tree(x, edges, 0, len(edges))
    return case((x.is_(None), binning.missing_index), else_=tree)


def floor_statements(loans: Any, request: Any, shape: str, binning_sql: str) -> list[Any]:
    """Hand-written statements giving the same tables (without riskmon's weight check)."""
    from sqlalchemy import (
        Date,
        Double,
        Integer,
        and_,
        case,
        column,
        func,
        literal,
        or_,
        select,
        tuple_,
        union_all,
        values,
    )

    c = loans.c
    windows = [
        (
            p.name,
            and_(
                c.score_date >= literal(p.window.start, Date()),
                c.score_date < literal(p.window.end_exclusive, Date()),
            ),
        )
        for p in request.populations
    ]
    # the population as an integer code, as riskmon groups it (cheaper than grouping on text)
    population = case(*((cond, literal(i)) for i, (_, cond) in enumerate(windows))).label(
        "population"
    )
    where = or_(*(cond for _, cond in windows))
    measures = [func.count().label("n"), func.sum(c.exposure).label("w")]
    head = [population, c.channel, c.bad]
    keys = [
        _floor_key(loans, v, binning_sql).label(f"k_{i}") for i, v in enumerate(request.variables)
    ]

    def grouped(i: int, key: Any) -> Any:
        return (
            select(*head, literal(i).label("v"), key, *measures)
            .where(where)
            .group_by(population, c.channel, c.bad, key)
        )

    if shape == "per_variable":
        return [grouped(i, k) for i, k in enumerate(keys)]
    if shape == "union_all":
        return [union_all(*(grouped(i, k) for i, k in enumerate(keys)))]
    if shape == "cte":
        # one scan computing every key, then one GROUP BY per key over that result (DuckDB
        # materializes a CTE read more than once: the binned rows are held in its memory)
        binned = select(population, c.channel, c.bad, c.exposure, *keys).where(where).cte("binned")
        b = binned.c
        parts = [
            select(
                b.population,
                b.channel,
                b.bad,
                literal(i).label("v"),
                b[f"k_{i}"],
                func.count().label("n"),
                func.sum(b.exposure).label("w"),
            ).group_by(b.population, b.channel, b.bad, b[f"k_{i}"])
            for i in range(len(keys))
        ]
        return [union_all(*parts)]
    if shape == "packed":
        # one GROUP BY per run of binned variables whose bin counts multiply to at most 2,000,
        # on all of their keys at once; the raw score alone (summing the combinations into one
        # table per variable is left out: it is Python's work, not the database's)
        runs: list[list[int]] = []
        current: list[int] | None = None
        cells = 1
        for i, v in enumerate(request.variables):
            if v.binning is None:
                runs.append([i])
            elif current is not None and cells * v.binning.n_bins <= 2_000:
                current.append(i)
                cells *= v.binning.n_bins
            else:
                current, cells = [i], v.binning.n_bins
                runs.append(current)
        return [
            select(*head, *(keys[i] for i in run), *measures)
            .where(where)
            .group_by(population, c.channel, c.bad, *(keys[i] for i in run))
            for run in runs
        ]
    if shape == "grouping_sets":
        sets = [tuple_(population, c.channel, c.bad, k) for k in keys]
        grouping = [func.grouping(k) for k in keys]
        return [
            select(*head, *keys, *grouping, *measures)
            .where(where)
            .group_by(func.grouping_sets(*sets))
        ]
    if shape == "lateral":
        # one scan: each loan becomes one row per variable, grouped by one hash aggregate
        inner = (
            select(
                population,
                c.channel,
                c.bad,
                c.exposure,
                *(k.cast(Double) if i != 1 else k for i, k in enumerate(keys)),
            )
            .where(where)
            .subquery("tagged")
        )
        t = inner.c
        rows = [(literal(i), t[f"k_{i}"]) for i in range(len(keys))]
        unpivot = values(column("v", Integer), column("k", Double), name="unpivot").data(rows)
        unpivot = unpivot.lateral("unpivot")
        return [
            select(
                t.population,
                t.channel,
                t.bad,
                unpivot.c.v,
                unpivot.c.k,
                func.count().label("n"),
                func.sum(t.exposure).label("w"),
            )
            .select_from(inner.join(unpivot, literal(True)))
            .group_by(t.population, t.channel, t.bad, unpivot.c.v, unpivot.c.k)
        ]
    raise ValueError(shape)


def time_floor(url: str, request: Any, shape: str, binning_sql: str, tuned: bool) -> float:
    """Seconds to run the statements of one shape and fetch (and discard) their rows;
    ``tuned``: with the PostgreSQL planner settings riskmon uses (enable_sort, jit off)."""
    from sqlalchemy import MetaData, Table, create_engine, text

    from riskmon.collect.engines import POSTGRESQL_SETTINGS

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            if engine.dialect.name == "duckdb":
                loans = _duckdb_table()
            else:
                loans = Table(TABLE, MetaData(), autoload_with=connection)
            statements = floor_statements(loans, request, shape, binning_sql)
            if tuned:
                for name, value in POSTGRESQL_SETTINGS.items():
                    connection.execute(
                        text("SELECT set_config(:n, :v, true)"), {"n": name, "v": value}
                    )
            start = time.perf_counter()
            for statement in statements:
                connection.execute(statement).fetchall()
            return time.perf_counter() - start
    finally:
        engine.dispose()


def _timed_floor(
    url: str, request: Any, shape: str, binning_sql: str, tuned: bool
) -> dict[str, Any]:
    return {"seconds": time_floor(url, request, shape, binning_sql, tuned)}


def _duckdb_table() -> Any:
    from sqlalchemy import Date, Double, Integer, String, column, table

    types = {"DATE": Date, "DOUBLE PRECISION": Double, "VARCHAR": String}
    return table(TABLE, *(column(n, types.get(t, Integer)()) for n, t in COLUMN_SQL))


#: (shape, numeric binning, PostgreSQL settings tuned as riskmon does, "slow": run once)
FLOOR_SHAPES = {
    "postgresql": [
        ("per_variable", "case", False, True),
        ("union_all", "case", False, True),
        ("per_variable", "case", True, False),
        ("union_all", "case", True, False),
        ("union_all", "width_bucket", True, False),
        ("grouping_sets", "case", True, True),
        ("packed", "case", True, False),
        ("packed", "rawcat", True, False),
    ],
    "duckdb": [
        ("packed", "case", False, False),
        ("packed", "rawcat", False, False),
        ("per_variable", "case", False, False),
        ("union_all", "case", False, False),
        ("grouping_sets", "case", False, False),
        ("cte", "case", False, False),
        ("lateral", "case", False, True),
    ],
    "sqlite": [("union_all", "case", False, True)],
}


# ---------------------------------------------------------------------------- the run
def measure(
    database: str,
    rows: int,
    args: argparse.Namespace,
    workdir: Path,
    binnings_file: Path,
    record: Callable[[dict[str, Any]], None],
) -> None:
    request = make_request(json.loads(binnings_file.read_text()))
    start = time.perf_counter()
    base = {"database": database, "rows": rows}
    if database == "postgresql":
        url = pg_url(args.pg_server, rows)
        if not (args.keep and pg_loaded(args.pg_server, rows)):
            load_postgresql(args.pg_server, rows, args.chunk_rows, args.seed)
            record({**base, "method": "load", "seconds": time.perf_counter() - start})
    else:
        path = workdir / f"loans_{rows}.{database}"
        url = f"{database}:///{path}"
        if not (args.keep and path.exists()):
            loader = load_duckdb if database == "duckdb" else load_sqlite
            loader(path, rows, args.chunk_rows, args.seed)
            record({**base, "method": "load", "seconds": time.perf_counter() - start})
    # a first, untimed pass warms the page cache
    if database != "sqlite":
        time_floor(url, request, "per_variable", "case", database == "postgresql")
    methods: list[tuple[str, bool, Callable[[], dict[str, Any]]]] = []
    for strategy in args.strategies or STRATEGIES[database]:
        if strategy not in STRATEGIES[database]:
            continue
        # with --calibration, each variant in turn, so that noise falls on all of them alike
        for variant in args.calibration or ["none"]:
            suffix = "" if variant == "none" else f"+{variant}"
            child = ["collect", url, strategy, str(binnings_file), variant]
            methods.append(
                (
                    f"riskmon/{strategy}{suffix}",
                    strategy in ("stream", "grouping_sets"),
                    functools.partial(run_child, child),
                )
            )
    if database == "duckdb" and args.duckdb_memory_limits is not None:
        # how much of riskmon's RSS is DuckDB's: its statements in a bare duckdb process, and
        # riskmon under DuckDB's memory_limit (a setting of the source URL); run once each
        for pair in args.duckdb_memory_limits:
            strategy, _, limit = pair.partition("=")
            sql_file = duckdb_sql_file(path, request, strategy, workdir / f"sql_{strategy}.json")
            for applied in ["", limit] if limit else [""]:
                suffix = f"/memory_limit={applied}" if applied else ""
                bare = ["duckdb_bare", str(path), str(sql_file), applied]
                methods.append((f"duckdb_bare/{strategy}{suffix}", True, _child(bare)))
                if applied:
                    limited = ["collect", f"{url}?memory_limit={applied}", strategy]
                    limited.append(str(binnings_file))
                    methods.append((f"riskmon/{strategy}{suffix}", True, _child(limited)))
    if not args.skip_floor:
        for shape, binning_sql, tuned, once in FLOOR_SHAPES[database]:
            if args.floor and shape not in args.floor:
                continue
            name = f"floor/{shape}/{binning_sql}" + ("/tuned" if tuned else "")
            methods.append(
                (
                    name,
                    once,
                    functools.partial(_timed_floor, url, request, shape, binning_sql, tuned),
                )
            )
    if not args.skip_read_sql:
        chunked = rows > args.read_sql_max_rows
        read_args = ["read_sql", url, str(binnings_file)]
        read_args += [str(args.read_sql_max_rows)] if chunked else []
        methods.append(
            (
                "read_sql/chunked" if chunked else "read_sql",
                True,
                functools.partial(run_child, read_args),
            )
        )
    for repeat in range(args.repeats):
        for name, once, fn in methods:
            if repeat >= args.slow_repeats and once:
                continue
            if f"{database}:{rows}:{name}" in (args.skip or []):
                continue
            result = fn()
            record({**base, "method": name, "repeat": repeat, **result})


def summarize(records: list[dict[str, Any]]) -> str:
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in records:
        if r["method"] == "load":
            continue
        groups.setdefault((r["database"], r["rows"], r["method"]), []).append(r)
    lines = [
        "| database | rows | method | median s | runs | peak RSS MB |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for (database, rows, method), rs in sorted(groups.items()):
        seconds = statistics.median(r["seconds"] for r in rs)
        rss = max((r.get("rss_mb", float("nan")) for r in rs), default=float("nan"))
        rss_text = f"{rss:,.0f}" if rss == rss else ""
        lines.append(
            f"| {database} | {rows:,} | {method} | {seconds:.2f} | {len(rs)} | {rss_text} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument(
        "--databases",
        nargs="+",
        default=["postgresql", "duckdb", "sqlite"],
        choices=["postgresql", "duckdb", "sqlite"],
    )
    parser.add_argument(
        "--sqlite-max-rows",
        type=int,
        default=1_000_000,
        help="SQLite is measured only at sizes up to this",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--slow-repeats",
        type=int,
        default=1,
        help="runs of the slow methods (stream, read_sql, ...)",
    )
    parser.add_argument(
        "--strategies", nargs="*", help="riskmon strategies (default: all of the dialect's)"
    )
    parser.add_argument(
        "--calibration",
        nargs="*",
        choices=CALIBRATION_VARIANTS,
        help="time each riskmon strategy with these calibration variants, interleaved: none "
        "(no PD sums), sums (PD sums on the score's bins), grades (a master scale on the PD, "
        "with sums), checks (invalid loans and duplicate ids counted); default: none",
    )
    parser.add_argument("--floor", nargs="*", help="floor shapes to time (default: all)")
    parser.add_argument("--skip-floor", action="store_true")
    parser.add_argument(
        "--skip",
        nargs="*",
        help="database:rows:method to leave out, e.g. postgresql:10000000:riskmon/grouping_sets",
    )
    parser.add_argument("--skip-read-sql", action="store_true")
    parser.add_argument(
        "--duckdb-memory-limits",
        nargs="*",
        help="DuckDB, strategy=limit pairs (e.g. per_variable=100MB): also run riskmon's "
        "statements of that strategy in a bare duckdb process, and riskmon and that process "
        "under DuckDB's memory_limit",
    )
    parser.add_argument(
        "--read-sql-max-rows",
        type=int,
        default=2_000_000,
        help="above this many loans read_sql reads chunks of this many rows and concatenates",
    )
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument(
        "--pg-server",
        default=DEFAULT_PG_SERVER,
        help="a PostgreSQL server URL; the database riskmon_bench is created on it and dropped",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where DuckDB/SQLite files go")
    parser.add_argument("--out", type=Path, default=Path("bench_collect.jsonl"))
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the loaded databases (with --workdir: reuse them on the next run)",
    )
    args = parser.parse_args(argv)

    if args.keep and args.workdir is not None:
        workdir = args.workdir
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="riskmon_bench_", dir=args.workdir))
    binnings_file = workdir / "binnings.json"
    if not binnings_file.exists():
        binnings_file.write_text(json.dumps(fit_binnings(args.seed)))
    records: list[dict[str, Any]] = []

    def record(r: dict[str, Any]) -> None:
        records.append(r)
        with args.out.open("a") as out:
            out.write(json.dumps(r, default=str) + "\n")
        print(json.dumps(r, default=str), file=sys.stderr, flush=True)

    print(
        f"# {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cpus",
        file=sys.stderr,
    )
    try:
        for rows in args.sizes:
            for database in args.databases:
                if database == "sqlite" and rows > args.sqlite_max_rows:
                    continue
                measure(database, rows, args, workdir, binnings_file, record)
                if not args.keep:
                    _drop(database, rows, args, workdir)
    finally:
        if not args.keep:
            binnings_file.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                workdir.rmdir()
    print(summarize(records))


def _drop(database: str, rows: int, args: argparse.Namespace, workdir: Path) -> None:
    if database == "postgresql":
        import psycopg

        with psycopg.connect(pg_admin_url(args.pg_server), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {bench_db(rows)} WITH (FORCE)")
    else:
        (workdir / f"loans_{rows}.{database}").unlink(missing_ok=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        kind, *rest = sys.argv[2:]
        children: dict[str, Callable[..., dict[str, Any]]] = {
            "collect": child_collect,
            "read_sql": child_read_sql,
            "duckdb_bare": child_duckdb_bare,
        }
        child = children[kind]
        print(json.dumps(child(*rest)))
    else:
        main()
