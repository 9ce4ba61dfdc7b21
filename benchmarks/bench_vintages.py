"""The vintage GROUP BY's cost: a collect pass with and without the vintage curves.

Loads the loans of ``bench_collect.py`` (score, label, weight, a segment, 12 numeric and 8
categorical characteristics) into DuckDB, adds a default date (about the PD's share of loans,
within 365 days of scoring) and a 30+ DPD date (30 days before it), and times
``riskmon.collect.collect`` on the benchmark's request with PD sums, alone and with a
``VintageRequest`` over both populations' months (events: default and dpd30, MOBs to 12), the
two alternating, in this process. Prints each time and the median ratio.

    .venv/bin/python benchmarks/bench_vintages.py --rows 10000000 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _bench_collect() -> Any:
    spec = importlib.util.spec_from_file_location("bench_collect", HERE / "bench_collect.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_collect"] = module
    spec.loader.exec_module(module)
    return module


def load(path: Path, rows: int, seed: int) -> None:
    """The benchmark's loans, then their default and 30+ DPD dates, in DuckDB."""
    import duckdb

    bench = _bench_collect()
    bench.load_duckdb(path, rows, 500_000, seed)
    with duckdb.connect(str(path)) as conn:
        conn.execute("ALTER TABLE loans ADD COLUMN default_date DATE")
        conn.execute("ALTER TABLE loans ADD COLUMN dpd30_date DATE")
        conn.execute(
            "UPDATE loans SET default_date = score_date + CAST(hash(loan_id) % 365 AS INTEGER) "
            "WHERE (hash(loan_id * 7) % 10000) < pd_score * 10000"
        )
        conn.execute("UPDATE loans SET dpd30_date = default_date - 30")
        conn.execute("CHECKPOINT")


def measure(path: Path, repeats: int, seed: int) -> list[tuple[float, float]]:
    from riskmon.collect import Source, VintageRequest, collect
    from riskmon.collect.request import PdSource
    from riskmon.plan import DateWindow

    bench = _bench_collect()
    request = bench.make_request(bench.fit_binnings(seed), "sums")
    config = bench.model_config(f"duckdb:///{path}")
    start = dt.date(bench.PERFORMANCE[0].year, bench.PERFORMANCE[0].month, 1)
    window = DateWindow(start, bench.CURRENT[1])
    events = {"default": "default_date", "dpd30": "dpd30_date"}
    vintages = VintageRequest(request, window, bench.CURRENT[1], events, 12)
    assert request.pd == PdSource("pd_score")
    out = []
    with Source(config) as source:
        collect(source, request)  # warm the file cache
        for _ in range(repeats):
            times = []
            for extra in (None, vintages):
                began = time.perf_counter()
                collected = collect(source, request, vintages=extra)
                times.append(time.perf_counter() - began)
                assert (extra is None) == (not collected.vintages)
            out.append((times[0], times[1]))
            print(f"without {times[0]:.2f} s, with vintages {times[1]:.2f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--path", type=Path, default=Path("/tmp/riskmon_bench_vintages.duckdb"))
    args = parser.parse_args()
    began = time.perf_counter()
    load(args.path, args.rows, args.seed)
    print(f"{args.rows:,} loans loaded in {time.perf_counter() - began:.0f} s", flush=True)
    times = measure(args.path, args.repeats, args.seed)
    ratio = statistics.median(b / a for a, b in times)
    print(f"median ratio with / without the vintage GROUP BY: {ratio:.3f}")
    args.path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
