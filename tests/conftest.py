"""Shared fixtures: throw-away metric stores on SQLite and, when configured, PostgreSQL; the
demo, made once per test session however many pytest-xdist workers run; the Spark server of
the Spark tests; the Hypothesis profile; the order the long modules start in; and, printed at
the end, the time each test directory took and the CPU seconds of the costliest modules."""

from __future__ import annotations

import compileall
import gc
import json
import os
import resource
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from filelock import FileLock
from hypothesis import settings
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from riskmon.cli import cli
from riskmon.store import MetricStore
from riskmon.store.engine import sqlite_file, store_engine
from riskmon.store.migrate import upgrade

from . import forkserver, spark_server
from .figures.books import migrated_sqlite
from .spark_server import SparkServer

#: the PostgreSQL server tests may create throw-away databases on (set by .ci/run)
POSTGRES_ENV = "RISKMON_TEST_POSTGRES_URL"
#: the MariaDB/MySQL server tests may create throw-away databases on (set by .ci/run)
MARIADB_ENV = "RISKMON_TEST_MARIADB_URL"
#: "local": the Spark tests start a Spark Thrift server on 127.0.0.1 (set by .ci/run)
SPARK_ENV = "RISKMON_TEST_SPARK"
REPO_ROOT = Path(__file__).resolve().parents[1]

# Every Hypothesis test runs one of these profiles: the number of examples of a test that names
# none (Hypothesis' own default, 100), with no per-example time limit (the tests run beside each
# other on a shared machine, and how long an example takes is not what they check). A test that
# names its own max_examples keeps it. On a developer's machine the examples are drawn afresh
# each run (and a failing one is kept and replayed), so that new ones keep being tried; in CI
# (CI=true, as .ci/run runs) they are drawn the same way every run, so that a failure seen there
# is the one seen on any machine.
settings.register_profile("riskmon", max_examples=100, deadline=None, print_blob=True)
settings.register_profile(
    "riskmon-ci", max_examples=100, deadline=None, print_blob=True, derandomize=True, database=None
)
settings.load_profile("riskmon-ci" if os.environ.get("CI") == "true" else "riskmon")


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees the same terminal: none. pytest-xdist's workers set ``COLUMNS=80``,
    which the single-process run does not; a test that needs a width sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)


def pytest_configure(config: pytest.Config) -> None:
    """riskmon compiled to bytecode once, before any worker starts: the many ``riskmon``
    processes the tests start (commands, schedulers, killed runs) would each compile its
    modules again where ``PYTHONDONTWRITEBYTECODE`` is set (as on the CI machines) and the
    install is editable; a module changed later is recompiled by Python as usual."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(REPO_ROOT / "riskmon", quiet=1)


#: the modules that keep a core busy longest without reading the demo (the CPU summary at the
#: end of a run): they start first, beside the one that builds the demo
CPU_BOUND_FIRST = (
    "tests/test_simulation_segments.py",
    "tests/test_simulation_segments_controlled.py",
    "tests/test_simulation.py",
    "tests/test_simulation_segments_drift.py",
    "tests/test_spark.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that read the demo are slow: ``-m "not slow"`` does not build it. The modules
    holding a slow or a Spark test run first, each module's tests together and in their order:
    under ``--dist loadscope --no-loadscope-reorder`` (pyproject.toml) a module runs on one
    worker, in this order, so that none of the long modules starts last. Of those, one module
    that reads the demo starts first (its worker builds the demo, which the others wait for),
    beside :data:`CPU_BOUND_FIRST`; the other modules that read the demo start after them, so
    that no worker waits for the demo while a core is free."""
    reads_demo: set[str] = set()
    for item in items:
        if "demo" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
            reads_demo.add(_module(item))
    long_modules = {
        _module(item)
        for item in items
        if item.get_closest_marker("slow") or item.get_closest_marker("spark")
    }
    builds_demo = next((_module(i) for i in items if _module(i) in reads_demo), None)

    def rank(item: pytest.Item) -> int:
        module = _module(item)
        if module not in long_modules:
            return 4
        if module == builds_demo:
            return 0
        if module in CPU_BOUND_FIRST:
            return 1
        return 3 if module in reads_demo else 2

    items.sort(key=rank)


def _module(item: pytest.Item | pytest.TestReport) -> str:
    """``tests/collect/test_source.py`` of a test or its report."""
    return item.nodeid.split("::", 1)[0]


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting imported (pytest, Hypothesis, scikit-learn, SQLAlchemy, pandas, riskmon and
    every test module: the objects that live as long as the worker) set aside from the garbage
    collector's walks, as :mod:`riskmon.heap` does for a run's process: the full collections
    the tests set off then walk only what the tests allocate (12 % less CPU in two run-heavy
    modules, medians of three runs in one process)."""
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The fork server of this test process (tests/forkserver.py), if one was started, stopped
    by its PID."""
    forkserver.stop()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@contextmanager
def _throwaway_database(env: str, example: str, *, drop_options: str = "") -> Iterator[str]:
    """A fresh, empty database on the server named by ``$env``, dropped afterwards; the test
    is skipped, saying how to run it, when ``$env`` is not set."""
    server = os.environ.get(env)
    if not server:
        pytest.skip(f"needs {env} (e.g. {example})")
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    name = f"riskmon_test_{uuid.uuid4().hex[:12]}"
    quoted = admin.dialect.identifier_preparer.quote_identifier(name)
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {quoted}"))
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {quoted}{drop_options}"))
        admin.dispose()


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkServer]:
    """A Spark Thrift server on 127.0.0.1 for the module that uses it (one: the server is
    stopped by its PID when that module's tests are done, rather than left running beside the
    rest of the session); the tests that use it are skipped, saying why, without
    RISKMON_TEST_SPARK=local, Java or pyspark."""
    if os.environ.get(SPARK_ENV) != "local":
        pytest.skip(f"needs {SPARK_ENV}=local (a Spark Thrift server started by the tests)")
    why = spark_server.missing()
    if why:
        pytest.skip(why)
    server = spark_server.start(
        tmp_path_factory.mktemp("spark"),
        java_options=spark_server.SHORT_LIVED_JAVA_OPTIONS,
        conf=spark_server.SHORT_LIVED_CONF,
    )
    try:
        yield server
    finally:
        spark_server.stop(server.pid)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    example = "postgresql+psycopg://postgres@127.0.0.1/postgres"
    with _throwaway_database(POSTGRES_ENV, example, drop_options=" WITH (FORCE)") as url:
        yield url


@pytest.fixture
def mariadb_url() -> Iterator[str]:
    """A fresh, empty MariaDB/MySQL database, dropped afterwards."""
    with _throwaway_database(MARIADB_ENV, "mysql+pymysql://root@127.0.0.1/test") as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest) -> str:
    """An empty database on each supported store backend."""
    fixture = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return str(request.getfixturevalue(fixture))


@pytest.fixture
def engine(store_url: str) -> Iterator[Engine]:
    """An engine on an empty store database, disposed afterwards."""
    created = store_engine(store_url)
    yield created
    created.dispose()


@pytest.fixture
def store(engine: Engine) -> MetricStore:
    """A freshly migrated metric store (on SQLite, a copy of one migrated once per worker)."""
    path = sqlite_file(engine)
    if path is not None and not path.exists():
        migrated_sqlite(path)
    else:
        upgrade(engine)
    return MetricStore(engine)


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgresql", marks=pytest.mark.postgres),
        "duckdb",
        pytest.param("mysql", marks=pytest.mark.mariadb),
    ]
)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(dialect, URL) of an empty loan-source database: SQLite, PostgreSQL, DuckDB."""
    if request.param == "sqlite":
        yield "sqlite", f"sqlite:///{tmp_path / 'loans.db'}"
    elif request.param == "duckdb":
        pytest.importorskip("duckdb_engine", reason="DuckDB tests need duckdb-engine")
        yield "duckdb", f"duckdb:///{tmp_path / 'loans.duckdb'}"
    elif request.param == "mysql":
        yield "mysql", str(request.getfixturevalue("mariadb_url"))
    else:
        yield "postgresql", str(request.getfixturevalue("postgres_url"))


def _build_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("demo") / "riskmon-demo"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return folder, result.stdout


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo, built once per test session: its folder and what `riskmon demo` printed.

    Under pytest-xdist the first worker to ask builds it, holding a lock in the folder all the
    workers' temporary folders share, and records where; the others wait, then read the same
    folder. The tests only read it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _build_demo(tmp_path_factory)
    shared = tmp_path_factory.getbasetemp().parent
    built = shared / "demo.json"
    with FileLock(str(shared / "demo.lock")):
        if not built.is_file():
            folder, printed = _build_demo(tmp_path_factory)
            built.write_text(json.dumps({"folder": str(folder), "printed": printed}))
    recorded = json.loads(built.read_text())
    return Path(recorded["folder"]), str(recorded["printed"])


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (not the database
    servers' nor a server the tests started and have not stopped yet)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


_CPU_STARTED = pytest.StashKey[float]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> object:
    item.stash[_CPU_STARTED] = _cpu_seconds()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> object:
    """A test's CPU seconds so far (its setup, call and teardown, and its module-scoped
    fixtures' where it is the first to use them) in each of its reports, for the summary."""
    spent = _cpu_seconds() - item.stash.get(_CPU_STARTED, _cpu_seconds())
    item.user_properties[:] = [p for p in item.user_properties if p[0] != "cpu_s"]
    item.user_properties.append(("cpu_s", spent))
    return (yield)


#: the test modules whose CPU seconds the summary lists, the most first
MODULES_LISTED = 30


def _directory(nodeid: str) -> str:
    """``tests/collect`` of ``tests/collect/test_source.py::test_x[a/b]``."""
    path = nodeid.split("::", 1)[0]
    return path.rsplit("/", 1)[0] if "/" in path else "."


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The seconds each test directory took: its tests' setup, call and teardown, summed (over
    the workers, under pytest-xdist: the reports the controller received from them)."""
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) not in ("setup", "call", "teardown"):
                continue
            directory = _directory(report.nodeid)
            seconds[directory] += float(getattr(report, "duration", 0.0))
            tests[directory].add(report.nodeid)
    if not seconds:
        return
    terminalreporter.write_sep("=", "seconds per test directory (setup + call + teardown)")
    for directory, total in sorted(seconds.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(
            f"{total:9.1f} s  {len(tests[directory]):5d} tests  {directory}"
        )
    terminalreporter.write_line(f"{sum(seconds.values()):9.1f} s  in all")
    cpu: dict[str, float] = defaultdict(float)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) == "teardown":
                spent = dict(getattr(report, "user_properties", ())).get("cpu_s", 0.0)
                cpu[_module(report)] += float(spent)
    terminalreporter.write_sep(
        "=", "CPU seconds per test module (its processes and the children they waited for)"
    )
    for module, total in sorted(cpu.items(), key=lambda item: -item[1])[:MODULES_LISTED]:
        terminalreporter.write_line(f"{total:9.1f} s  {module}")
    terminalreporter.write_line(f"{sum(cpu.values()):9.1f} s  in all")
