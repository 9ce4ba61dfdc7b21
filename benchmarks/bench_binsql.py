"""Benchmark: a numeric binning in PostgreSQL, as the ``CASE`` tree and as ``width_bucket``.

``riskmon.collect.binsql.NumericBin`` renders a numeric bin as ``width_bucket`` over the
edges on PostgreSQL and as a balanced tree of ``CASE WHEN x <= edge`` elsewhere. This times
both forms of the same expressions in one ``GROUP BY`` (bin, label: count, sum) over
``--rows`` random doubles, for a binning of ``--bins`` edges (default: 9, a characteristic's
deciles, and 3,999, the score's finest ranking grid), repeats interleaved, medians; the two
forms' grouped rows are compared (they must be equal).

Run (PostgreSQL on 127.0.0.1, user postgres; a table ``riskmon_bench_binsql`` is created in
the ``postgres`` database and dropped at the end):

    .venv/bin/python benchmarks/bench_binsql.py --rows 1000000 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
from sqlalchemy import (
    Column,
    Double,
    Integer,
    MetaData,
    Table,
    create_engine,
    func,
    select,
    text,
)

from riskmon.collect.binsql import NumericBin
from riskmon.collect.engines import POSTGRESQL_SETTINGS

TABLE = "riskmon_bench_binsql"


def _statements(table: Table, edges: list[float]) -> dict[str, Any]:
    """The same GROUP BY with the bin as width_bucket (PostgreSQL's rendering) and as the
    tree (every other engine's), both run on PostgreSQL."""
    numeric = NumericBin(table.c.x, edges)
    out = {}
    for form, key in (("width_bucket", numeric), ("case tree", numeric.tree)):
        k = key.label("k")
        out[form] = select(k, table.c.y, func.count(), func.sum(table.c.x)).group_by(k, table.c.y)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bins", type=int, nargs="+", default=[9, 3_999])
    parser.add_argument("--url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()

    engine = create_engine(args.url)
    table = Table(TABLE, MetaData(), Column("x", Double), Column("y", Integer))
    rng = np.random.default_rng(11)
    with engine.begin() as connection:
        connection.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
        connection.execute(
            text(
                f"CREATE TABLE {TABLE} AS SELECT random() AS x, (random() < 0.1)::int AS y "
                f"FROM generate_series(1, {int(args.rows)})"
            )
        )
        connection.execute(text(f"ANALYZE {TABLE}"))
    try:
        for n_edges in args.bins:
            edges = np.unique(rng.random(n_edges)).tolist()
            statements = _statements(table, edges)
            seconds: dict[str, list[float]] = {form: [] for form in statements}
            results = {}
            with engine.connect() as connection:
                for _ in range(args.repeats):
                    for form, statement in statements.items():
                        with connection.begin():
                            for name, value in POSTGRESQL_SETTINGS.items():
                                connection.execute(
                                    text("SELECT set_config(:n, :v, true)"),
                                    {"n": name, "v": value},
                                )
                            start = time.perf_counter()
                            rows = connection.execute(statement).all()
                            seconds[form].append(time.perf_counter() - start)
                        results[form] = sorted((int(k), int(y), int(n)) for k, y, n, _ in rows)
            assert results["width_bucket"] == results["case tree"], "the two forms disagree"
            medians = {form: statistics.median(s) for form, s in seconds.items()}
            for form, each in seconds.items():
                print(
                    f"| {n_edges + 1} bins | {form} | {medians[form]:.3f} | "
                    f"{', '.join(f'{s:.3f}' for s in each)} |"
                )
            ratio = medians["case tree"] / medians["width_bucket"]
            print(f"| {n_edges + 1} bins | tree / width_bucket | {ratio:.2f}× | |")
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
        engine.dispose()


if __name__ == "__main__":
    main()
