"""Benchmark: a whole ``riskmon run`` reading its windows whole, against the same figures
computed by hand with pandas, and against one GROUP BY over the same loans.

The loans are those of ``bench_collect.py`` (its generator and loaders, imported from it):
``--rows`` synthetic scored loans (default 1M), half scored in January 2025 (the performance
cohort, labeled but for 4 % unmatured), half in March 2025 (the current population,
unlabeled), with a PD score, the 0/1 label, a weight (``exposure``), a segment (``channel``, 3
values), 12 numeric and 8 categorical characteristics. They are loaded into a throw-away
PostgreSQL database ``riskmon_bench_whole_<rows>`` (by ``COPY``), a DuckDB file in the work
folder and Parquet files there that a Spark Thrift server (``local[2]``, started from PyPI's
pyspark by ``tests/spark_server.py``, ``--spark-driver-memory``, stopped by its PID at the end)
reads as table ``loans`` through ``hive://``; all dropped at the end unless ``--keep``. With
``--key``, PostgreSQL's table has a primary key on (``loan_id``, ``score_date``) (untimed), as
a table of loans scored day by day usually has; without it, none.

The model is ``bench_run.py``'s (every characteristic, baseline the first 7 days of January,
a 1-month stability window, a 2-month performance window, run as of 2025-03-31: current =
March, cohort = January) with ``source: {incremental: false}``: the run keeps no daily cells
and reads both windows whole. Its baseline is frozen once per engine, untimed, into a template
SQLite store (``bench_run.freeze_template``).

Measured per engine (``--engines``), interleaved (the order of (a) and (b) alternates between
repeats), each of (a) and (b) in a fresh subprocess that has done its imports before the clock:

- (a) ``riskmon``: :func:`riskmon.run.run_models` (claim, baseline read, collect, compute,
  evaluate, store write, report, notify, index) on a fresh copy of the template store and an
  empty reports folder, the process having imported ``riskmon.run``. Also, in that process:

  - ``statements``: the statements SQLAlchemy sent to the loans database (SQLAlchemy's
    ``before_cursor_execute`` events on an engine of the loans' dialect, session settings and
    the transaction's guards included; the SQLite metric store's are not counted; the JSON
    lines also hold ``ledger_statements``, those the run's provenance records);
  - ``db s``: the time spent in the database driver for them: for each statement, the wall
    time between SQLAlchemy's ``before_cursor_execute`` and ``after_cursor_execute`` events
    (the DBAPI ``cursor.execute``: on PostgreSQL the server's execution and the transfer of its
    whole result, but for a server-side cursor's rows, read in its fetches; on DuckDB the
    query's execution), plus the wall time spent in the result's
    fetch calls (``fetchone``/``fetchmany``/``fetchall`` of its cursor strategy, timed by
    wrapping it as ``riskmon.collect.ledger`` does: the rows turned into Python rows). Not
    counted: connecting, compiling the statements and what riskmon does with the rows. Each
    statement's seconds and rows are in the JSON lines (``per_statement``), the slowest five of
    the first run printed on stderr;
  - ``collect s``: the run's collect step (``riskmon.run.collect``), for reference;
  - peak RSS (``VmHWM``) of the process.

- (b) ``pandas``: what a user would write without riskmon, in a process that has imported
  pandas, numpy, SciPy, scikit-learn and SQLAlchemy: ``pandas.read_sql`` of the columns needed
  (the id and score date too, for the repeats) over the current window, the performance cohort
  and the baseline window (the run's own windows, from :func:`riskmon.plan.plan_run`), then the
  run's families. First :func:`compute_by_hand`: on the baseline's bins (score and numeric
  characteristics: deciles of the baseline, right-closed, missing values apart; categorical:
  the baseline's levels, missing and unseen apart), weighted by ``exposure`` as riskmon's
  count tables are, with riskmon's breakdown (the score's families for the whole portfolio
  and each ``channel``, the characteristics' for the whole portfolio): PSI of the score and
  CSI of every characteristic (current against baseline), WOE/IV of every characteristic
  (cohort), KS (``scipy.stats.ks_2samp`` of the score of bads against goods, unweighted, with
  its p-value), AUC and Gini (``sklearn.metrics.roc_auc_score``), a calibration (mean PD
  against default rate per score decile, ``scipy.stats.binomtest`` per decile) and a
  gains/lift table by decile of the cohort's score; its time with the read is
  ``subset_seconds`` (what this benchmark measured as (b) until 2026-12-06). Then
  ``whole_by_hand.compute_rest``, at loan level: the feed's shares (left out, unmatured,
  missing, unseen), the cohort's rates, Brier score, Jeffreys, binomial, Spiegelhalter and
  Hosmer-Lemeshow tests (per score decile too), the ECB's AUC test, the expected performance
  of both populations and the realised AUC against it, the rating figures and the gains
  table's lift figures (its docstring). No report or store. Wall time (read and compute
  apart) and peak RSS. A few figures of (a) and (b) are printed side by side on stderr: they
  agree where their definitions do (the run computes some on count tables: its expected AUC
  on the PD-ranked bins, its AUC test against the baseline's frozen AUC).

- (c) on PostgreSQL only, in this process on an open connection: ``SELECT score_bin, bad,
  count(*), sum(exposure) ... WHERE score_date BETWEEN <current> OR score_date BETWEEN
  <cohort> GROUP BY score_bin, bad``, the score binned on the baseline's deciles by
  ``width_bucket``, its rows fetched, in a transaction with riskmon's PostgreSQL settings
  (``POSTGRESQL_SETTINGS``, as the run's statements have them); ``--group-by-runs`` times per
  repeat, and ``EXPLAIN (ANALYZE)``'s execution time of it once per repeat: the one GROUP BY
  over the same rows that the run's database time is compared with.

Ratios: (b)/(a) of the medians, and, on PostgreSQL, the run's DB seconds / (c). A first,
untimed (a) per engine warms PostgreSQL's buffers and the page cache. Results: JSON lines to
``--out``, a Markdown table on stdout.

Run (PostgreSQL on 127.0.0.1, its database created and dropped by the script; Spark needs
Java and ``pip install pyspark 'riskmon[spark]'``):

    .venv/bin/python benchmarks/bench_whole.py --rows 1000000 --repeats 5
    .venv/bin/python benchmarks/bench_whole.py --rows 1000000 --repeats 3 --engines spark duckdb
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_collect as bc  # the loans and their loaders
import bench_run as br  # the model, the template store and its copies
import whole_by_hand  # the rest of the run's families, by hand

#: the throw-away PostgreSQL database (bench_run's _database creates and drops it)
bc.BENCH_DB = "riskmon_bench_whole"

MODEL = br.MODEL
AS_OF = br.AS_OF
ENGINES = ("postgresql", "duckdb", "spark")
SOURCE_LINE = "      statement_timeout_seconds: 7200\n"
#: what (b) reads: the id and score date for the repeats, the rest for the figures
COLUMNS = ["loan_id", "score_date", "pd_score", "bad", "exposure", "channel"]
COLUMNS += [*bc.NUMERIC, *bc.CATEGORICAL]
#: the score deciles of the baseline: the bins of PSI, calibration and (c)
DECILES = [i / 10 for i in range(1, 10)]


def write_config(workdir: Path, loans_url: str) -> Path:
    """bench_run's model, its windows read whole (``source.incremental: false``)."""
    path = br.write_config(workdir, loans_url)
    text = path.read_text()
    assert SOURCE_LINE in text, "bench_run's configuration changed"
    path.write_text(text.replace(SOURCE_LINE, SOURCE_LINE + "      incremental: false\n"))
    return path


def _windows(config_file: Path) -> dict[str, list[str]]:
    """The run's windows (first and last day), as riskmon plans them."""
    from riskmon.config import load_config
    from riskmon.plan import plan_run

    plan = plan_run(load_config(config_file).model(MODEL), AS_OF)
    return {
        name: [str(window.start), str(window.end)]
        for name, window in (
            ("current", plan.current),
            ("performance", plan.performance),
            ("baseline", plan.baseline),
        )
    }


# ---------------------------------------------------------------------------- (a) riskmon
class DbClock:
    """Statements sent to, and seconds spent in the driver of, the engines of one dialect:
    per statement, the start of its SQL text, its execute and fetch seconds and its rows."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.entries: list[dict[str, Any]] = []
        self._started: dict[int, float] = {}

    def install(self) -> None:
        from sqlalchemy import Engine, event

        event.listen(Engine, "before_cursor_execute", self._before)
        event.listen(Engine, "after_cursor_execute", self._after)
        event.listen(Engine, "after_execute", self._result)

    def _ours(self, conn: Any) -> bool:
        return bool(conn.engine.url.get_backend_name() == self.backend)

    def _before(self, conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if self._ours(conn):
            sql = " ".join(statement.split())[:80]
            self.entries.append({"sql": sql, "execute": 0.0, "fetch": 0.0, "rows": 0})
            self._started[id(cursor)] = time.perf_counter()

    def _after(self, conn: Any, cursor: Any, *_: Any) -> None:
        started = self._started.pop(id(cursor), None)
        if started is not None:
            self.entries[-1]["execute"] += time.perf_counter() - started

    def _result(self, conn: Any, *args: Any) -> None:
        from sqlalchemy.engine import CursorResult

        result = args[-1]
        if self._ours(conn) and isinstance(result, CursorResult) and result.returns_rows:
            entry = self.entries[-1]  # after_execute follows its statement's cursor events
            result.cursor_strategy = _TimedFetch(result.cursor_strategy, entry)  # type: ignore[assignment]

    def totals(self) -> dict[str, Any]:
        execute = sum(e["execute"] for e in self.entries)
        fetch = sum(e["fetch"] for e in self.entries)
        return {
            "statements": len(self.entries),
            "db_seconds": execute + fetch,
            "db_execute_seconds": execute,
            "db_fetch_seconds": fetch,
            "rows_fetched": sum(e["rows"] for e in self.entries),
            "per_statement": self.entries,
        }


class _TimedFetch:
    """A result's fetch strategy that times its fetches (as ``riskmon.collect.ledger``'s
    counting strategy wraps it) into its statement's entry."""

    def __init__(self, inner: Any, entry: dict[str, Any]) -> None:
        self.inner = inner
        self.entry = entry

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def yield_per(self, result: Any, cursor: Any, num: int) -> None:
        result.cursor_strategy = self.inner
        self.inner.yield_per(result, cursor, num)
        self.inner = result.cursor_strategy
        result.cursor_strategy = self

    def _timed(self, fetch: Callable[[], Any], count: Callable[[Any], int]) -> Any:
        start = time.perf_counter()
        try:
            rows = fetch()
        finally:
            self.entry["fetch"] += time.perf_counter() - start
        self.entry["rows"] += count(rows)
        return rows

    def fetchone(self, result: Any, cursor: Any, hard_close: bool = False) -> Any:
        return self._timed(
            lambda: self.inner.fetchone(result, cursor, hard_close), lambda r: r is not None
        )

    def fetchmany(self, result: Any, cursor: Any, size: int | None = None) -> Any:
        return self._timed(lambda: self.inner.fetchmany(result, cursor, size), len)

    def fetchall(self, result: Any, cursor: Any) -> Any:
        return self._timed(lambda: self.inner.fetchall(result, cursor), len)


def child_riskmon(config_file: str, store_file: str, reports_dir: str) -> dict[str, Any]:
    """(a): a whole run through ``run_models``, its statements and database time counted."""
    os.environ.update(br._env(Path(store_file), Path(reports_dir)))
    import riskmon.run

    config, model, store = br._open(config_file)
    clock = DbClock(model.source.url.split(":", 1)[0].split("+", 1)[0])
    clock.install()
    # the collect step timed, and the daily cells' plan kept (None: windows read whole)
    steps = br.Steps()
    collect = riskmon.run.collect  # type: ignore[attr-defined]
    riskmon.run.collect = steps.step("collect", collect)  # type: ignore[attr-defined]
    day_plans: list[Any] = []
    day_plan = riskmon.run.day_plan  # type: ignore[attr-defined]

    def recorded_day_plan(*args: Any, **kwargs: Any) -> Any:
        day_plans.append(day_plan(*args, **kwargs))
        return day_plans[-1]

    riskmon.run.day_plan = recorded_day_plan  # type: ignore[attr-defined]
    start = time.perf_counter()
    (outcome,) = riskmon.run.run_models(config, [MODEL], AS_OF, store=store)
    seconds = time.perf_counter() - start
    assert outcome.ok, outcome.error
    assert outcome.report_path, "the report was not written"
    assert day_plans == [None], "the run read daily cells: source.incremental is not false"
    provenance = store.run(MODEL, AS_OF).provenance
    return {
        "seconds": seconds,
        **clock.totals(),
        "ledger_statements": len(provenance["statements"]),
        "collect_seconds": steps.steps.get("collect", float("nan")),
        "peak_rss_mb": bc._peak_rss_mb(),
        "n_current": outcome.counts.n_current if outcome.counts else None,
        "figures": len(outcome.figures),
        "check": _riskmon_check(outcome.figures),
    }


def _riskmon_check(figures: Sequence[Any]) -> dict[str, float | None]:
    """A few of the run's figures, whole portfolio, named as (b) names them, to set beside
    (b)'s."""
    plain = {"psi", "auc", "ks", "brier", "jeffreys_p", "jeffreys_p_exposure", "binomial_p"}
    plain |= {"spiegelhalter_p", "hosmer_lemeshow_p", "rating_herfindahl", "rating_shift_p"}
    plain |= {"top_decile_lift", "unmatured_share", "mean_pd"}
    by_population = {"expected_auc", "expected_ks", "expected_defaults", "excluded_share"}
    by_variable = {"iv", "csi", "missing_rate"}
    out: dict[str, float | None] = {}
    for f in figures:
        if f.segment or f.population == "baseline":
            continue
        if f.name in plain:
            out[f.name] = f.value
        elif f.name in by_population:
            out[f"{f.name}/{f.population}"] = f.value
        elif f.name in by_variable and f.variable == "num_01":
            out[f"{f.name}/num_01"] = f.value
    return out


# ---------------------------------------------------------------------------- (b) pandas
def child_pandas(url: str, windows_json: str, chunk_rows: str = "0") -> dict[str, Any]:
    """(b): the windows read by ``pandas.read_sql``, the figures computed in memory."""
    # imported before the clock, as the figures need them
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import scipy.stats  # noqa: F401
    import sklearn.metrics  # noqa: F401
    from sqlalchemy import create_engine, text

    windows = json.loads(windows_json)
    duckdb = url.startswith("duckdb")
    start = time.perf_counter()
    engine = create_engine(url, connect_args={"read_only": True} if duckdb else {})
    query = text(
        f"SELECT {', '.join(COLUMNS)} FROM {bc.TABLE} WHERE score_date BETWEEN :first AND :last"
    )
    frames = {}
    for name, (first, last) in windows.items():
        params = {"first": dt.date.fromisoformat(first), "last": dt.date.fromisoformat(last)}
        # a TextClause, which binds its parameters on every dialect
        frames[name] = bc._read_sql(query, engine, params, int(chunk_rows))  # type: ignore[arg-type]
    engine.dispose()
    read_seconds = time.perf_counter() - start
    figures = compute_by_hand(frames["baseline"], frames["current"], frames["performance"])
    subset_seconds = time.perf_counter() - start - read_seconds
    figures |= whole_by_hand.compute_rest(
        frames["baseline"],
        frames["current"],
        frames["performance"],
        grades=_numeric_bins(frames["baseline"]["pd_score"].to_numpy(dtype=float)),
        segments=sorted(bc.CHANNELS),
        categorical=bc.CATEGORICAL,
        characteristics=[*bc.NUMERIC, *bc.CATEGORICAL],
        windows=windows,
        gains={k: v for k, v in figures.items() if k.startswith("gains")},
    )
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "read_seconds": read_seconds,
        "compute_seconds": seconds - read_seconds,
        # compute_by_hand's figures alone (the subset this benchmark measured until 2026-12-06)
        "subset_seconds": read_seconds + subset_seconds,
        "rows_read": {k: len(v) for k, v in frames.items()},
        "peak_rss_mb": bc._peak_rss_mb(),
        "figures": sum(len(v) if isinstance(v, list) else 1 for v in figures.values()),
        "check": {
            k: v
            for k, v in figures.items()
            if "@" not in k and ("/" not in k or k.endswith(("num_01", "current", "performance")))
        },
    }


def _numeric_bins(baseline: Any) -> Any:
    """A numeric variable's bins: the baseline's deciles, right-closed; NaN apart."""
    import numpy as np

    values = baseline[~np.isnan(baseline)]
    edges = np.unique(np.quantile(values, DECILES))

    def assign(x: Any) -> Any:
        index = np.searchsorted(edges, x, side="left")
        return np.where(np.isnan(x), edges.size + 1, index), edges.size + 2

    return assign


def _categorical_bins(baseline: Any) -> Any:
    """A categorical variable's bins: the baseline's levels; missing and unseen apart."""
    import pandas as pd

    levels = pd.Index(sorted(baseline.dropna().unique()))

    def assign(x: Any) -> Any:
        index = levels.get_indexer(x)
        index[index < 0] = levels.size + 1  # unseen
        index[x.isna().to_numpy()] = levels.size  # missing
        return index, levels.size + 2

    return assign


def _psi(expected: Any, actual: Any) -> float:
    import numpy as np

    e = np.maximum(expected / expected.sum(), 1e-6)
    a = np.maximum(actual / actual.sum(), 1e-6)
    return float(np.sum((a - e) * np.log(a / e)))


def _woe_iv(bads: Any, goods: Any) -> tuple[Any, float]:
    import numpy as np

    b = np.maximum(bads / bads.sum(), 1e-6)
    g = np.maximum(goods / goods.sum(), 1e-6)
    woe = np.log(g / b)
    return woe, float(np.sum((g - b) * woe))


def compute_by_hand(baseline: Any, current: Any, performance: Any) -> dict[str, Any]:
    """The figures of (b): the score's for the whole portfolio and each channel, the
    characteristics' for the whole portfolio."""
    import numpy as np
    import pandas as pd
    from scipy.stats import binomtest, ks_2samp
    from sklearn.metrics import roc_auc_score

    cohort = performance[performance["bad"].notna()]
    # the bins of every variable, fitted on the baseline, assigned to each population
    binned: dict[str, dict[str, tuple[Any, int]]] = {"base": {}, "cur": {}, "coh": {}}
    for name in ["pd_score", *bc.NUMERIC, *bc.CATEGORICAL]:
        if name in bc.CATEGORICAL:
            assign = _categorical_bins(baseline[name])
        else:
            assign = _numeric_bins(baseline[name].to_numpy(dtype=np.float64))
        for key, frame in (("base", baseline), ("cur", current), ("coh", cohort)):
            column = frame[name]
            binned[key][name] = assign(
                column if name in bc.CATEGORICAL else column.to_numpy(dtype=np.float64)
            )
    out: dict[str, Any] = {}
    segments: list[str | None] = [None, *sorted(bc.CHANNELS)]
    for segment in segments:
        suffix = "" if segment is None else f"@{segment}"
        masks = {
            key: (
                np.ones(len(frame), dtype=bool)
                if segment is None
                else (frame["channel"] == segment).to_numpy()
            )
            for key, frame in (("base", baseline), ("cur", current), ("coh", cohort))
        }
        weights = {
            key: frame["exposure"].to_numpy(dtype=np.float64)[masks[key]]
            for key, frame in (("base", baseline), ("cur", current), ("coh", cohort))
        }
        y = cohort["bad"].to_numpy(dtype=np.int64)[masks["coh"]]
        score = cohort["pd_score"].to_numpy(dtype=np.float64)[masks["coh"]]
        w = weights["coh"]
        # stability of the score; of every characteristic, and its WOE/IV, for the whole
        # portfolio (as riskmon's figures are), on the baseline's bins
        characteristics = [*bc.NUMERIC, *bc.CATEGORICAL] if segment is None else []
        for name in ["pd_score", *characteristics]:
            tables = {}
            for key in ("base", "cur"):
                index, size = binned[key][name]
                tables[key] = np.bincount(index[masks[key]], weights=weights[key], minlength=size)
            figure = "psi" if name == "pd_score" else f"csi/{name}"
            out[figure + suffix] = _psi(tables["base"], tables["cur"])
            if name != "pd_score":
                index, size = binned["coh"][name]
                index = index[masks["coh"]]
                bads = np.bincount(index, weights=w * y, minlength=size)
                goods = np.bincount(index, weights=w * (1 - y), minlength=size)
                woe, out[f"iv/{name}{suffix}"] = _woe_iv(bads, goods)
                out[f"woe/{name}{suffix}"] = woe.tolist()
        # discrimination
        ks = ks_2samp(score[y == 1], score[y == 0])
        out["ks" + suffix] = float(ks.statistic)
        out["ks_pvalue" + suffix] = float(ks.pvalue)
        auc = float(roc_auc_score(y, score, sample_weight=w))
        out["auc" + suffix], out["gini" + suffix] = auc, 2 * auc - 1
        # calibration per score decile of the baseline: mean PD, default rate, binomial test
        index, _ = binned["coh"]["pd_score"]
        frame = pd.DataFrame({"bin": index[masks["coh"]], "pd": score, "bad": y, "w": w})
        frame["w_pd"], frame["w_bad"] = frame["w"] * frame["pd"], frame["w"] * frame["bad"]
        sums = frame.groupby("bin").agg(
            n=("bad", "size"),
            defaults=("bad", "sum"),
            mean_pd=("pd", "mean"),
            w=("w", "sum"),
            w_pd=("w_pd", "sum"),
            w_bad=("w_bad", "sum"),
        )
        sums["weighted_pd"] = sums["w_pd"] / sums["w"]
        sums["default_rate"] = sums["w_bad"] / sums["w"]
        sums["p_value"] = [
            binomtest(int(k), int(n), p, alternative="greater").pvalue
            for k, n, p in zip(sums["defaults"], sums["n"], sums["mean_pd"], strict=True)
        ]
        out["calibration" + suffix] = sums.reset_index().to_dict("records")
        # gains and lift by decile of the cohort's score, riskiest first
        order = np.argsort(-score, kind="stable")
        decile = np.minimum((np.arange(score.size) * 10) // max(score.size, 1), 9)
        gains = pd.DataFrame({"decile": decile, "w": w[order], "w_bad": (w * y)[order]})
        gains = gains.groupby("decile").sum()
        gains["capture"] = gains["w_bad"].cumsum() / gains["w_bad"].sum()
        rate = gains["w_bad"] / gains["w"]
        gains["lift"] = rate / (gains["w_bad"].sum() / gains["w"].sum())
        out["gains" + suffix] = gains.reset_index().to_dict("records")
    return out


# ---------------------------------------------------------------------------- (c) one GROUP BY
def _score_edges(connection: Any, windows: dict[str, list[str]]) -> list[float]:
    """The baseline's score deciles (as (b) fits them), ascending and distinct."""
    from sqlalchemy import text

    first, last = windows["baseline"]
    row = connection.execute(
        text(
            "SELECT percentile_cont(CAST(:q AS double precision[])) WITHIN GROUP "
            f"(ORDER BY pd_score) FROM {bc.TABLE} WHERE score_date BETWEEN :first AND :last"
        ),
        {"q": DECILES, "first": first, "last": last},
    ).one()
    return sorted(set(row[0]))


def group_by_sql(edges: Sequence[float], windows: dict[str, list[str]]) -> str:
    """(c): one GROUP BY on the score's bin and the label over both windows' loans; the bins
    right-closed as (b)'s (``width_bucket`` on the negated score and edges)."""
    negated = ", ".join(repr(-e) for e in reversed(edges))
    (c0, c1), (p0, p1) = windows["current"], windows["performance"]
    return (
        f"SELECT {len(edges)} - width_bucket(-pd_score, ARRAY[{negated}]::float8[]) "
        "AS score_bin, bad, count(*), sum(exposure) "
        f"FROM {bc.TABLE} WHERE score_date BETWEEN '{c0}' AND '{c1}' "
        f"OR score_date BETWEEN '{p0}' AND '{p1}' GROUP BY score_bin, bad"
    )


def time_group_by(engine: Any, sql: str, runs: int) -> dict[str, Any]:
    """(c) ``runs`` times, rows fetched, and ``EXPLAIN (ANALYZE)``'s execution time once, each
    in a transaction with riskmon's PostgreSQL settings."""
    from sqlalchemy import text

    from riskmon.collect.engines import POSTGRESQL_SETTINGS

    def tuned(connection: Any) -> None:
        for name, value in POSTGRESQL_SETTINGS.items():
            connection.execute(text("SELECT set_config(:n, :v, true)"), {"n": name, "v": value})

    each = []
    n_rows = 0
    with engine.connect() as connection:
        for _ in range(runs):
            with connection.begin():
                tuned(connection)
                start = time.perf_counter()
                n_rows = len(connection.exec_driver_sql(sql).fetchall())
                each.append(time.perf_counter() - start)
        with connection.begin():
            tuned(connection)
            plan = connection.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}").scalar()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    return {
        "seconds": statistics.median(each),
        "each": each,
        "explain_seconds": plan[0]["Execution Time"] / 1000,
        "result_rows": n_rows,
    }


# ---------------------------------------------------------------------------- children
def run_child(args: list[str]) -> dict[str, Any]:
    """The JSON result of ``this script _child args`` in a fresh process (its stderr shown
    when it fails)."""
    try:
        return bc.run_child(args, script=__file__)
    except subprocess.CalledProcessError as exc:
        print(exc.stderr, file=sys.stderr)
        raise


# ---------------------------------------------------------------------------- the report
def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(records: list[dict[str, Any]]) -> str:
    lines = [
        "| engine | measurement | runs | median s | each run s | statements | DB s (execute"
        " + fetch) | collect s | peak RSS MB |",
        "|---|---|---:|---:|---|---:|---|---:|---:|",
    ]
    ratios: list[str] = []
    for engine in ENGINES:
        by = {m: [r for r in records if r["engine"] == engine and r["method"] == m] for m in "abc"}
        if not by["a"]:
            continue
        for method, label in [
            ("a", "(a) riskmon run, whole windows"),
            ("b", "(b) pandas read_sql + by hand"),
            ("c", "(c) one GROUP BY (EXPLAIN ANALYZE s)"),
        ]:
            rows = by[method]
            if not rows:
                continue
            each = ", ".join(f"{r['seconds']:.2f}" for r in rows)
            cells = ["", "", "", ""]
            if method == "a":
                db = _median([r["db_seconds"] for r in rows])
                execute = _median([r["db_execute_seconds"] for r in rows])
                fetch = _median([r["db_fetch_seconds"] for r in rows])
                cells = [
                    str(rows[0]["statements"]),
                    f"{db:.3f} ({execute:.3f} + {fetch:.3f})",
                    f"{_median([r['collect_seconds'] for r in rows]):.2f}",
                    f"{_median([r['peak_rss_mb'] for r in rows]):.0f}",
                ]
            elif method == "b":
                read = _median([r["read_seconds"] for r in rows])
                subset = _median([r["subset_seconds"] for r in rows])
                label += f" (read {read:.2f} s; read + the subset {subset:.2f} s)"
                cells[3] = f"{_median([r['peak_rss_mb'] for r in rows]):.0f}"
            else:
                each = ", ".join(f"{s:.3f}" for r in rows for s in r["each"])
                label = label.replace(
                    "EXPLAIN ANALYZE s",
                    f"EXPLAIN ANALYZE {_median([r['explain_seconds'] for r in rows]):.3f} s",
                )
            median = _median([r["seconds"] for r in rows])
            lines.append(
                f"| {engine} | {label} | {len(rows)} | {median:.3f} | {each} | "
                + " | ".join(cells)
                + " |"
            )
        a = _median([r["seconds"] for r in by["a"]])
        if by["b"]:
            b = _median([r["seconds"] for r in by["b"]])
            per = [rb["seconds"] / ra["seconds"] for ra, rb in zip(by["a"], by["b"], strict=False)]
            subset = _median([r["subset_seconds"] for r in by["b"]])
            ratios.append(
                f"- {engine}: (b)/(a) = {b:.2f} / {a:.2f} = **{b / a:.2f}×** (target ≥ 3; per "
                f"repeat {', '.join(f'{x:.2f}' for x in per)}); (b) with compute_by_hand's "
                f"subset of the families alone: {subset:.2f} / {a:.2f} = {subset / a:.2f}×"
            )
        if by["c"]:
            db = _median([r["db_seconds"] for r in by["a"]])
            c = _median([r["seconds"] for r in by["c"]])
            explain = _median([r["explain_seconds"] for r in by["c"]])
            ratios.append(
                f"- {engine}: run's DB s / (c) = {db:.3f} / {c:.3f} = **{db / c:.2f}×** "
                f"(target ≤ 2); against (c)'s EXPLAIN ANALYZE time {explain:.3f} s: "
                f"{db / explain:.2f}×"
            )
    return "\n".join([*lines, "", *ratios])


# ---------------------------------------------------------------------------- main
def prepare(engine: str, url: str, workdir: Path) -> dict[str, Any]:
    """The model's configuration on ``url``, its template store (baseline frozen, untimed)
    and the run's windows, in ``workdir/<engine>``."""
    folder = workdir / engine
    folder.mkdir(exist_ok=True)
    config_file = write_config(folder, url)
    template = folder / "template.db"
    seconds = br.freeze_template(config_file, template, folder)
    print(f"# {engine}: baseline frozen in {seconds:.1f} s (untimed)", file=sys.stderr)
    return {
        "url": url,
        "config": config_file,
        "template": template,
        "folder": folder,
        "windows": _windows(config_file),
    }


def _fresh(setup: dict[str, Any], tag: str) -> list[str]:
    """(a)'s child arguments: a fresh copy of the template store, an empty reports folder."""
    store, reports = setup["folder"] / f"store_{tag}.db", setup["folder"] / "reports"
    br.copy_store(setup["template"], store)
    shutil.rmtree(reports, ignore_errors=True)
    return ["riskmon", str(setup["config"]), str(store), str(reports)]


def measure(
    args: argparse.Namespace,
    setups: dict[str, dict[str, Any]],
    record: Callable[[dict[str, Any]], None],
) -> None:
    """(a), (b) and (c), interleaved: each engine in turn within a repeat, the order of (a)
    and (b) alternating between repeats."""
    from sqlalchemy import create_engine

    chunk = str(args.read_sql_max_rows if args.rows > args.read_sql_max_rows else 0)
    group_by: tuple[Any, str] | None = None
    if "postgresql" in setups:
        pg = setups["postgresql"]
        engine = create_engine(pg["url"])
        with engine.connect() as connection:
            edges = _score_edges(connection, pg["windows"])
        group_by = (engine, group_by_sql(edges, pg["windows"]))
        print(f"# (c): {group_by[1]}", file=sys.stderr)
    try:
        for setup in setups.values():  # untimed: warm the buffers and the page cache
            run_child(_fresh(setup, "warm"))
        for i in range(args.repeats):
            for name, setup in setups.items():
                order = ["a", "b"] if i % 2 == 0 else ["b", "a"]
                if group_by is not None and name == "postgresql":
                    order.append("c")
                for method in order:
                    if method == "a":
                        result = run_child(_fresh(setup, str(i)))
                    elif method == "b":
                        windows = json.dumps(setup["windows"])
                        result = run_child(["pandas", setup["url"], windows, chunk])
                    else:
                        assert group_by is not None
                        result = time_group_by(*group_by, args.group_by_runs)
                    base = {"engine": name, "method": method, "repeat": i, "rows": args.rows}
                    record({**base, **result})
    finally:
        if group_by is not None:
            group_by[0].dispose()


@contextlib.contextmanager
def _spark(args: argparse.Namespace, workdir: Path) -> Iterator[str]:
    """A Spark Thrift server (``local[2]``) with the loans as a table over Parquet files (the
    same generator and seed as the other engines'); its URL. Stopped by its PID at the end."""
    import bench_spark as bs

    from tests import spark_server

    why = spark_server.missing()
    if why:
        raise SystemExit(f"spark: {why}")
    parquet = workdir / f"parquet_{args.rows}"
    if not (args.keep and parquet.exists()):
        shutil.rmtree(parquet, ignore_errors=True)
        bs.write_parquet(parquet, args.rows, args.chunk_rows, args.seed)
    server = spark_server.start(workdir / "spark", driver_memory=args.spark_driver_memory)
    try:
        bs.create_table(server, parquet)
        yield server.url
    finally:
        spark_server.stop(server.pid)
        if not args.keep:
            shutil.rmtree(parquet, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument(
        "--group-by-runs", type=int, default=3, help="(c)'s timings per repeat (median taken)"
    )
    parser.add_argument(
        "--read-sql-max-rows",
        type=int,
        default=2_000_000,
        help="above this many loans (b) reads chunks of this many rows and concatenates them",
    )
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--spark-driver-memory", default="4g", help="the Thrift server's")
    parser.add_argument("--pg-server", default=bc.DEFAULT_PG_SERVER)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("bench_whole.jsonl"))
    parser.add_argument(
        "--keep", action="store_true", help="keep the loans (and reuse them when loaded)"
    )
    parser.add_argument(
        "--key",
        action="store_true",
        help="PostgreSQL's table gets a primary key on (loan_id, score_date); without it, a "
        "kept table's key is dropped",
    )
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="riskmon_bench_whole_"))
    workdir.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []

    def record(r: dict[str, Any]) -> None:
        records.append(r)
        with args.out.open("a") as out:
            out.write(json.dumps(r, default=str) + "\n")
        brief = {k: v for k, v in r.items() if k not in ("check", "per_statement")}
        print(json.dumps(brief, default=str), file=sys.stderr, flush=True)

    print(
        f"# {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cpus, "
        f"load average {os.getloadavg()}",
        file=sys.stderr,
    )
    duckdb_file = workdir / f"loans_{args.rows}.duckdb"
    try:
        with contextlib.ExitStack() as stack:
            postgresql = "postgresql" in args.engines
            pg = stack.enter_context(br._database(args)) if postgresql else ""
            if postgresql:
                _key(args.pg_server, args.rows, keyed=args.key)
            setups = {}
            for engine in args.engines:
                if engine == "duckdb" and not (args.keep and duckdb_file.exists()):
                    start = time.perf_counter()
                    bc.load_duckdb(duckdb_file, args.rows, args.chunk_rows, args.seed)
                    seconds = time.perf_counter() - start
                    print(f"# DuckDB: loaded {args.rows} loans in {seconds:.1f} s", file=sys.stderr)
                if engine == "spark":
                    url = stack.enter_context(_spark(args, workdir))
                else:
                    url = pg if engine == "postgresql" else f"duckdb:///{duckdb_file}"
                setups[engine] = prepare(engine, url, workdir)
            measure(args, setups, record)
    finally:
        if not args.keep:
            duckdb_file.unlink(missing_ok=True)
            if args.workdir is None:
                shutil.rmtree(workdir, ignore_errors=True)
    print(f"# load average at the end {os.getloadavg()}", file=sys.stderr)
    _print_checks(records)
    print(summarize(records))


def _key(server: str, rows: int, *, keyed: bool) -> None:
    """PostgreSQL's loans keyed by (loan_id, score_date), or not: untimed set-up."""
    import psycopg

    with psycopg.connect(bc.pg_admin_url(bc.pg_url(server, rows)), autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {bc.TABLE} DROP CONSTRAINT IF EXISTS loans_key")
        if keyed:
            conn.execute(
                f"ALTER TABLE {bc.TABLE} ADD CONSTRAINT loans_key PRIMARY KEY (loan_id, score_date)"
            )
            conn.execute(f"VACUUM (ANALYZE) {bc.TABLE}")


def _print_checks(records: list[dict[str, Any]]) -> None:
    """(a)'s and (b)'s figures side by side (whole portfolio), on stderr: the same families."""
    for engine in ENGINES:
        a = next((r for r in records if r["engine"] == engine and r["method"] == "a"), None)
        b = next((r for r in records if r["engine"] == engine and r["method"] == "b"), None)
        if a and b:
            print(f"# {engine} riskmon: {json.dumps(a['check'])}", file=sys.stderr)
            hand = {k: v for k, v in b["check"].items() if not isinstance(v, list)}
            print(f"# {engine} by hand: {json.dumps(hand)}", file=sys.stderr)
        if a:
            slowest = sorted(a["per_statement"], key=lambda e: -(e["execute"] + e["fetch"]))
            for e in slowest[:5]:
                print(
                    f"# {engine} run, slowest statements: {e['execute']:.3f} + {e['fetch']:.3f}"
                    f" s, {e['rows']} rows: {e['sql']}",
                    file=sys.stderr,
                )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        import logging

        logging.basicConfig(level=logging.WARNING)
        kind, *rest = sys.argv[2:]
        children: dict[str, Callable[..., dict[str, Any]]] = {
            "riskmon": child_riskmon,
            "pandas": child_pandas,
        }
        print(json.dumps(children[kind](*rest), default=str))
    else:
        main()
