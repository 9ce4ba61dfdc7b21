"""Benchmark: what a whole ``riskmon run`` costs beyond its collect step, on PostgreSQL.

The loans are those of ``bench_collect.py`` (its generator and PostgreSQL loader, imported
from it): ``--rows`` synthetic scored loans (default 1M), half scored in January 2025 (the
performance cohort, labeled but for 4 % unmatured), half in March 2025 (the current
population, unlabeled), with a PD score, the 0/1 label, a weight (``exposure``), a segment
(``channel``, 3 values), 12 numeric and 8 categorical characteristics. They are loaded by
``COPY`` into a throw-away database ``riskmon_bench_run_<rows>`` (dropped at the end unless
``--keep``).

The configuration (written to ``<workdir>/riskmon.yaml``): one model ``bench_pd`` on that
table, every characteristic monitored, the baseline the first 7 days of January, a 1-month
stability window and a 2-month performance window, so the run as of 2025-03-31 compares March
(current) and January (performance) with the baseline; the store is a SQLite file, the
reports go to a folder, no notification channels (notifying is a log line). The baseline is
frozen once, untimed, into a template store.

Measured, interleaved (the order of (a) and (b) alternates between repeats), each
measurement in a fresh subprocess that has already imported ``riskmon.run`` (so both pay the
same lazy imports a real process pays, e.g. SciPy, and neither pays the interpreter start),
each run on a fresh copy of the template store and an empty reports folder:

- (a) ``collect``: :func:`riskmon.collect.collect` alone, on a fresh :class:`Source`, with
  the request a run builds (``riskmon.baseline.for_run``'s, on the frozen bins of the stored
  baseline; the request is built before the clock starts);
- (b) ``run``: :func:`riskmon.run.run_models` of the model as of 2025-03-31 — claim,
  baseline read, collect, compute, evaluate, store write, report, notify, index. Its steps
  are timed by wrapping, in the child process only, the functions ``riskmon.run`` calls
  (``for_run``, ``collect``, ``compute_run``, ``evaluate``, ``render_run_report``,
  ``notify_run``, ``render_index``, ``MetricStore.complete_run`` ...) and every
  ``MetricStore`` method (calls and seconds per step), and inside the report the context
  (store reads and page objects) apart from the Jinja2 rendering;
- (c) ``cli`` (unless ``--skip-cli``): ``riskmon -c riskmon.yaml run bench_pd --as-of
  2025-03-31`` as a subprocess, wall clock including the interpreter start and imports.

``--profile`` adds one more (b) under pyinstrument and writes its text output to
``<workdir>/run_profile.txt``. Results: JSON lines to ``--out``, a Markdown table on stdout.

Run (PostgreSQL on 127.0.0.1, its database created and dropped by the script):

    .venv/bin/python benchmarks/bench_run.py --rows 1000000 --repeats 5 --profile
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_collect as bc  # the loans and their loader

#: the throw-away database, apart from bench_collect's own (which may be in use)
bc.BENCH_DB = "riskmon_bench_run"

MODEL = "bench_pd"
AS_OF = dt.date(2025, 3, 31)
BASELINE_WINDOW = (dt.date(2025, 1, 1), dt.date(2025, 1, 7))

CONFIG = """\
store:
  url: ${{BENCH_STORE_URL}}
  reports_dir: ${{BENCH_REPORTS_DIR}}
models:
  - name: {model}
    source:
      url: {loans_url}
      table: {table}
      statement_timeout_seconds: 7200
    columns:
      id: loan_id
      score_date: score_date
      score: pd_score
      label: bad
      weight: exposure
      segments: [channel]
    score_direction: higher_is_riskier
    characteristics:
{characteristics}
    baseline: {{start: {baseline_start}, end: {baseline_end}}}
    stability_window: 1 month
    performance_window: 2 months
"""


def write_config(workdir: Path, loans_url: str) -> Path:
    characteristics = [f"      - {{name: {n}, kind: numeric}}" for n in bc.NUMERIC]
    characteristics += [f"      - {{name: {n}, kind: categorical}}" for n in bc.CATEGORICAL]
    path = workdir / "riskmon.yaml"
    path.write_text(
        CONFIG.format(
            model=MODEL,
            loans_url=loans_url,
            table=bc.TABLE,
            characteristics="\n".join(characteristics),
            baseline_start=BASELINE_WINDOW[0],
            baseline_end=BASELINE_WINDOW[1],
        )
    )
    return path


def _env(store_file: Path, reports_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "BENCH_STORE_URL": f"sqlite:///{store_file}",
        "BENCH_REPORTS_DIR": str(reports_dir),
    }


# ---------------------------------------------------------------------------- the template store
def freeze_template(config_file: Path, template: Path, workdir: Path) -> float:
    """Create the store at ``template`` and freeze the model's baseline in it; seconds."""
    os.environ.update(_env(template, workdir / "reports_template"))
    from riskmon.baseline import freeze
    from riskmon.collect import Source
    from riskmon.config import load_config
    from riskmon.store import MetricStore
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import upgrade

    config = load_config(config_file)
    model = config.model(MODEL)
    template.unlink(missing_ok=True)
    with opened_store(config.store.url) as engine:
        upgrade(engine)
        start = time.perf_counter()
        with Source(model) as source:
            freeze(model, source, MetricStore(engine))
        return time.perf_counter() - start


def copy_store(template: Path, target: Path) -> None:
    """A consistent copy of the SQLite store (WAL included) by SQLite's backup API."""
    target.unlink(missing_ok=True)
    with (
        contextlib.closing(sqlite3.connect(template)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


# ---------------------------------------------------------------------------- children
def _open(config_file: str) -> tuple[Any, Any, Any]:
    from riskmon.config import load_config
    from riskmon.store import MetricStore
    from riskmon.store.engine import store_engine

    config = load_config(config_file)
    return config, config.model(MODEL), MetricStore(store_engine(config.store.url))


def child_collect(config_file: str) -> dict[str, Any]:
    """(a): the collect step alone, on the request the run builds."""
    import riskmon.run  # noqa: F401  (imported as a run imports it, before the clock)
    from riskmon.baseline import for_run
    from riskmon.collect import ALL, Source, collect
    from riskmon.plan import plan_run

    _, model, store = _open(config_file)
    with Source(model) as source:
        request = for_run(model, source, store, plan_run(model, AS_OF)).request
        start = time.perf_counter()
        collected = collect(source, request)
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "n_current": collected.counts[("current", ALL)].n_rows,
        "tables": len(collected.tables),
        "scipy_loaded": "scipy.stats" in sys.modules,
    }


class Steps:
    """Seconds and calls per step of a run, and per ``MetricStore`` method within each step."""

    def __init__(self) -> None:
        self.steps: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.store: dict[str, list[float]] = {}  # "step/method" -> [calls, seconds]
        self.active: list[str] = []

    def step(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            outer = not self.active
            self.active.append(name)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds = time.perf_counter() - start
                self.active.pop()
                key = name if outer else f"{self.active[-1]} > {name}"
                self.steps[key] = self.steps.get(key, 0.0) + seconds
                self.calls[key] = self.calls.get(key, 0) + 1

        return timed

    def store_method(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                where = self.active[0] if self.active else "run_model"
                entry = self.store.setdefault(f"{where}/{name}", [0, 0.0])
                entry[0] += 1
                entry[1] += time.perf_counter() - start

        return timed


def instrument(steps: Steps) -> None:
    """Wrap what ``riskmon.run`` calls, in this process only."""
    import riskmon.report.render as render
    import riskmon.run as run
    from riskmon.store import MetricStore

    for name in dir(MetricStore):
        attribute = getattr(MetricStore, name)
        if not name.startswith("_") and callable(attribute) and not isinstance(attribute, type):
            if name in ("open",):
                continue
            setattr(MetricStore, name, steps.store_method(name, attribute))
    # steps of run_model / run_models (names looked up in riskmon.run at call time)
    for attr, step in [
        ("for_run", "baseline read"),
        ("collect", "collect"),
        ("compute_run", "compute"),
        ("evaluate", "evaluate"),
        ("render_run_report", "report"),
        ("notify_run", "notify"),
        ("render_index", "index"),
    ]:
        setattr(run, attr, steps.step(step, getattr(run, attr)))
    for attr, step in [("claim_run", "claim"), ("complete_run", "store write")]:
        setattr(MetricStore, attr, steps.step(step, getattr(MetricStore, attr)))
    # inside the report and the index: the page objects, the Jinja2 rendering, the file
    for attr, step in [
        ("run_report_context", "context"),
        ("index_context", "context"),
        ("render_page", "jinja2"),
        ("_write", "write"),
    ]:
        setattr(render, attr, steps.step(step, getattr(render, attr)))


def _warm() -> None:
    """What a run loads on first use, outside the database: SciPy's statistics (the KS
    p-value, the AUC interval) and the compiled report templates."""
    import scipy.stats  # noqa: F401

    from riskmon.report.render import environment

    env = environment()
    for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
        env.get_template(name)


def child_run(config_file: str, profile: str = "", what_if: str = "") -> dict[str, Any]:
    """(b): a whole run through ``run_models``, its steps timed; ``what_if``: ``preloaded``
    (what :func:`_warm` loads is loaded before the clock starts) or ``warm_thread`` (loaded by
    a thread started with the run, while the collect waits for the database)."""
    import threading

    import riskmon.run

    config, _, store = _open(config_file)
    steps = Steps()
    instrument(steps)
    scipy_before = "scipy.stats" in sys.modules
    if what_if == "preloaded":
        _warm()
    profiler = None
    if profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.001)
        profiler.start()
    start = time.perf_counter()
    if what_if == "warm_thread":
        threading.Thread(target=_warm, daemon=True).start()
    (outcome,) = riskmon.run.run_models(config, [MODEL], AS_OF, store=store)
    seconds = time.perf_counter() - start
    if profiler is not None:
        profiler.stop()
        Path(profile).write_text(profiler.output_text(unicode=True, color=False))
    assert outcome.ok, outcome.error
    assert outcome.report_path, "the report was not written"
    return {
        "seconds": seconds,
        "steps": steps.steps,
        "calls": steps.calls,
        "store": steps.store,
        "n_current": outcome.counts.n_current if outcome.counts else None,
        "figures": len(outcome.figures),
        "alerts": len(outcome.alerts),
        "scipy_loaded_before": scipy_before,
    }


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


def run_cli(config_file: Path, env: dict[str, str]) -> dict[str, Any]:
    riskmon = Path(sys.executable).with_name("riskmon")
    command = [str(riskmon), "-c", str(config_file), "run", MODEL, "--as-of", str(AS_OF)]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return {"seconds": time.perf_counter() - start}


# ---------------------------------------------------------------------------- the report
def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(records: list[dict[str, Any]]) -> str:
    methods = ("collect", "run", "cli", "run/warm_thread", "run/preloaded")
    by = {m: [r for r in records if r["method"] == m] for m in methods}
    a = _median([r["seconds"] for r in by["collect"]])
    b = _median([r["seconds"] for r in by["run"]])
    lines = ["| measurement | runs | median s | each run s |", "|---|---:|---:|---|"]
    for method, label in [
        ("collect", "(a) collect alone"),
        ("run", "(b) whole run (run_models)"),
        ("cli", "(c) `riskmon run` CLI, wall clock"),
        ("run/warm_thread", "what if: (b), SciPy and templates loaded by a thread"),
        ("run/preloaded", "what if: (b), SciPy and templates loaded before the clock"),
    ]:
        rows = by[method]
        if rows:
            each = ", ".join(f"{r['seconds']:.2f}" for r in rows)
            lines.append(
                f"| {label} | {len(rows)} | {_median([r['seconds'] for r in rows]):.2f} | {each} |"
            )
    lines.append(f"\nratio (b)/(a) of the medians: {b / a:.3f}")
    for method in methods[3:]:
        if by[method]:
            what_if = _median([r["seconds"] for r in by[method]])
            lines.append(f"ratio {method}/(a) of the medians: {what_if / a:.3f}")
    ratios = [r["seconds"] / c["seconds"] for r, c in zip(by["run"], by["collect"], strict=False)]
    if ratios:
        each = ", ".join(f"{x:.2f}" for x in ratios)
        lines.append(f"ratio per repeat: {each} (median {_median(ratios):.3f})")
    if by["run"]:
        lines += _steps_table(by, methods, b)
    return "\n".join(lines)


def _steps_table(
    by: dict[str, list[dict[str, Any]]], methods: Sequence[str], b: float
) -> list[str]:
    """Median seconds per step of (b) (and of each what-if run), and per store method."""
    runs = [m for m in methods if m.startswith("run") and by[m]]
    keys: list[str] = []
    for method in runs:
        for r in by[method]:
            keys += [k for k in r["steps"] if k not in keys]
    head = " | ".join(f"{m} median s" for m in runs)
    lines = [
        "",
        f"| step | calls | {head} | share of (b) |",
        "|---|---:|" + "---:|" * len(runs) + "---:|",
    ]

    def median_of(method: str, value: Callable[[dict[str, Any]], float]) -> float:
        return _median([value(r) for r in by[method]])

    for key in keys:
        meds = [median_of(m, lambda r, k=key: r["steps"].get(k, 0.0)) for m in runs]
        calls = by["run"][0]["calls"].get(key, 0)
        cells = " | ".join(f"{x:.3f}" for x in meds)
        lines.append(f"| {key} | {calls} | {cells} | {meds[0] / b:.1%} |")
    others = [
        median_of(m, lambda r: r["seconds"] - sum(v for k, v in r["steps"].items() if ">" not in k))
        for m in runs
    ]
    cells = " | ".join(f"{x:.3f}" for x in others)
    lines.append(f"| other (Source, latest_run, sessions) | | {cells} | {others[0] / b:.1%} |")
    lines += ["", "| step / MetricStore method of (b) | calls | median s |", "|---|---:|---:|"]
    names: list[str] = []
    for r in by["run"]:
        names += [k for k in r["store"] if k not in names]
    for key in names:
        calls = by["run"][0]["store"].get(key, [0, 0.0])[0]
        med = _median([r["store"].get(key, [0, 0.0])[1] for r in by["run"]])
        lines.append(f"| {key} | {calls} | {med:.3f} |")
    return lines


# ---------------------------------------------------------------------------- main
@contextlib.contextmanager
def _database(args: argparse.Namespace) -> Iterator[str]:
    url = bc.pg_url(args.pg_server, args.rows)
    if not (args.keep and bc.pg_loaded(args.pg_server, args.rows)):
        start = time.perf_counter()
        bc.load_postgresql(args.pg_server, args.rows, args.chunk_rows, args.seed)
        print(f"# loaded {args.rows} loans in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    try:
        yield url
    finally:
        if not args.keep:
            import psycopg

            with psycopg.connect(bc.pg_admin_url(args.pg_server), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {bc.bench_db(args.rows)} WITH (FORCE)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-cli", action="store_true", help="leave out (c)")
    parser.add_argument("--profile", action="store_true", help="one more (b) under pyinstrument")
    parser.add_argument(
        "--what-if",
        nargs="*",
        default=[],
        choices=["preloaded", "warm_thread"],
        help="also time (b) with SciPy's statistics and the report templates loaded before "
        "the clock starts (preloaded), or by a thread started with the run (warm_thread)",
    )
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--pg-server", default=bc.DEFAULT_PG_SERVER)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("bench_run.jsonl"))
    parser.add_argument(
        "--keep", action="store_true", help="keep the database (and reuse it when loaded)"
    )
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="riskmon_bench_run_"))
    workdir.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []

    def record(r: dict[str, Any]) -> None:
        records.append(r)
        with args.out.open("a") as out:
            out.write(json.dumps(r, default=str) + "\n")
        brief = {k: v for k, v in r.items() if k not in ("steps", "calls", "store")}
        print(json.dumps(brief, default=str), file=sys.stderr, flush=True)

    print(
        f"# {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cpus, "
        f"load average {os.getloadavg()}",
        file=sys.stderr,
    )
    with _database(args) as url:
        config_file = write_config(workdir, url)
        template = workdir / "template.db"
        seconds = freeze_template(config_file, template, workdir)
        print(f"# baseline frozen in {seconds:.1f} s (not timed below)", file=sys.stderr)

        def fresh(tag: str) -> dict[str, str]:
            store_file, reports = workdir / f"store_{tag}.db", workdir / f"reports_{tag}"
            copy_store(template, store_file)
            shutil.rmtree(reports, ignore_errors=True)
            return _env(store_file, reports)

        # untimed: warm PostgreSQL's buffers and the page cache
        run_child(["collect", str(config_file)], fresh("warm"))
        for i in range(args.repeats):
            order = ["collect", "run"] if i % 2 == 0 else ["run", "collect"]
            if not args.skip_cli:
                order.append("cli")
            order += [f"run/{w}" for w in args.what_if]
            for method in order:
                env = fresh(f"{method.replace('/', '_')}_{i}")
                if method == "cli":
                    result = run_cli(config_file, env)
                elif method.startswith("run/"):
                    what_if = method.split("/", 1)[1]
                    result = run_child(["run", str(config_file), "", what_if], env)
                else:
                    result = run_child([method, str(config_file)], env)
                record({"method": method, "repeat": i, "rows": args.rows, **result})
        if args.profile:
            profile = workdir / "run_profile.txt"
            result = run_child(["run", str(config_file), str(profile)], fresh("profile"))
            record({"method": "run_profiled", "rows": args.rows, **result})
            print(f"# pyinstrument profile of one run: {profile}", file=sys.stderr)
    print(f"# load average at the end {os.getloadavg()}", file=sys.stderr)
    print(summarize(records))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        import logging

        logging.basicConfig(level=logging.WARNING)
        kind, *rest = sys.argv[2:]
        children: dict[str, Callable[..., dict[str, Any]]] = {
            "collect": child_collect,
            "run": child_run,
        }
        print(json.dumps(children[kind](*rest), default=str))
    else:
        main()
