"""Benchmark: binned count tables from arrays, and PSI/CSI/IV from count tables.

A baseline of ``--rows`` loans (default 10 million) with ``--numeric`` numeric characteristics
(with NULLs) and ``--categorical`` categorical ones (half as pandas categoricals, half as
object arrays of strings), and a current sample of ``--current-rows`` loans drifting a little.
One characteristic is generated at a time, so memory stays at a few hundred MB.

Timed per characteristic:

- fit: bins fitted on the baseline (equal-frequency deciles, or levels);
- count: ``Binning.assign`` + ``CountTable.from_bins`` on the baseline (labeled) and on the
  current sample (unlabeled) -- the step that grows with the number of rows;
- PSI/CSI and IV from the count tables (median of ``--repeat`` calls), also with the per-bin
  DataFrame built.

Run:  .venv/bin/python benchmarks/bench_metrics_counts.py
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from riskmon.metrics import (
    CountTable,
    fit_binning,
    information_value_from_counts,
    population_stability_index_from_counts,
)

LEVELS = np.array([f"level_{i:02d}" for i in range(12)], dtype=object)
NULL_SHARE = 0.05
BAD_RATE = 0.08


def _seconds(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _numeric(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    x = rng.lognormal(3.0 + shift, 0.7, n).round(1)  # rounded: ties, as real amounts have
    x[rng.random(n) < NULL_SHARE] = np.nan
    return x


def _categorical(rng: np.random.Generator, n: int, shift: float, as_category: bool) -> Any:
    p = np.linspace(2.0, 1.0, LEVELS.size) + shift * np.arange(LEVELS.size) / LEVELS.size
    codes = rng.choice(LEVELS.size, n, p=p / p.sum())
    missing = rng.random(n) < NULL_SHARE
    if as_category:
        codes[missing] = -1
        return pd.Categorical.from_codes(codes, categories=LEVELS.tolist())
    values = LEVELS[codes]
    values[missing] = None
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--current-rows", type=int, default=2_000_000)
    parser.add_argument("--numeric", type=int, default=14)
    parser.add_argument("--categorical", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    y = rng.random(args.rows) < BAD_RATE
    rows = []
    n_vars = args.numeric + args.categorical
    for v in range(n_vars):
        numeric = v < args.numeric
        if numeric:
            base = _numeric(rng, args.rows, 0.0)
            current = _numeric(rng, args.current_rows, 0.05)
            kind = "numeric"
        else:
            as_category = v % 2 == 0
            base = _categorical(rng, args.rows, 0.0, as_category)
            current = _categorical(rng, args.current_rows, 0.3, as_category)
            kind = "category" if as_category else "object"
        t_fit, binning = _seconds(lambda base=base: fit_binning(base))
        t_count, expected = _seconds(
            lambda b=binning, base=base: CountTable.from_bins(b.assign(base), b, y)
        )
        t_count_cur, actual = _seconds(
            lambda b=binning, current=current: CountTable.from_bins(b.assign(current), b)
        )

        def psi(e: CountTable = expected, a: CountTable = actual) -> Any:
            return population_stability_index_from_counts(e, a)

        def iv(e: CountTable = expected) -> Any:
            return information_value_from_counts(e)

        rows.append(
            {
                "variable": f"x{v:02d}",
                "kind": kind,
                "bins": binning.n_bins,
                "fit_s": t_fit,
                "count_baseline_s": t_count,
                "count_current_s": t_count_cur,
                "psi_ms": _median_ms(psi, args.repeat),
                "iv_ms": _median_ms(iv, args.repeat),
                "psi_with_frame_ms": _median_ms(lambda: psi().table, args.repeat // 10 or 1),
                "iv_with_frame_ms": _median_ms(lambda: iv().table, args.repeat // 10 or 1),
                "psi": float(psi()),
                "iv": float(iv()),
            }
        )
        del base, current
        print(rows[-1], flush=True)

    frame = pd.DataFrame(rows)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print()
    print(
        f"machine: {platform.platform()}, python {platform.python_version()}, "
        f"numpy {np.__version__}, pandas {pd.__version__}"
    )
    print(f"rows: baseline {args.rows:,}, current {args.current_rows:,}; variables: {n_vars}")
    print(f"peak RSS: {peak_mb:.0f} MB")
    print()
    print(
        frame.groupby("kind")[["fit_s", "count_baseline_s", "count_current_s"]]
        .median()
        .round(3)
        .to_string()
    )
    print()
    cols = ["psi_ms", "iv_ms", "psi_with_frame_ms", "iv_with_frame_ms"]
    print("medians over all variables (ms):")
    print(frame[cols].median().round(4).to_string())
    print()
    print(
        f"total count-table build, baseline: {frame['count_baseline_s'].sum():.1f} s, "
        f"current: {frame['count_current_s'].sum():.1f} s"
    )


if __name__ == "__main__":
    main()
