"""Benchmark: a nightly run that reads its fresh days against one reading its windows in full,
and a daily backfill both ways, on a PostgreSQL table receiving ``--per-day`` loans a day.

The loans are ``bench_collect.py``'s (score, label, weight, ``channel`` segment, 12 numeric and
8 categorical characteristics), ``--rows`` of them, ``--per-day`` on each score day from
2024-01-01 on (10M at 30,000 a day: 334 days), loaded by ``COPY`` into the throw-away database
``riskmon_bench_incremental_<rows>`` with an index on ``score_date`` (as a table that receives
loans every day has; ``--no-index`` leaves it out). The model: every characteristic, a 1-month
stability window and a 6-month performance window (so its cohort is the month ending six
months before the run), baseline the first 30 days (frozen once, untimed, into a template
SQLite store).

Measured, each in a fresh subprocess that has imported ``riskmon.run`` before the clock, on a
fresh copy of a template store, interleaved, ``--repeats`` times:

- (a) ``nightly``: ``run_models`` (collect, compute, store, report, index) as of the newest
  day, the morning after it, on a store whose previous night (as of the day before, read the
  morning after that) kept its cells: it reads the new day and the days not yet settled;
- (b) ``full``: the same run with ``full=True`` (every day of both windows read again, by
  day, and kept);
- (c) ``whole``: the same run reading its windows whole, keeping no cell, as every run read
  before daily cells (``source.incremental: false``).

Then ``--backfill-days`` consecutive daily runs ending at the newest day, on a store holding
only the baseline, in one process each way: (c) ``backfill`` (daily cells, read today: every
day settled) and (d) ``backfill_full``. The loans read are counted from each run's provenance
(days read per window × ``--per-day``), against the loans of the windows' union.

``--score-decimals 2`` rounds the score (a PD of 4 decimals) to 2 decimals in a database of its
own, as few distinct values as a scorecard's points, whose ranking a run keeps by day;
``--raw-whole`` reads that ranking over the whole windows all the same, to compare.

Run (PostgreSQL on 127.0.0.1, its database created, and dropped unless ``--keep``):

    .venv/bin/python benchmarks/bench_incremental.py --rows 10000000 --repeats 3 \\
        --backfill-days 30 --keep
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_collect as bc  # the loans and their loader
import bench_run as br  # the template store's copy

MODEL = "bench_pd"
START = dt.date(2024, 1, 1)
DB = "riskmon_bench_incremental"

#: bench_run's model, its cohort six months back, its restatement days set
CONFIG = br.CONFIG.replace("performance_window: 2 months", "performance_window: 6 months").replace(
    "      statement_timeout_seconds: 7200\n",
    "      statement_timeout_seconds: 7200\n      restatement_days: {restatement_days}\n",
)


def days_of(rows: int, per_day: int) -> int:
    return -(-rows // per_day)


def newest(rows: int, per_day: int) -> dt.date:
    return START + dt.timedelta(days=days_of(rows, per_day) - 1)


# ---------------------------------------------------------------------------- the loans
def _name(rows: int, decimals: int) -> str:
    """The database of ``rows`` loans, their score rounded to ``decimals`` (4: as generated)."""
    return f"{DB}_{rows}" if decimals == 4 else f"{DB}_{rows}_d{decimals}"


def _url(server: str, rows: int, decimals: int = 4) -> str:
    return server.rsplit("/", 1)[0] + f"/{_name(rows, decimals)}"


def load(
    server: str, rows: int, per_day: int, index: bool, chunk_rows: int, seed: int, decimals: int
) -> None:
    import numpy as np
    import psycopg

    name = _name(rows, decimals)
    with psycopg.connect(bc.pg_admin_url(server), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    columns = ", ".join(c for c, _ in bc.COLUMN_SQL)
    with psycopg.connect(bc.pg_admin_url(_url(server, rows, decimals)), autocommit=True) as conn:
        conn.execute(bc.CREATE)
        for first in range(0, rows, chunk_rows):
            frame = bc.loan_chunk(seed, first, min(chunk_rows, rows - first))
            if decimals != 4:  # a scorecard's few distinct values
                frame["pd_score"] = frame["pd_score"].round(decimals)
            day = (frame["loan_id"].to_numpy() // per_day).astype("timedelta64[D]")
            frame["score_date"] = (np.datetime64(START, "D") + day).astype("datetime64[D]")
            buffer = io.StringIO()
            frame.to_csv(buffer, index=False, header=False)
            with (
                conn.cursor() as cur,
                cur.copy(f"COPY {bc.TABLE} ({columns}) FROM STDIN (FORMAT csv)") as copy,
            ):
                copy.write(buffer.getvalue())
        if index:
            conn.execute(f"CREATE INDEX loans_score_date ON {bc.TABLE} (score_date)")
        conn.execute(f"VACUUM (ANALYZE) {bc.TABLE}")


def write_config(workdir: Path, loans_url: str, restatement_days: int) -> Path:
    characteristics = [f"      - {{name: {n}, kind: numeric}}" for n in bc.NUMERIC]
    characteristics += [f"      - {{name: {n}, kind: categorical}}" for n in bc.CATEGORICAL]
    path = workdir / "riskmon.yaml"
    path.write_text(
        CONFIG.format(
            model=MODEL,
            loans_url=loans_url,
            table=bc.TABLE,
            characteristics="\n".join(characteristics),
            baseline_start=START,
            baseline_end=START + dt.timedelta(days=29),
            restatement_days=restatement_days,
        )
    )
    return path


def _env(store: Path, workdir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "BENCH_STORE_URL": f"sqlite:///{store}",
        "BENCH_REPORTS_DIR": str(workdir / f"reports_{store.stem}"),
    }


# ---------------------------------------------------------------------------- children
def _morning_after(day: dt.date) -> None:
    """The process reads as a scheduled run does: the morning after its as-of date."""
    import riskmon.cells as cells

    morning = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(2), dt.timezone.utc)
    cells.reading_time = lambda: morning  # type: ignore[assignment]


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _read(store: Any, as_of: dt.date) -> dict[str, Any]:
    """Days read per window and statements, from the run's provenance."""
    data = store.run(MODEL, as_of).provenance
    windows = data["windows"]
    return {
        "statements": len(data["statements"]),
        "days": {p: w["days"] for p, w in windows.items()},
        "days_read": {
            p: (w["days"] if w.get("days_read") is None else w["days_read"])
            for p, w in windows.items()
        },
        "windows": {p: [w["start"], w["end"]] for p, w in windows.items()},
    }


def child(kind: str, config_file: str, as_of: str, strategy: str = "auto") -> dict[str, Any]:
    import riskmon.run
    from riskmon.config import load_config
    from riskmon.store import MetricStore
    from riskmon.store.engine import store_engine

    if os.environ.get("BENCH_RAW_WHOLE"):  # --raw-whole: as if the distinct scores were many
        import riskmon.cells as cells

        per_day = cells.cells_per_day
        cells.cells_per_day = lambda request, baseline, *, raw=False: (  # type: ignore[assignment]
            cells.MAX_CELLS_PER_DAY + 1 if raw else per_day(request, baseline)
        )
    config = load_config(config_file)
    store = MetricStore(store_engine(config.store.url))
    day = dt.date.fromisoformat(as_of)
    if kind == "seed":  # the previous night, untimed: its cells, read the morning after it
        _morning_after(day)
        (outcome,) = riskmon.run.run_models(config, [MODEL], day, store=store, full=True)
        assert outcome.ok, outcome.error
        return {"seeded": as_of}
    if kind == "whole":  # the windows read whole, as every run read before daily cells
        riskmon.run.day_plan = lambda *args, **kwargs: None  # type: ignore[assignment]
    if kind in ("nightly", "full", "whole"):
        _morning_after(day)
        start = time.perf_counter()
        (outcome,) = riskmon.run.run_models(
            config,
            [MODEL],
            day,
            store=store,
            full=kind == "full",
            strategy=strategy,  # type: ignore[arg-type]
        )
        seconds = time.perf_counter() - start
        assert outcome.ok, outcome.error
        return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), **_read(store, day)}
    days = int(kind.split(":")[1])
    full = kind.startswith("backfill_full")
    if kind.startswith("backfill_whole"):
        riskmon.run.day_plan = lambda *args, **kwargs: None  # type: ignore[assignment]
    dates = [day - dt.timedelta(days=i) for i in reversed(range(days))]
    start = time.perf_counter()
    per_run = []
    for each in dates:
        (outcome,) = riskmon.run.run_models(
            config, [MODEL], each, store=store, full=full, notify=each == dates[-1]
        )
        assert outcome.ok, outcome.error
        per_run.append(_read(store, each))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "runs": per_run, "peak_rss_mb": _peak_rss_mb()}


def run_child(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "_child", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------- main
@contextlib.contextmanager
def _database(args: argparse.Namespace) -> Iterator[str]:
    url = _url(args.pg_server, args.rows, args.score_decimals)
    start = time.perf_counter()
    if not args.keep or not _loaded(args):
        index = not args.no_index
        load(
            args.pg_server,
            args.rows,
            args.per_day,
            index,
            args.chunk_rows,
            args.seed,
            args.score_decimals,
        )
        print(f"# loaded {args.rows} loans in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    try:
        yield url
    finally:
        if not args.keep:
            import psycopg

            with psycopg.connect(bc.pg_admin_url(args.pg_server), autocommit=True) as admin:
                name = _name(args.rows, args.score_decimals)
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _loaded(args: argparse.Namespace) -> bool:
    import psycopg

    try:
        url = _url(args.pg_server, args.rows, args.score_decimals)
        with psycopg.connect(bc.pg_admin_url(url)) as conn:
            row = conn.execute(f"SELECT count(*) FROM {bc.TABLE}").fetchone()
    except psycopg.Error:
        return False
    return row is not None and row[0] == args.rows


def _template(config: Path, workdir: Path, as_of: dt.date) -> tuple[Path, Path]:
    """(a store with the baseline only, one with the previous night's cells too)."""
    bare = workdir / "bare.db"
    os.environ.update(_env(bare, workdir))
    seconds = br.freeze_template(config, bare, workdir)
    print(f"# baseline frozen in {seconds:.1f} s", file=sys.stderr)
    seeded = workdir / "seeded.db"
    br.copy_store(bare, seeded)
    run_child(["seed", str(config), str(as_of - dt.timedelta(days=1))], _env(seeded, workdir))
    return bare, seeded


def _loans_read(runs: list[dict[str, Any]], per_day: int) -> int:
    return sum(sum(r["days_read"].values()) for r in runs) * per_day


def summarize(records: list[dict[str, Any]], args: argparse.Namespace) -> str:
    def med(kind: str, field: str = "seconds") -> float:
        return statistics.median(r[field] for r in records if r["kind"] == kind)

    if not any(r["kind"] == "nightly" for r in records):
        return _backfills(records, args)
    nightly, full = med("nightly"), med("full")
    lines = [
        "| measurement | median s | each s | days read (current, performance) | statements "
        "| peak RSS MB |",
        "|---|---:|---|---|---:|---:|",
    ]
    for letter, kind in zip("abc", ("nightly", "full", "whole"), strict=True):
        rows = [r for r in records if r["kind"] == kind]
        each = ", ".join(f"{r['seconds']:.2f}" for r in rows)
        days = rows[0]["days_read"]
        rss = statistics.median(r["peak_rss_mb"] for r in rows)
        lines.append(
            f"| ({letter}) {kind} | {med(kind):.2f} | {each} | "
            f"{days.get('current')}, {days.get('performance')} | {rows[0]['statements']} | "
            f"{rss:.0f} |"
        )
    ratios = [
        f["seconds"] / n["seconds"]
        for n, f in zip(
            [r for r in records if r["kind"] == "nightly"],
            [r for r in records if r["kind"] == "full"],
            strict=False,
        )
    ]
    lines.append("")
    whole = med("whole")
    lines.append(
        f"full / nightly = {full:.2f} / {nightly:.2f} = **{full / nightly:.1f}×** "
        f"(per repeat {', '.join(f'{x:.1f}' for x in ratios)}); whole (no cells) / nightly = "
        f"{whole:.2f} / {nightly:.2f} = **{whole / nightly:.1f}×**"
    )
    return "\n".join([*lines, _backfills(records, args)])


def _backfills(records: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = []
    for kind in ("backfill", "backfill_full", "backfill_whole"):
        rows = [r for r in records if r["kind"] == kind]
        if not rows:
            continue
        r = rows[0]
        read = _loans_read(r["runs"], args.per_day)
        union = args.per_day * _union_days(r["runs"], args)
        lines.append(
            f"- {kind}, {len(r['runs'])} daily runs: {r['seconds']:.1f} s "
            f"({r['seconds'] / len(r['runs']):.2f} s a run), loans read {read:,} = "
            f"{read / union:.2f} × the {union:,} loans of the windows' union, peak RSS "
            f"{r['peak_rss_mb']:.0f} MB"
        )
    return "\n".join(lines)


def _union_days(runs: list[dict[str, Any]], args: argparse.Namespace) -> int:
    """Days with loans in the union of the backfill's windows."""
    first, last = START, newest(args.rows, args.per_day)
    days: set[dt.date] = set()
    for run in runs:
        for start, end in run["windows"].values():
            day = max(dt.date.fromisoformat(start), first)
            while day <= min(dt.date.fromisoformat(end), last):
                days.add(day)
                day += dt.timedelta(days=1)
    return len(days)


def main(argv: Sequence[str] | None = None) -> None:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "_child":
        print(json.dumps(child(*sys.argv[2:]), default=str))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--per-day", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backfill-days", type=int, default=30)
    parser.add_argument("--no-index", action="store_true")
    parser.add_argument(
        "--backfills",
        nargs="*",
        default=["backfill", "backfill_whole"],
        choices=["backfill", "backfill_full", "backfill_whole"],
        help="the backfills to time: daily cells; every day read by day; windows read whole",
    )
    parser.add_argument(
        "--restatement-days", type=int, default=7, help="source.restatement_days of the model"
    )
    parser.add_argument(
        "--strategy",
        default="auto",
        help="the collect strategy of the timed runs (nightly, full, whole), as `riskmon run "
        "--strategy`; with one other than auto the pass by day uses it too",
    )
    parser.add_argument(
        "--score-decimals",
        type=int,
        default=4,
        help="the score rounded to this many decimals (2: 83 distinct values in the baseline, "
        "as few as a scorecard's points), in a database of its own",
    )
    parser.add_argument(
        "--raw-whole",
        action="store_true",
        help="read the score's distinct values over the whole windows, however few",
    )
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--pg-server", default=bc.DEFAULT_PG_SERVER)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("bench_incremental.jsonl"))
    parser.add_argument("--keep", action="store_true", help="keep (and reuse) the database")
    args = parser.parse_args(argv)
    if args.raw_whole:
        os.environ["BENCH_RAW_WHOLE"] = "1"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="riskmon_bench_incremental_"))
    workdir.mkdir(parents=True, exist_ok=True)
    as_of = newest(args.rows, args.per_day)
    records: list[dict[str, Any]] = []

    def record(r: dict[str, Any]) -> None:
        records.append(r)
        with args.out.open("a") as out:
            out.write(json.dumps(r, default=str) + "\n")
        brief = {k: v for k, v in r.items() if k != "runs"}
        print(json.dumps(brief, default=str), file=sys.stderr, flush=True)

    print(f"# {platform.platform()}, load {os.getloadavg()}", file=sys.stderr)
    with _database(args) as url:
        config = write_config(workdir, url, args.restatement_days)
        bare, seeded = _template(config, workdir, as_of)
        for repeat in range(args.repeats):
            order = ("nightly", "full", "whole")
            order = order if repeat % 2 == 0 else order[::-1]
            for kind in order:
                store = workdir / f"{kind}.db"
                br.copy_store(seeded, store)
                command = [kind, str(config), str(as_of), args.strategy]
                result = run_child(command, _env(store, workdir))
                record({"kind": kind, "repeat": repeat, "rows": args.rows, **result})
        if args.backfill_days:
            for kind in args.backfills:
                store = workdir / f"{kind}.db"
                br.copy_store(bare, store)
                spec = f"{kind}:{args.backfill_days}"
                result = run_child([spec, str(config), str(as_of)], _env(store, workdir))
                record({"kind": kind, "rows": args.rows, **result})
    print(summarize(records, args))
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
