"""The binomial test's critical count under asset correlation: guessed, then settled exactly,
against halving the exact tails alone.

With ρ > 0 each exact tail is an adaptive quadrature over the systematic factor
(``riskmon.metrics._mixed_binomial.tail``). ``critical_count`` locates the count on a fixed
Gauss–Hermite rule first and then evaluates the exact tails outwards from that guess; the
reference halves (0, N + 1] on the exact tails, as riskmon did before. This runs both on a grid
of grades (N, PD, ρ, α), interleaved, checks that they give the same count everywhere, and
prints how many exact tails each evaluated and its time (medians of ``--repeats``):

    .venv/bin/python benchmarks/bench_critical_count.py --repeats 3
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time
from typing import Any

from riskmon.metrics import _mixed_binomial

GRADES = tuple(
    itertools.product(
        (1, 2, 5, 10.5, 37, 200, 1000, 4321.7, 20_000, 250_000),  # N (Kish's are not whole)
        (1e-6, 1e-4, 0.003, 0.025, 0.1, 0.4, 0.9, 0.999),  # PD
        (1e-6, 0.001, 0.03, 0.12, 0.24, 0.9),  # ρ
        (0.001, 0.01, 0.05, 0.5),  # α
    )
)


def halving(n: float, pd: float, rho: float, alpha: float) -> int:
    """The smallest d with P(X >= d) <= alpha, by bisection on the exact tails alone."""
    safe, significant = 0, math.ceil(n + 1)
    while significant - safe > 1:
        mid = (safe + significant) // 2
        if _mixed_binomial.tail(mid, n, pd, rho, upper=True) <= alpha:
            significant = mid
        else:
            safe = mid
    return significant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    exact = _mixed_binomial.tail
    tails = {"halving": 0, "guessed": 0}
    seconds: dict[str, list[float]] = {"halving": [], "guessed": []}
    searches = {"halving": halving, "guessed": _mixed_binomial.critical_count}
    counts: dict[str, list[int]] = {}
    for repeat in range(args.repeats):
        for name, search in searches.items():

            def counted(*a: Any, _name: str = name, **k: Any) -> float:
                tails[_name] += 1
                return exact(*a, **k)

            _mixed_binomial.tail = counted  # type: ignore[assignment]
            started = time.perf_counter()
            counts[name] = [search(*grade) for grade in GRADES]
            seconds[name].append(time.perf_counter() - started)
        _mixed_binomial.tail = exact
        if repeat == 0:
            differ = [g for g, a, b in zip(GRADES, *counts.values(), strict=True) if a != b]
            print(f"{len(GRADES)} grades, counts that differ: {len(differ)} {differ[:3]}")
    for name in searches:
        print(
            f"{name:8s} exact tails {tails[name] // args.repeats:6d}  "
            f"median {statistics.median(seconds[name]):6.2f} s  "
            f"({', '.join(f'{s:.2f}' for s in seconds[name])})"
        )
    ratio = statistics.median(seconds["halving"]) / statistics.median(seconds["guessed"])
    print(f"halving / guessed: {ratio:.2f}x")


if __name__ == "__main__":
    main()
