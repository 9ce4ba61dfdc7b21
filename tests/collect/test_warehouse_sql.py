"""The SQL riskmon writes for the engines no server here runs: Trino, Snowflake, BigQuery,
Databricks (and Spark's ``hive://``, also run for real in ``test_spark.py``).

Every statement riskmon executes in a baseline freeze and a nightly run of the demo's three
models is captured while the runs read a DuckDB copy of the demo's loans under the target
engine's profile (its collect shape and options, without its session statements, which are
checked apart). Each statement is then compiled with the target's SQLAlchemy dialect and
parsed by sqlglot for that engine, and must: parse; bind every value (no literal in the SQL
text but ``GROUP BY`` positions); call only functions sqlglot knows for that engine; and, where
the driver's parameters are positional (Trino), group on no expression holding a parameter.
The runs under the target's profile must store the figures the DuckDB profile stores.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import create_engine, event
from sqlalchemy.dialects import registry
from sqlalchemy.engine import Engine
from sqlalchemy.sql import CompoundSelect, Select
from sqlalchemy.sql.elements import ClauseElement

import riskmon.collect.source as source_module
from riskmon.collect import engines
from riskmon.collect.profile import EngineProfile, group_by_position
from riskmon.config import load_config
from riskmon.outcome import RunOutcome
from riskmon.run import run_model

from ..figures.books import fresh_store

sqlglot = pytest.importorskip("sqlglot", reason="the warehouse SQL tests need sqlglot")
exp = sqlglot.expressions
duckdb = pytest.importorskip("duckdb", reason="the warehouse SQL tests read DuckDB")

AS_OF = dt.date(2024, 12, 31)
#: target: (SQLAlchemy dialect, its plugin's package, sqlglot's dialect, a URL of its driver)
TARGETS = {
    "trino": ("trino", "trino", "trino", "trino://user@localhost:8080/hive"),
    "snowflake": ("snowflake", "snowflake.sqlalchemy", "snowflake", "snowflake://u:p@acct/db"),
    "bigquery": ("bigquery", "sqlalchemy_bigquery", "bigquery", None),
    "databricks": ("databricks", "databricks.sqlalchemy", "databricks", None),
    "spark": ("hive", "pyhive", "spark", "hive://localhost:10000/default"),
}
#: a bound parameter as the dialects write it with the "named" style (Databricks quotes it)
_NAMED = re.compile(r":`?([A-Za-z_][A-Za-z0-9_]*)`?")


@pytest.fixture(scope="module", autouse=True)
def _function_registry() -> Iterator[None]:
    """SQLAlchemy's generic functions as they were before these tests imported the dialects:
    sqlalchemy-bigquery registers an ``unnest`` for every dialect when imported, which
    SQLAlchemy then uses for PostgreSQL's bulk inserts (with a warning) in later tests."""
    from sqlalchemy.sql import functions

    saved = {name: dict(known) for name, known in functions._registry.items()}
    yield
    functions._registry.clear()
    functions._registry.update(saved)


@pytest.fixture(scope="module")
def duck_loans(demo: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's loan tables, copied into a DuckDB file."""
    folder, _ = demo
    path = tmp_path_factory.mktemp("warehouse") / "loans.duckdb"
    target = duckdb.connect(str(path))
    with sqlite3.connect(folder / "loans.db") as sqlite:
        for name in ("scored_loans", "account_ratings", "recoveries", "drawdowns"):
            frame = pd.read_sql(f"SELECT * FROM {name}", sqlite)
            for column in frame.columns:
                if column.endswith(("date", "_on")):
                    frame[column] = pd.to_datetime(frame[column]).dt.date
            target.register("frame", frame)
            target.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
            target.unregister("frame")
    target.close()
    return path


def _as_target(profile: EngineProfile) -> EngineProfile:
    """``profile``'s SQL choices, without the session statements only its engine runs."""
    return dataclasses.replace(
        profile,
        guard=None,
        tuning=None,
        session_time_zone=None,
        per_loan_settings=None,
        on_connect=None,
        connect_args=dict,
        reading_url=None,
        reflects_tables=False,
    )


def _sql_choices(profile: EngineProfile) -> EngineProfile:
    """``profile`` as the runs of these tests see it: :func:`_as_target`, without what only
    names or describes the engine, nor Delta time travel (the demo pins no table). Databricks
    and Spark choose alike (their row hash too): one run serves the two, its statements then
    compiled for each one's dialect (and Snowflake's too, :func:`target_runs`)."""
    return dataclasses.replace(
        _as_target(profile),
        name="target",
        dialects=frozenset(),
        snapshot="",
        timeout_markers=(),
        out_of_memory_hint="",
        error_text=None,
        time_travel=False,
    )


def _runs(
    demo: tuple[Path, str],
    loans: Path,
    store_dir: Path,
    profile: EngineProfile,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[RunOutcome], list[ClauseElement]]:
    """The demo's models frozen and run as of AS_OF on ``loans`` under ``profile``, and every
    SELECT they executed on it."""
    folder, _ = demo
    real = engines.profile_for

    def profile_for(name: str, *, warn: bool = True) -> EngineProfile:
        return profile if name == "duckdb" else real(name, warn=warn)

    monkeypatch.setattr(source_module, "profile_for", profile_for)
    captured: list[ClauseElement] = []

    def capture(connection: Any, statement: Any, *_: Any) -> None:
        if connection.engine.url.get_backend_name() == "duckdb" and isinstance(
            statement, (Select, CompoundSelect)
        ):
            captured.append(statement)

    event.listen(Engine, "before_execute", capture)
    try:
        store = fresh_store(store_dir)
        outcomes = []
        for model in load_config(folder / "riskmon.yaml").models:
            duck = model.source.model_copy(update={"url": f"duckdb:///{loans}"})
            outcome = run_model(model.model_copy(update={"source": duck}), AS_OF, store=store)
            assert outcome.ok, outcome.error
            outcomes.append(outcome)
    finally:
        event.remove(Engine, "before_execute", capture)
    return outcomes, captured


def _values(outcomes: list[RunOutcome]) -> dict[tuple[str, ...], float | None]:
    return {
        (o.model, f.name, f.population, f.variable, f.segment): f.value
        for o in outcomes
        for f in o.figures
    }


@pytest.fixture(scope="module")
def duckdb_figures(
    demo: tuple[Path, str], duck_loans: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, ...], float | None]:
    """The figures of the runs under DuckDB's own profile."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        outcomes, _ = _runs(
            demo,
            duck_loans,
            tmp_path_factory.mktemp("duck"),
            _as_target(engines.DUCKDB),
            monkeypatch,
        )
    return _values(outcomes)


Runs = tuple[list[RunOutcome], list[ClauseElement]]


@pytest.fixture(scope="module")
def target_runs(
    demo: tuple[Path, str], duck_loans: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[EngineProfile], Runs]:
    """The runs under a target's profile (:func:`_runs`), made once per :func:`_sql_choices`
    but the row hash. The demo's runs are first runs: they check no day read before again, so
    no statement of theirs hashes rows, and Snowflake's runs (no row hash) send what
    Databricks' send (Spark's ``xxhash64``): one run serves the three. A run that did hash
    rows with Spark's function would fail on DuckDB, which has none, and fail the test."""
    made: dict[EngineProfile, Runs] = {}

    def runs(profile: EngineProfile) -> Runs:
        choices = _sql_choices(profile)
        shared = dataclasses.replace(choices, row_hash=None)
        if shared not in made:
            with pytest.MonkeyPatch.context() as monkeypatch:
                folder = tmp_path_factory.mktemp("target")
                made[shared] = _runs(demo, duck_loans, folder, choices, monkeypatch)
        return made[shared]

    return runs


def _functions(tree: Any) -> Iterator[str]:
    for node in tree.find_all(exp.Anonymous):
        yield str(node.name)


def _literals(tree: Any) -> list[str]:
    """The literals of ``tree`` but the positions of ``GROUP BY``."""
    return [
        node.sql() for node in tree.find_all(exp.Literal) if not isinstance(node.parent, exp.Group)
    ]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_statement_compiles_parses_and_binds_its_values(
    target: str,
    duckdb_figures: dict[tuple[str, ...], float | None],
    target_runs: Callable[[EngineProfile], Runs],
) -> None:
    dialect_name, package, glot, url = TARGETS[target]
    pytest.importorskip(package, reason=f"the {target} dialect is not installed")
    profile = engines.profile_for(dialect_name)
    assert profile.name == target
    outcomes, statements = target_runs(profile)
    # the statements of the target's shape count what DuckDB's count
    got = _values(outcomes)
    assert got.keys() == duckdb_figures.keys()
    for key, value in duckdb_figures.items():
        if value is None:  # not available on DuckDB (with its reason): nor on the target
            assert got[key] is None, key
            continue
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12, nan_ok=True), key

    dialect = registry.load(dialect_name)(paramstyle="named")
    positional = url is not None and create_engine(url).dialect.positional
    assert positional is (target == "trino")
    assert len(statements) > 50
    kinds = set()
    # a statement is checked once, whatever its values: by SQLAlchemy's cache key, or its SQL
    shapes: set[Any] = set()
    for statement in statements:
        cache_key = statement._generate_cache_key()
        if cache_key is not None and cache_key.key in shapes:
            continue
        if profile.group_by_position:
            statement = group_by_position(statement)
        compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        sql = str(compiled)
        if sql in shapes:
            continue
        shapes |= {sql} if cache_key is None else {sql, cache_key.key}
        tree = sqlglot.parse_one(_NAMED.sub("?", sql), read=glot)
        assert list(_functions(tree)) == [], sql
        assert _literals(tree) == [], sql
        placeholders = len(list(tree.find_all(exp.Placeholder)))
        assert placeholders >= len(compiled.params) > 0, sql
        if positional:
            for group in tree.find_all(exp.Group):
                assert not list(group.find_all(exp.Placeholder)), sql
        kinds |= {type(node).__name__ for node in tree.find_all(exp.Union, exp.Window, exp.Group)}
    # the collect's GROUP BYs, the union of the census and the migrations' window functions
    assert {"Group", "Window"} <= kinds


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_session_statements_parse(target: str) -> None:
    """The statements a reading begins with (time limit, time zone, settings) parse."""
    dialect_name, _, glot, _ = TARGETS[target]
    profile = engines.profile_for(dialect_name)
    sent: list[str] = []

    class Recorder:
        def exec_driver_sql(self, sql: str, *_: Any) -> None:
            sent.append(sql)

    connection: Any = Recorder()
    profile.begin(connection, 90.5, "Europe/Paris")
    profile.tune(connection)
    assert bool(sent) is (target != "bigquery")
    for sql in sent:
        assert sqlglot.parse_one(sql, read=glot) is not None
    assert any("90" in sql for sql in sent) is profile.statement_timeout
    if profile.session_time_zone is not None:
        assert any("Europe/Paris" in sql for sql in sent)
        with pytest.raises(ValueError, match="not a time zone"):
            profile.begin(connection, 10, "UTC'; DROP TABLE loans; --")


@pytest.mark.parametrize(
    ("pin", "clause"),
    [
        ({"version": 42}, "VERSION AS OF 42"),
        ({"timestamp": "2026-11-01T02:00:00"}, "TIMESTAMP AS OF '2026-11-01 02:00:00'"),
    ],
)
@pytest.mark.parametrize("target", ["databricks", "spark"])
def test_a_pinned_delta_table_is_read_as_of_its_version(
    target: str, pin: dict[str, Any], clause: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every statement reads the table through ``SELECT * FROM t VERSION AS OF v``, which
    Databricks' and Spark's SQL parse as a time-travel read of ``t``; the run records it."""
    from sqlalchemy import Double, Integer
    from sqlalchemy import column as sql_column
    from sqlalchemy import table as sql_table

    from riskmon.collect import Source, pushdown

    from .loans import model_config
    from .test_collect import request

    dialect_name, package, glot, _ = TARGETS[target]
    pytest.importorskip(package, reason=f"the {target} dialect is not installed")
    url = (
        "databricks://token:x@host?http_path=/sql/1"
        if target == "databricks"
        else TARGETS[target][3]
    )
    model = model_config(str(url))
    pinned = type(model.source).model_validate(
        {**model.source.model_dump(by_alias=True), "pin": pin}
    )
    model = model.model_copy(update={"source": pinned})
    columns = ["loan_id", "score_date", "pd_score", "bad", "income", "region", "grade", "channel"]
    columns.append("exposure")
    typed = [
        sql_column(n, Double() if n in {"pd_score", "income", "exposure"} else Integer())
        for n in columns
    ]
    monkeypatch.setattr(Source, "_table", lambda self: sql_table("loans", *typed))
    source = Source(model)
    try:
        loans = source.selectable()
        assert (
            source.snapshot == f"Delta table loans {clause}: every statement read that one version"
        )
        profile = source.profile
        statements = list(pushdown.statements(loans, request(), profile.default_shape, profile))
    finally:
        source.close()
    dialect = registry.load(dialect_name)(paramstyle="named")
    for statement in statements:
        sql = str(
            statement.select.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        )
        assert f"FROM `loans` {clause}" in sql or f"FROM loans {clause}" in sql, sql
        tree = sqlglot.parse_one(_NAMED.sub("?", sql), read=glot)
        (version,) = list(tree.find_all(exp.Version))
        assert version.sql(dialect=glot).upper().endswith(clause.split(" AS OF ")[1].upper())


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_moments_of_a_continuous_target_compile_for_every_shape(target: str) -> None:
    """A request summing a continuous target's moments (and PD sums, at once) compiles, in every
    shape the target's profile may use, to statements that parse and bind every value."""
    from sqlalchemy import Date, Double, Integer, String
    from sqlalchemy import column as sql_column
    from sqlalchemy import table as sql_table

    from riskmon.collect import pushdown
    from riskmon.collect.request import PdSource

    from .test_collect import request

    dialect_name, package, glot, url = TARGETS[target]
    pytest.importorskip(package, reason=f"the {target} dialect is not installed")
    profile = engines.profile_for(dialect_name)
    types = {"score_date": Date(), "region": String(), "channel": String(), "bad": Integer()}
    names = ["loan_id", "score_date", "pd_score", "bad", "income", "region", "grade", "channel"]
    names += ["exposure", "lgd"]
    loans = sql_table("loans", *(sql_column(n, types.get(n, Double())) for n in names))
    base = request(weighted=True)
    variables = [
        v if v.binning is None else dataclasses.replace(v, moments=True, sums=v.name == "score")
        for v in base.variables
    ]
    req = dataclasses.replace(
        base, variables=variables, target="lgd", score="pd_score", pd=PdSource("pd_score")
    )
    dialect = registry.load(dialect_name)(paramstyle="named")
    positional = url is not None and create_engine(url).dialect.positional
    shapes = [s for s in pushdown.SHAPES if s != "grouping_sets" or profile.grouping_sets]
    for shape in shapes:
        summing = 0  # statements of the shape whose rows carry the moments
        for statement in pushdown.statements(loans, req, shape, profile):
            select_ = statement.select
            summing += statement.sums.moments
            if profile.group_by_position:
                select_ = group_by_position(select_)
            compiled = select_.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
            sql = str(compiled)
            assert ("m_wsy" in sql) is statement.sums.moments, sql
            tree = sqlglot.parse_one(_NAMED.sub("?", sql), read=glot)
            assert list(_functions(tree)) == [], sql
            assert _literals(tree) == [], sql
            assert len(list(tree.find_all(exp.Placeholder))) >= len(compiled.params) > 0, sql
            if positional:
                for group in tree.find_all(exp.Group):
                    assert not list(group.find_all(exp.Placeholder)), sql
        assert summing > 0, shape
