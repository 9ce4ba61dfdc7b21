"""Benchmark: adding a whole run's ``packed`` rows into its aggregate, as arrays
(``riskmon.collect.packed_rows.PackedRows``) against row by row (the loop the other layouts
use, written out here), on the same rows.

Needs a database and workdir that ``bench_whole.py --engines postgresql --keep --workdir DIR``
left (its loans, its model and its template store with the baseline frozen): the run is made
once as of 2025-03-31 with ``riskmon.run.run_models``, its ``packed`` statements' rows fetched
once (batches of 10,000, as a run fetches them), then both ways timed over the same rows,
interleaved, ``--repeats`` times; medians. Also checks that both give the same cells (counts
equal, weights within 1e-12: a cell whose rows span two batches is rounded once more)::

    .venv/bin/python benchmarks/bench_whole.py --rows 1000000 --repeats 1 --engines postgresql \
        --keep --workdir /tmp/bw
    .venv/bin/python benchmarks/bench_packed_rows.py --workdir /tmp/bw/postgresql
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import tempfile
import time
from itertools import chain
from pathlib import Path
from typing import Any

import riskmon.collect.grouped as grouped
import riskmon.run as run_module
from riskmon.collect.aggregate import Aggregate
from riskmon.collect.census import LevelTally
from riskmon.collect.grouped import _binner
from riskmon.collect.packed_rows import PackedRows
from riskmon.collect.pushdown import by_text, statements
from riskmon.config import load_config
from riskmon.store import MetricStore


def _fetch(workdir: Path, scratch: Path) -> tuple[Any, list[tuple[Any, list[list[Any]]]]]:
    """The run's request and its packed statements with their rows."""
    os.environ["BENCH_STORE_URL"] = f"sqlite:///{scratch / 'store.db'}"
    os.environ["BENCH_REPORTS_DIR"] = str(scratch / "reports")
    shutil.copy(workdir / "template.db", scratch / "store.db")
    config = load_config(workdir / "riskmon.yaml")
    captured: dict[str, Any] = {}
    real = grouped.run

    def spy(connection: Any, loans: Any, request: Any, shape: Any, engine: Any) -> Any:
        engine.tune(connection)
        captured["request"] = request
        captured["data"] = [
            (st, [list(batch) for batch in connection.execute(st.select).partitions(10_000)])
            for st in statements(loans, request, shape, engine)
            if st.layout == "packed"
        ]
        return real(connection, loans, request, shape, engine)

    grouped.run = spy
    try:
        store = MetricStore.open(config.store.url)
        names = [m.name for m in config.models]
        run_module.run_models(
            config, names, dt.date(2025, 3, 31), store=store, report=False, notify=False,
            index=False, force=True,
        )  # fmt: skip
    finally:
        grouped.run = real
    return captured["request"], captured["data"]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        request, data = _fetch(args.workdir, Path(scratch))
    print("packed statements", len(data), "rows", sum(len(x) for _, bs in data for x in bs))
    s = len(request.segments)
    n_measures = 3 if request.weight else 1
    weighted = request.weight is not None
    summed = {v.name for v in request.variables if v.sums}
    with_moments = {v.name for v in request.variables if v.moments}
    first_variable = request.variables[0].name

    def new() -> Aggregate:
        agg = Aggregate.reading(request)
        tally = LevelTally(request)
        inv = 0
        for st, batches in data:
            binners = [_binner(v, st.raw_categories) for v in st.variables]
            texts = [(i, v) for i, v in enumerate(st.variables) if by_text(v, st.raw_categories)]
            watched = tally.watch(texts, st.cols.population_names)
            n_sums = 1 + request.n_sums if st.sums.pd else 0
            n_moments = 1 + request.n_moments if st.sums.moments else 0
            pr = PackedRows(
                agg,
                st.cols,
                st.variables,
                binners,
                s,
                weighted,
                n_measures,
                n_sums,
                n_moments,
                summed,
                with_moments,
                first_variable,
                tally,
                watched,
            )
            for b in batches:
                inv += pr.add(b)
        return agg

    def old() -> Aggregate:
        agg = Aggregate.reading(request)
        tally = LevelTally(request)
        inv = 0
        add = agg.add
        for st, batches in data:
            cols, variables = st.cols, st.variables
            binners = [_binner(v, st.raw_categories) for v in variables]
            texts = [(i, v) for i, v in enumerate(variables) if by_text(v, st.raw_categories)]
            watched = tally.watch(texts, cols.population_names)
            n_sums = 1 + request.n_sums if st.sums.pd else 0
            n_moments = 1 + request.n_moments if st.sums.moments else 0
            n_tail = n_measures + n_sums + n_moments
            for row in chain.from_iterable(batches):
                measures = row[-n_tail:]
                n, w = measures[0], (measures[1] if weighted else None)
                end = len(row) - n_moments
                sums = row[end - n_sums + 1 : end] if n_sums else None
                moments = row[end + 1 :] if n_moments else None
                population = cols.population_name(row[0])
                segment_values, label = tuple(row[1 : 1 + s]), row[1 + s]
                keys = row[2 + s : -n_tail]
                cells = [
                    (v.name, to_bin(key))
                    for v, to_bin, key in zip(variables, binners, keys, strict=True)
                ]
                if watched and population == tally.population:
                    for i, name, unseen in watched:
                        if cells[i][1] == unseen:
                            tally.add(name, str(keys[i]), n, n if w is None else w)
                for name, key in cells:
                    if weighted and name == first_variable:
                        inv += int(measures[2] or 0)
                    cell_sums = sums if name in summed else None
                    if cell_sums is not None:
                        agg.count_invalid_pd(name, measures[n_measures])
                    cell_moments = moments if name in with_moments else None
                    if cell_moments is not None:
                        agg.count_invalid_target(name, row[end])
                    add(
                        (population, name, segment_values, label, key),
                        n,
                        w,
                        cell_sums,
                        cell_moments,
                    )
        return agg

    t: dict[str, list[float]] = {"old": [], "new": []}
    for _ in range(args.repeats):
        for name, f in (("old", old), ("new", new)):
            started = time.perf_counter()
            f()
            t[name].append(time.perf_counter() - started)
    print({k: (round(statistics.median(v), 4), [round(x, 3) for x in v]) for k, v in t.items()})
    a, b = old(), new()
    a_cells, b_cells = a.cell_dict(), b.cell_dict()
    assert a_cells.keys() == b_cells.keys()
    assert all(a_cells[k][0] == b_cells[k][0] for k in a_cells)
    worst = max(abs(a_cells[k][1] - b_cells[k][1]) / abs(a_cells[k][1]) for k in a_cells)
    print(
        f"{len(a_cells)} cells; counts equal; largest relative difference of a weight {worst:.2e}"
    )
    assert worst <= 1e-12


if __name__ == "__main__":
    main()
