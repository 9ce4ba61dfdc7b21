"""riskmon on a real Apache Spark: a Thrift server in ``local[2]`` mode on 127.0.0.1, reached
through PyHive's ``hive://`` dialect (see ``tests/spark_server.py``; the tests run with
RISKMON_TEST_SPARK=local, which .ci/run sets).

- The collect property: on random loan tables, every collect shape returns the count tables
  computed in memory from the loans.
- ``riskmon run`` end to end on Spark stores the figures the same run stores on SQLite, writes
  its report, and says that the reading was not snapshot-isolated.
- A score day's fingerprint (Spark's row hash) changes with its rows, and only its own.
- The vintage × MOB ``GROUP BY`` counts on Spark the curves pandas counts on the loans.
- A statement past ``statement_timeout_seconds`` is cancelled by Spark and reported as such; a
  missing table is named without Spark's stack trace.
- A server frozen mid-statement (its JVM stopped with SIGSTOP, then continued) fails the
  reading at riskmon's own deadline, ``read_deadline_seconds``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from riskmon.cli import cli
from riskmon.cli.runs import EXIT_ALERT, EXIT_OK
from riskmon.collect import Source, VintageRequest, collect
from riskmon.collect.deadline import CANCEL_SECONDS
from riskmon.collect.request import PdSource
from riskmon.collect.warehouses import NOT_SNAPSHOT
from riskmon.errors import DegenerateDataWarning, SourceError, SourceUnavailableError

from .collect.loans import load, loan_frame, model_config
from .collect.test_collect import expected_tables, fitted_on, request
from .collect.test_fingerprint import day_prints, one_change_each
from .collect.test_properties import RANDOM_LOAN_TABLES
from .collect.test_vintages import EVENTS, MAX_MOB, WINDOW, _expected, _with_events
from .report.htmltree import parse
from .spark_server import SparkServer
from .spark_server import load as load_spark

pytestmark = pytest.mark.spark

SHAPES = ["packed", "grouping_sets", "union_all", "per_variable", "stream"]


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@RANDOM_LOAN_TABLES
def test_every_shape_on_spark_counts_what_memory_counts(
    spark: SparkServer, seed: int, n: int, weighted: bool, segmented: bool, n_bins: int
) -> None:
    frame = loan_frame(seed=seed, n=n, weighted=weighted)
    load_spark(spark, frame)
    req = request(weighted=weighted, segments=("channel",) if segmented else ())
    req = fitted_on(frame, req, n_bins)
    expected = expected_tables(frame, req)
    with Source(model_config(spark.url, weighted=weighted)) as source:
        assert source.profile.name == "spark"
        for shape in SHAPES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDataWarning)
                collected = collect(source, req, strategy=shape)  # type: ignore[arg-type]
            assert set(collected.tables) == set(expected), shape
            for key, table in expected.items():
                assert collected.tables[key].equals(table, rtol=1e-12), (shape, key)


def test_a_day_s_fingerprint_on_spark_changes_with_its_rows(spark: SparkServer) -> None:
    """Spark's row hash (xxHash64 of the typed values and their NULL flags): the same rows
    written again keep every day's fingerprint; a changed value changes its day's only."""
    frame = loan_frame(seed=17, n=600)
    days = sorted(set(frame["score_date"]))
    load_spark(spark, frame)
    before = day_prints(spark.url, days)
    assert sum(int(p.split(":")[0]) for p in before.values()) == len(frame)
    load_spark(spark, frame.iloc[::-1])
    assert day_prints(spark.url, days) == before
    for what, day, book in one_change_each(frame):
        if what not in ("a score's last bit", "a NULL filled", "two labels exchanged"):
            continue
        load_spark(spark, book)
        after = day_prints(spark.url, days)
        assert after[day] != before[day], what
        assert {d: p for d, p in after.items() if d != day} == {
            d: p for d, p in before.items() if d != day
        }, what


@pytest.mark.parametrize("weighted", [False, True])
def test_the_vintage_group_by_on_spark_counts_what_pandas_counts(
    spark: SparkServer, weighted: bool
) -> None:
    frame = _with_events(loan_frame(seed=11, n=600, weighted=weighted), seed=11)
    load_spark(spark, frame)
    known_by = WINDOW.start + dt.timedelta(days=120)
    req = dataclasses.replace(request(weighted=weighted), pd=PdSource("pd_score"))
    expected = _expected(frame, known_by, weighted)
    with Source(model_config(spark.url, weighted=weighted)) as source:
        collected = collect(
            source, req, vintages=VintageRequest(req, WINDOW, known_by, EVENTS, MAX_MOB)
        )
    assert set(collected.vintages) == set(expected)
    for key, table in expected.items():
        assert collected.vintages[key].equals(table, rtol=1e-9), key


def _config(folder: Path, url: str) -> Path:
    model = model_config(url, performance_window="2 months").model_dump(mode="json", by_alias=True)
    path = folder / "riskmon.yaml"
    store = {"url": f"sqlite:///{folder / 'store.db'}", "reports_dir": str(folder / "reports")}
    path.write_text(yaml.safe_dump({"store": store, "models": [model]}))
    assert CliRunner().invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    return path


def _run(path: Path) -> tuple[int, dict[str, Any]]:
    args = ["-c", str(path), "run", "--as-of", "2025-03-31", "--format", "json"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    (summary,) = json.loads(result.stdout)
    return result.exit_code, summary


def test_riskmon_run_on_spark_stores_what_it_stores_on_sqlite(
    spark: SparkServer, tmp_path: Path
) -> None:
    frame = loan_frame(seed=3, n=12000)
    load_spark(spark, frame)
    sqlite_url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(sqlite_url, frame)
    (tmp_path / "spark").mkdir()
    (tmp_path / "sqlite").mkdir()
    code, on_spark = _run(_config(tmp_path / "spark", spark.url))
    assert code in {EXIT_OK, EXIT_ALERT}, on_spark
    assert on_spark["status"] == "succeeded", on_spark
    _, on_sqlite = _run(_config(tmp_path / "sqlite", sqlite_url))
    assert on_spark["counts"] == on_sqlite["counts"]
    assert on_spark["alert_status"] == on_sqlite["alert_status"]
    for population, figures in on_sqlite["figures"].items():
        assert on_spark["figures"][population].keys() == figures.keys()
        for name, value in figures.items():
            assert on_spark["figures"][population][name] == pytest.approx(
                value, rel=1e-9, nan_ok=True
            ), (population, name)
    assert [(a["rule"], a["status"]) for a in on_spark["alerts"]] == [
        (a["rule"], a["status"]) for a in on_sqlite["alerts"]
    ]
    report = parse(Path(on_spark["report"]).read_text(encoding="utf-8"))
    read = report.get("tr", data_fact="snapshot").get("td").text()
    assert read == f"Spark SQL, no transactions: {NOT_SNAPSHOT}"


def test_a_statement_past_the_time_limit_is_cancelled_and_said_so(spark: SparkServer) -> None:
    load_spark(spark, loan_frame(seed=1, n=100))
    model = model_config(spark.url)
    model = model.model_copy(
        update={
            "source": model.source.model_copy(
                # riskmon's own deadline far away: Spark's cancel, not riskmon's, ends the
                # statement even when a loaded machine starves the JVM for a minute. The limit
                # is 10 s, not 1 s: Spark cancels the statement's jobs, and a limit that passes
                # while a starved JVM still plans the query cancels nothing (riskmon's own
                # deadline is what ends such a statement)
                update={"statement_timeout_seconds": 10.0, "read_deadline_seconds": 240.0}
            )
        }
    )
    # a cross join of 10^11 rows takes many minutes on two cores; Spark cancels it after 10 s
    slow = (
        "SELECT count(*) FROM range(1000000) a CROSS JOIN range(100000) b "
        "WHERE pmod(a.id * 7 + b.id, 11) = 3"
    )
    with (
        Source(model) as source,
        pytest.raises(SourceError) as caught,
        source.reading() as connection,
    ):
        connection.exec_driver_sql(slow).all()
    assert "ran longer than statement_timeout_seconds=10 and was cancelled" in str(caught.value)


def test_a_missing_table_is_named_without_the_stack_trace(spark: SparkServer) -> None:
    model = model_config(spark.url, table="no_such_loans")
    with (
        Source(model) as source,
        pytest.raises(SourceError) as caught,
        source.reading() as connection,
    ):
        connection.exec_driver_sql("SELECT count(*) FROM no_such_loans").all()
    message = str(caught.value)
    assert "[TABLE_OR_VIEW_NOT_FOUND]" in message
    assert "no_such_loans" in message
    assert "HiveSQLException" not in message
    assert len(message) < 400, message


def test_a_pin_on_a_table_without_delta_history_fails_the_run_and_says_why(
    spark: SparkServer, tmp_path: Path
) -> None:
    """``source.pin: latest`` needs a Delta table: on a Parquet table the run fails, naming the
    setting and the table, and stores no figure."""
    from riskmon.run import run_model

    from .figures.books import fresh_store

    load_spark(spark, loan_frame(seed=2, n=300))
    model = model_config(spark.url)
    pinned = type(model.source).model_validate(
        {**model.source.model_dump(by_alias=True), "pin": "latest"}
    )
    model = model.model_copy(update={"source": pinned})
    outcome = run_model(model, dt.date(2025, 3, 31), store=fresh_store(tmp_path))
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "source.pin: cannot read the Delta history of table `loans`" in outcome.error
    assert outcome.figures == ()


def test_a_frozen_spark_server_fails_the_reading_at_the_deadline(spark: SparkServer) -> None:
    """The Thrift server stops answering mid-statement (its JVM stopped with SIGSTOP): Spark's
    own time limit cannot act, riskmon's deadline does. Last in the module: the server is
    continued (SIGCONT) afterwards, and Spark cancels the abandoned statement at its own
    limit."""
    deadline = 3.0
    model = model_config(spark.url)
    limits = {"read_deadline_seconds": deadline, "statement_timeout_seconds": 10.0}
    model = model.model_copy(update={"source": model.source.model_copy(update=limits)})
    slow = "SELECT sum(a.id * b.id) FROM range(100000) a CROSS JOIN range(100000) b"
    freeze = threading.Timer(1.0, os.kill, (spark.pid, signal.SIGSTOP))
    try:
        with Source(model) as source:
            with source.reading() as connection:  # the session opened while Spark answers
                connection.exec_driver_sql("SELECT 1").all()
            freeze.start()
            started = time.monotonic()
            with pytest.raises(SourceUnavailableError) as caught, source.reading() as connection:
                connection.exec_driver_sql(slow).all()
            failed_after = time.monotonic() - started
    finally:
        freeze.cancel()
        freeze.join()
        os.kill(spark.pid, signal.SIGCONT)
    assert freeze.finished.is_set()
    message = str(caught.value)
    assert f"did not answer within {deadline:g} s (source.read_deadline_seconds)" in message
    assert "abandoned its connection" in message
    assert failed_after < deadline + CANCEL_SECONDS + 5, failed_after
