"""Speed of riskmon's ranking figures on arrays against scikit-learn and scipy.

riskmon builds one score table (one sort) and reads KS, AUC (with DeLong), Gini and a decile
lift table off it; the references are ``sklearn.metrics.roc_auc_score`` alone and
``scipy.stats.ks_2samp`` alone. Reported: the median wall time of several repeats.

    .venv/bin/python benchmarks/bench_metrics_arrays.py --rows 10000000 --repeats 5
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import roc_auc_score

from riskmon.metrics import (
    CountTable,
    gini_from_counts,
    ks_statistic_from_counts,
    lift_table_from_counts,
    roc_auc_from_counts,
)

#: share of bads in the synthetic portfolio
BAD_RATE = 0.05
#: how far bads' scores are shifted up (a model of moderate power)
SEPARATION = 0.1
#: decimals of the "tied" variant (a PD rounded to 4 decimals: at most 10⁴ distinct values)
TIED_DECIMALS = 4
SEED = 20240601


def riskmon_four(y: Any, s: Any) -> tuple[float, ...]:
    table = CountTable.from_scores(y, s)
    ks = ks_statistic_from_counts(table)
    auc = roc_auc_from_counts(table)
    g = gini_from_counts(table)
    lift = lift_table_from_counts(table, n_groups=10)
    return ks.statistic, auc.auc, g.gini, float(lift["lift"].iloc[0])


def table_only(y: Any, s: Any) -> int:
    return len(CountTable.from_scores(y, s))


def sklearn_auc(y: Any, s: Any) -> float:
    return float(roc_auc_score(y, s))


def scipy_ks(y: Any, s: Any) -> float:
    return float(stats.ks_2samp(s[y == 1], s[y == 0]).statistic)


def median_seconds(fn: Callable[..., Any], repeats: int, *args: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    y = (rng.random(args.rows) < BAD_RATE).astype(np.int8)
    raw = rng.random(args.rows) + SEPARATION * y
    print(
        f"{args.rows:,} rows, median of {args.repeats}; {platform.processor() or 'cpu'}, "
        f"numpy {np.__version__}"
    )
    for name, s in (("rounded to 4 decimals", np.round(raw, TIED_DECIMALS)), ("unrounded", raw)):
        print(f"\n{name}: {np.unique(s).size:,} distinct scores")
        t4, figures = median_seconds(riskmon_four, args.repeats, y, s)
        tt, _ = median_seconds(table_only, args.repeats, y, s)
        ta, auc = median_seconds(sklearn_auc, args.repeats, y, s)
        tk, ks = median_seconds(scipy_ks, args.repeats, y, s)
        assert abs(figures[1] - auc) < 1e-9
        assert abs(figures[0] - ks) < 1e-9
        print(f"  riskmon KS+AUC+Gini+decile lift  {t4:7.2f} s   (score table alone {tt:.2f} s)")
        print(f"  sklearn roc_auc_score           {ta:7.2f} s")
        print(f"  scipy ks_2samp                  {tk:7.2f} s")


if __name__ == "__main__":
    main()
