"""A source that stops answering fails its run at riskmon's own deadline
(``source.read_deadline_seconds``), and the next model runs: a PostgreSQL source behind a TCP
proxy frozen with SIGSTOP mid-read. A reading stuck past the deadline stops its run's heartbeat,
so that another process takes the run over once the claim is stale. A DuckDB file another
process has open for writing is said to be locked, not to lack its table. A MariaDB source
frozen between two readings fails the second at the deadline (the pooled connection's ping)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from riskmon.collect import Source
from riskmon.collect.deadline import CANCEL_SECONDS
from riskmon.collect.engines import CONNECT_SECONDS, driver_timeouts
from riskmon.config import parse_config
from riskmon.errors import SourceUnavailableError
from riskmon.outcome import RunOutcome
from riskmon.run import _heartbeat, run_model, run_models
from riskmon.store import MetricStore, RunInProgressError

from ..collect.loans import load, loan_frame, model_config
from ..figures.books import fresh_store
from ..tcp_proxy import Proxy
from .sources import (
    AS_OF,
    MODEL,
    SLOW_APPLICATION,
    config_of,
    loans_model,
    run_status,
    slow_query,
    wait_for,
)

#: the test sources' deadline: each slow statement takes a third of it when nothing is frozen
DEADLINE = 3.0
#: slack for a loaded machine, on top of the deadline and the cancel request's wait
SLACK_SECONDS = 5.0
SECOND_MODEL = "retail_pd_direct"


def _active_slow_statement(store: MetricStore) -> bool:
    """A statement of the slow source is running on the server (this test's database)."""
    with store.engine.connect() as connection:
        return bool(
            connection.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = :name "
                    "AND state = 'active' AND datname = current_database()"
                ),
                {"name": SLOW_APPLICATION},
            ).scalar_one()
        )


def _watchdogs() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "riskmon-read-deadline"]


@pytest.mark.postgres
def test_a_frozen_postgresql_source_fails_its_run_at_the_deadline_and_the_next_model_runs(
    pg_store: MetricStore, postgres_url: str
) -> None:
    """The first model reads through a proxy frozen while a statement runs: the server's
    statement timeout can do nothing (the server answered; the proxy does not pass it on),
    the cancel request reaches only the frozen proxy, and riskmon abandons the connection."""
    with Proxy(make_url(postgres_url).port or 5432) as proxy:
        through = make_url(postgres_url).set(port=proxy.port)
        named = through.update_query_dict({"application_name": SLOW_APPLICATION})
        source = {
            "url": named.render_as_string(hide_password=False),
            "query": slow_query(DEADLINE / 3),
            "read_deadline_seconds": DEADLINE,
        }
        frozen = loans_model(postgres_url, source=source)
        direct = loans_model(postgres_url, name=SECOND_MODEL)
        config = config_of(postgres_url, [frozen, direct])
        outcomes: list[RunOutcome] = []
        worker = threading.Thread(
            target=lambda: outcomes.extend(
                run_models(
                    parse_config(config, source="test", env={}),
                    [],
                    AS_OF,
                    store=pg_store,
                    report=False,
                    notify=False,
                )
            )
        )
        worker.start()
        try:
            wait_for(lambda: _active_slow_statement(pg_store), timeout=60, what="a slow read")
            proxy.freeze()
            frozen_at = time.monotonic()
            wait_for(
                lambda: run_status(pg_store) == "failed",
                timeout=DEADLINE + CANCEL_SECONDS + 30,
                what="the frozen run to fail",
            )
            failed_after = time.monotonic() - frozen_at
        finally:  # the proxy is thawed and killed first: nothing waits on it any more
            proxy.stop()
            worker.join(timeout=120)
    assert not worker.is_alive()
    assert failed_after < DEADLINE + CANCEL_SECONDS + SLACK_SECONDS, failed_after
    first, second = outcomes
    assert first.model == MODEL
    assert first.status == "failed"
    assert first.error is not None
    assert f"did not answer within {DEADLINE:g} s (source.read_deadline_seconds)" in first.error
    assert "abandoned its connection" in first.error
    assert f"model {MODEL!r}" in first.error
    assert first.run_id is not None
    assert pg_store.figures(first.run_id) == []
    assert second.model == SECOND_MODEL
    assert second.status == "succeeded", second.error
    assert second.figures
    assert _watchdogs() == []


@pytest.mark.postgres
def test_a_postgresql_source_frozen_before_the_run_connects_fails_it_at_the_deadline(
    pg_store: MetricStore, postgres_url: str
) -> None:
    """The proxy accepts the connection (the kernel does) but never passes a byte on: the
    driver's own connect timeout is longer; riskmon gives the connection up at its deadline."""
    with Proxy(make_url(postgres_url).port or 5432) as proxy:
        proxy.freeze()
        through = make_url(postgres_url).set(port=proxy.port)
        source = {
            "url": through.render_as_string(hide_password=False),
            "table": "loans",
            "read_deadline_seconds": DEADLINE,
        }
        started = time.monotonic()
        try:
            outcome = run_model(loans_model(postgres_url, source=source), AS_OF, store=pg_store)
        finally:
            proxy.stop()
        elapsed = time.monotonic() - started
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert f"did not answer within {DEADLINE:g} s (source.read_deadline_seconds)" in outcome.error
    assert elapsed < DEADLINE + CANCEL_SECONDS + SLACK_SECONDS, elapsed
    assert _watchdogs() == []


def test_a_reading_stuck_past_its_deadline_stops_the_heartbeat_and_the_run_is_taken_over(
    tmp_path: Path,
) -> None:
    """The reading's statement calls a function that blocks: nothing riskmon can cancel or
    abandon, as a driver whose socket it cannot reach. Before the deadline the heartbeat keeps
    the claim; past it (and the grace) it stops, and the claim goes stale."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=3, n=200))
    base = model_config(url)
    model = base.model_copy(
        update={"source": base.source.model_copy(update={"read_deadline_seconds": 1.0})}
    )
    store = fresh_store(tmp_path)
    claim = {"score_direction": "higher_is_riskier", "config_hash": "x"}
    run_id = store.claim_run(MODEL, AS_OF, owner="first", **claim)
    stale = dt.timedelta(seconds=0.6)
    holding, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def hold() -> int:
        holding.set()
        release.wait(30)
        return 1

    def run() -> None:
        try:
            with (
                _heartbeat(store, run_id, "first", 0.1, grace=0.5),
                Source(model) as source,
                source.reading() as connection,
            ):
                connection.connection.dbapi_connection.create_function("hold", 0, hold)
                connection.exec_driver_sql("SELECT hold()").all()
        except BaseException as exc:
            failures.append(exc)

    def take_over() -> bool:
        try:
            store.claim_run(MODEL, AS_OF, owner="second", stale_after=stale, **claim)
        except RunInProgressError:
            return False
        return True

    worker = threading.Thread(target=run)
    worker.start()
    try:
        assert holding.wait(10)
        started = time.monotonic()
        time.sleep(0.7)  # longer than the stale period, within the deadline: the beats go on
        assert not take_over()
        wait_for(take_over, timeout=15, what="the stuck run's claim to go stale")
        assert time.monotonic() - started >= 1.0 + 0.5  # the deadline, then the grace
    finally:
        release.set()
        worker.join(timeout=30)
    assert not worker.is_alive()
    (failure,) = failures
    assert isinstance(failure, SourceUnavailableError)
    assert "did not answer within 1 s (source.read_deadline_seconds)" in str(failure)


def test_a_duckdb_file_another_process_writes_is_said_to_be_locked(tmp_path: Path) -> None:
    pytest.importorskip("duckdb_engine", reason="DuckDB tests need duckdb-engine")
    path = tmp_path / "loans.duckdb"
    load(f"duckdb:///{path}", loan_frame(seed=4, n=200))
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
            "c.execute('CREATE TABLE held (x INTEGER)'); print('ready', flush=True); "
            "sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
        outcome = run_model(model_config(f"duckdb:///{path}"), AS_OF, store=fresh_store(tmp_path))
    finally:
        writer.kill()
        writer.communicate(timeout=30)
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert f"the DuckDB file {path} is locked by another process" in outcome.error
    assert f"(PID {writer.pid})" in outcome.error
    assert "not found" not in outcome.error


def test_the_deadline_defaults_to_a_minute_past_the_statement_timeout(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    assert model_config(url).source.read_deadline == 600 + 60
    with pytest.raises(Exception, match="read_deadline_seconds"):
        model_config(url, source={"url": url, "table": "loans", "read_deadline_seconds": 0})
    source = {"url": url, "table": "loans", "statement_timeout_seconds": 5}
    assert model_config(url, source=source).source.read_deadline == 65


@pytest.mark.mariadb
def test_a_source_frozen_between_readings_fails_the_next_at_the_deadline(mariadb_url: str) -> None:
    """The proxy in front of MariaDB freezes between two readings: the pooled connection's ping
    is under the deadline too (PyMySQL has no cancel: the connection is abandoned)."""
    load(mariadb_url, loan_frame(seed=5, n=100))
    with Proxy(make_url(mariadb_url).port or 3306) as proxy:
        url = make_url(mariadb_url).set(port=proxy.port).render_as_string(hide_password=False)
        source = {"url": url, "table": "loans", "read_deadline_seconds": 2.0}
        with Source(model_config(url, source=source)) as reader:
            with reader.reading() as connection:
                count = connection.exec_driver_sql("SELECT count(*) FROM loans").scalar_one()
            proxy.freeze()
            started = time.monotonic()
            with pytest.raises(SourceUnavailableError) as caught, reader.reading() as connection:
                connection.exec_driver_sql("SELECT count(*) FROM loans").all()
            failed_after = time.monotonic() - started
    assert count == 100
    message = str(caught.value)
    assert "did not answer within 2 s (source.read_deadline_seconds)" in message
    # abandoned when the ping had its socket attached; on a loaded machine the deadline may
    # pass before it is, and the reading gives the connection up itself
    assert message.endswith(("riskmon abandoned its connection", "riskmon stopped waiting for it"))
    assert failed_after < 2.0 + SLACK_SECONDS, failed_after


def test_the_drivers_own_timeouts_are_set_unless_the_url_sets_them() -> None:
    deadline = 660.0
    given = make_url("postgresql+psycopg://riskmon@db.example/loans?connect_timeout=7")
    options = driver_timeouts(given, deadline)
    assert "connect_timeout" not in options  # the URL's 7 s stand
    assert options["keepalives"] == 1
    assert options["tcp_user_timeout"] == CONNECT_SECONDS * 1000
    mysql = driver_timeouts(make_url("mysql+pymysql://riskmon@db.example/loans"), deadline)
    assert mysql["read_timeout"] == mysql["write_timeout"] == deadline
    assert driver_timeouts(make_url("trino://riskmon@db.example:8080/hive"), deadline) == {}
