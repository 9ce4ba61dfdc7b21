"""The fingerprints a night takes on PostgreSQL, by each of the two row hashes.

A night fingerprints the unsettled days it read before (``riskmon.collect.fingerprint``). On
PostgreSQL 14 and later a table whose columns are all of types hashed by value is hashed with
``hash_record_extended`` (hashed once more); any other row is hashed as its text. This times
both on the same days of a loans table, in one process, the two interleaved:

    .venv/bin/python benchmarks/bench_fingerprint.py \\
        --url postgresql+psycopg://postgres@127.0.0.1:5432/riskmon_bench_incremental_10000000_d2

(the table ``bench_incremental.py --keep`` leaves). Every column of the table is hashed, as a
model that reads them all would; the days are the newest ``--days`` score dates of the table
and as many six months before them (a night's current window and its performance window).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time

from sqlalchemy import MetaData, Table, create_engine, func, select

from riskmon.collect import fingerprint
from riskmon.collect.engines import POSTGRESQL
from riskmon.collect.fingerprint import fingerprints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--table", default="loans")
    parser.add_argument("--score-date", default="score_date")
    parser.add_argument("--days", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    engine = create_engine(args.url)
    by_value = fingerprint._hashed_by_value
    seconds: dict[str, list[float]] = {"record": [], "text": []}
    with engine.connect() as connection:
        loans = Table(args.table, MetaData(), autoload_with=connection)
        newest = connection.execute(select(func.max(loans.c[args.score_date]))).scalar_one()
        current = [newest - dt.timedelta(days=d) for d in range(args.days)]
        days = current + [d - dt.timedelta(days=183) for d in current]
        columns = list(loans.c.keys())
        kinds = {c.name: repr(c.type) for c in loans.c}
        connection.rollback()
        for _ in range(args.repeats):
            for form in seconds:
                fingerprint._hashed_by_value = by_value if form == "record" else _never
                with connection.begin():
                    start = time.perf_counter()
                    prints = fingerprints(
                        connection, loans, args.score_date, columns, days, POSTGRESQL.row_hash
                    )
                    seconds[form].append(time.perf_counter() - start)
                    assert prints is not None
    rows = sum(int(p.split(":")[0]) for p in prints.values())
    print(f"# {args.table}: {len(columns)} columns, {len(days)} days, {rows} rows; {kinds}")
    print("| row hash | median s | each s |")
    print("|---|---:|---|")
    for form, each in seconds.items():
        listed = ", ".join(f"{s:.3f}" for s in each)
        print(f"| {form} | {statistics.median(each):.3f} | {listed} |")
    ratio = statistics.median(seconds["text"]) / statistics.median(seconds["record"])
    print(f"\ntext / record = {ratio:.2f}")


def _never(column: object) -> bool:
    return False


if __name__ == "__main__":
    main()
