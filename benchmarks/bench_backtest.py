"""Benchmark: a whole LGD run (back-testing pushed down) against read_sql + scipy on the same
closed facilities, on PostgreSQL; wall time and peak RSS of each, each in a process of its own.

    .venv/bin/python benchmarks/bench_backtest.py --rows 1000000 \
        --url postgresql+psycopg://postgres@127.0.0.1:5432/postgres

creates the database ``riskmon_bench_lgd_<rows>`` (dropped afterwards unless ``--keep``), loads
``rows`` facilities closed in the observation window (10 % of them open) and 50,000 in the
initial sample's window, and prints a Markdown table (benchmarks/backtest.md records it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

AS_OF = dt.date(2025, 6, 30)
TABLE = "recoveries"


def _book(rows: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = rows + 50_000
    estimate = np.round(rng.beta(2, 3, n) * 1.05, 4)
    realised = np.round(estimate + rng.normal(0.02, 0.2, n), 4)
    realised[rng.random(n) < 0.1] = np.nan
    days = rng.integers(0, 365, n)
    closed = np.array([AS_OF - dt.timedelta(days=int(d)) for d in days[:rows]])
    initial = np.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(d) % 180) for d in days[rows:]])
    return pd.DataFrame(
        {
            "facility_id": np.arange(n),
            "closed_on": np.concatenate([closed, initial]),
            "lgd_estimate": estimate,
            "lgd_realised": realised,
            "ead": np.round(rng.gamma(2.0, 5_000.0, n), 2),
            "book": rng.choice(["retail", "sme", "mortgage"], n),
        }
    )


def _load(url: str, frame: pd.DataFrame) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as connection:
        connection.execute(f"DROP TABLE IF EXISTS {TABLE}")
        connection.execute(
            f"CREATE TABLE {TABLE} (facility_id bigint, closed_on date, lgd_estimate double "
            "precision, lgd_realised double precision, ead double precision, book text)"
        )
        buffer = io.StringIO()
        frame.to_csv(buffer, index=False, header=False, na_rep="")
        buffer.seek(0)
        with connection.cursor().copy(f"COPY {TABLE} FROM STDIN WITH (FORMAT csv)") as copy:
            while chunk := buffer.read(1 << 20):
                copy.write(chunk)
        connection.execute(f"ANALYZE {TABLE}")


def run_riskmon(url: str) -> dict[str, float]:
    from riskmon.config import parse_config
    from riskmon.run import run_model
    from riskmon.store import MetricStore, upgrade
    from riskmon.store.engine import store_engine

    model = {
        "name": "bench_lgd",
        "kind": "lgd",
        "source": {"url": url, "table": TABLE},
        "columns": {
            "id": "facility_id",
            "score_date": "closed_on",
            "score": "lgd_estimate",
            "realised": "lgd_realised",
            "exposure": "ead",
            "segments": ["book"],
        },
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
    }
    config = parse_config({"models": [model]}, source="bench", env={}).models[0]
    with tempfile.TemporaryDirectory() as folder:
        engine = store_engine(f"sqlite:///{folder}/store.db")
        upgrade(engine)
        outcome = run_model(config, AS_OF, store=MetricStore(engine), notify=False)
        assert outcome.ok, outcome.error
        figures = {f.name: f.value for f in outcome.figures if not f.segment and not f.variable}
    return {"backtest_p": figures["backtest_p"] or 0.0, "gauc": figures["gauc"] or 0.0}


def run_pandas(url: str) -> dict[str, float]:
    from scipy import stats
    from sqlalchemy import create_engine

    from riskmon.metrics import ecb_lgd_segment

    engine = create_engine(url)
    start = AS_OF - dt.timedelta(days=364)
    query = (
        f"SELECT lgd_estimate, lgd_realised, ead, book FROM {TABLE} "
        f"WHERE closed_on >= '{start}' AND closed_on <= '{AS_OF}'"
    )
    frame = pd.read_sql(query, engine)
    engine.dispose()
    frame = frame[frame["lgd_estimate"].notna() & (frame["ead"] > 0)]
    closed = frame[frame["lgd_realised"].notna()]
    e, r, w = (closed[c].to_numpy(float) for c in ("lgd_estimate", "lgd_realised", "ead"))
    out: dict[str, float] = {}
    for part in [closed, *(g for _, g in closed.groupby("book"))]:
        pe, pr = part["lgd_estimate"].to_numpy(float), part["lgd_realised"].to_numpy(float)
        grade = ecb_lgd_segment(pe)
        for g in range(1, 13):
            d = pr[grade == g] - pe[grade == g]
            if len(d) > 1:
                stats.ttest_1samp(d, 0.0, alternative="greater")
        t = stats.ttest_1samp(pr - pe, 0.0, alternative="greater")
        table = pd.crosstab(grade, ecb_lgd_segment(pr)).to_numpy()
        somers = stats.somersd(table).statistic
        if part is closed:
            out = {"backtest_p": float(t.pvalue), "gauc": (somers + 1) / 2}
    out["loss_shortfall"] = 1 - (w * e).sum() / (w * r).sum()
    return out


def _child(which: str, url: str) -> dict[str, float]:
    start = time.perf_counter()
    result = run_riskmon(url) if which == "riskmon" else run_pandas(url)
    seconds = time.perf_counter() - start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_rss_mb": rss_mb, **result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--child", choices=["riskmon", "pandas"])
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.url)))
        return
    import psycopg

    admin = args.url.replace("postgresql+psycopg", "postgresql")
    name = f"riskmon_bench_lgd_{args.rows}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {name}")
    url = args.url.rsplit("/", 1)[0] + f"/{name}"
    started = time.perf_counter()
    _load(url, _book(args.rows))
    print(f"loaded {args.rows:,} + 50,000 facilities in {time.perf_counter() - started:.1f} s")
    results = {}
    for which in ("riskmon", "pandas"):
        command = [sys.executable, str(Path(__file__)), "--child", which, "--url", url]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results[which] = json.loads(done.stdout.strip().splitlines()[-1])
    a, b = results["riskmon"], results["pandas"]
    print("| path | wall s | peak RSS MB | portfolio backtest_p | gauc |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for which, r in results.items():
        print(
            f"| {which} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} | {r['backtest_p']:.6g} "
            f"| {r['gauc']:.6f} |"
        )
    print(
        f"ratio (read_sql + scipy / riskmon): {b['seconds'] / a['seconds']:.2f}x time, "
        f"{b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x peak RSS"
    )
    if not args.keep:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


if __name__ == "__main__":
    main()
