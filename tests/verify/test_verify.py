"""``riskmon verify``: a stored run recomputed from the source as it is now, and from its own
stored count tables; a month of the source altered is named, with its counts."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from riskmon.cli import cli
from riskmon.collect.ledger import statement_hash
from riskmon.config import Period, RiskmonConfig, StoreConfig, model_fingerprint
from riskmon.run import run_model
from riskmon.store import MetricStore
from riskmon.verify import verify_from_store, verify_run

from ..collect.loans import load, loan_frame, model_config


def fresh(url: str) -> MetricStore:
    from riskmon.store.engine import store_engine
    from riskmon.store.migrate import upgrade

    engine = store_engine(url)
    upgrade(engine)
    return MetricStore(engine)


FEB, MAR = dt.date(2025, 2, 28), dt.date(2025, 3, 31)


@pytest.fixture
def store(sqlite_url: str) -> MetricStore:
    """A migrated SQLite store (the feature reads the store through one API on every engine)."""
    return fresh(sqlite_url)


@pytest.fixture
def runs(tmp_path: Path, sqlite_url: str, store: MetricStore) -> tuple[RiskmonConfig, str]:
    """Two stored runs of a model on 6000 synthetic loans, and the loans' URL."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=5, n=6000))
    model = model_config(url, performance_window="2 months")
    config = RiskmonConfig(
        store=StoreConfig(url=sqlite_url, reports_dir=tmp_path / "reports"), models=[model]
    )
    for as_of in (FEB, MAR):
        assert run_model(model, as_of, store=store).ok
    return config, url


def _alter_march(url: str) -> None:
    """Scores of March's loans shifted, and seven of them deleted."""
    engine = create_engine(url)
    with engine.begin() as connection:
        where = "score_date >= '2025-03-01' AND score_date <= '2025-03-31'"
        connection.execute(
            text(f"UPDATE loans SET pd_score = MIN(pd_score + 0.2, 1) WHERE {where}")
        )
        ids = connection.execute(text(f"SELECT loan_id FROM loans WHERE {where} LIMIT 7")).all()
        for (loan_id,) in ids:
            connection.execute(text("DELETE FROM loans WHERE loan_id = :i"), {"i": loan_id})
    engine.dispose()


def test_a_stored_run_recomputes_identically_then_names_the_changed_window(
    runs: tuple[RiskmonConfig, str], store: MetricStore
) -> None:
    config, url = runs
    model = config.models[0]
    for as_of in (FEB, MAR):
        found = verify_run(model, as_of, store=store)
        assert found.identical, [d.line() for d in found.differences]
        assert found.compared == len(store.figures(found.run_id))
    current = store.run(model.name, MAR).provenance["windows"]["current"]  # type: ignore[index]
    _alter_march(url)
    assert verify_run(model, FEB, store=store).identical  # February's windows are untouched
    found = verify_run(model, MAR, store=store)
    assert not found.identical
    assert {d.key[0] for d in found.differences} >= {"psi"}
    assert [w.population for w in found.windows] == ["current"]
    line = found.windows[0].line()
    assert line.startswith("current window 2025-03-01 to 2025-03-31: ")
    assert f"read {current['read']} → {current['read'] - 7}" in line
    assert "count tables differ" in line
    assert found.config_change is None
    assert found.code_change is None
    # the command says the same, and exits 1
    result = CliRunner().invoke(
        cli, ["--config", _written(config), "verify", model.name, "--as-of", str(MAR)]
    )
    assert result.exit_code == 1, result.output
    assert "the source's rows changed: current window 2025-03-01 to 2025-03-31" in result.output


def _written(config: RiskmonConfig) -> str:
    path = config.store.reports_dir.parent / "riskmon.yaml"
    data = config.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    path.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    return str(path)


def test_a_threshold_change_is_named_as_a_configuration_change(
    runs: tuple[RiskmonConfig, str], store: MetricStore
) -> None:
    config, _ = runs
    model = config.models[0]
    psi = model.thresholds.psi.model_copy(update={"red": 0.2})
    changed = model.model_copy(
        update={"thresholds": model.thresholds.model_copy(update={"psi": psi})}
    )
    found = verify_run(changed, MAR, store=store)
    assert found.identical  # levels judge figures, they change none
    assert found.config_change == (
        store.run(model.name, MAR).config_hash,
        model_fingerprint(changed),
    )  # type: ignore[union-attr]
    # a key that changes figures: the performance window
    shorter = model.model_copy(update={"performance_window": Period(count=1, unit="month")})
    found = verify_run(shorter, MAR, store=store)
    assert not found.identical
    causes = found.causes()
    assert [c for c in causes if c.startswith("the configuration changed")]
    assert causes[0] == (
        "the windows changed: performance window 2025-01-01 to 2025-01-31 is now "
        "2025-02-01 to 2025-02-28"
    )
    assert not [c for c in causes if "rows changed" in c]


def test_from_store_recomputes_the_families_its_bins_determine_and_names_the_others(
    runs: tuple[RiskmonConfig, str], store: MetricStore
) -> None:
    config, url = runs
    model = config.models[0]
    load(url, loan_frame(seed=99, n=10))  # the source is not read
    found = verify_from_store(model, MAR, store=store)
    assert found.identical, found.lines()
    assert {"stability", "strength"} <= set(found.recomputed)
    assert found.recomputed["stability"] > 0
    assert "discrimination" in found.not_recomputable
    assert "ranking table" in found.not_recomputable["discrimination"]
    stored = {f.name for f in store.figures(store.run(model.name, MAR).id)}  # type: ignore[union-attr]
    assert "psi" in stored
    assert "auc" in stored


def test_from_store_finds_a_stored_figure_that_does_not_follow_from_the_stored_bins(
    runs: tuple[RiskmonConfig, str], store: MetricStore
) -> None:
    config, _ = runs
    model = config.models[0]
    run = store.run(model.name, MAR)
    assert run is not None
    with store.engine.begin() as connection:
        connection.execute(
            text("UPDATE figures SET value = value * 1.5 WHERE run_id = :r AND name = 'psi'"),
            {"r": run.id},
        )
    found = verify_from_store(model, MAR, store=store)
    assert not found.identical
    assert {d.key[0] for d in found.differences} == {"psi"}


def test_provenance_holds_each_statement_its_rows_and_the_masked_configuration(
    runs: tuple[RiskmonConfig, str], store: MetricStore
) -> None:
    config, _ = runs
    run = store.run(config.models[0].name, MAR)
    assert run is not None
    assert run.provenance is not None
    provenance = run.provenance
    assert provenance["config_fingerprint"] == run.config_hash
    assert provenance["config"]["name"] == "retail_pd"
    statements = provenance["statements"]
    assert statements
    assert all(len(s["sql_sha256"]) == 64 for s in statements)
    assert sum(s["rows"] for s in statements) > 0
    windows = provenance["windows"]
    assert set(windows) == {"current", "performance"}
    assert windows["current"]["used"] == run.n_current
    assert provenance["baseline"]["id"] == run.baseline_id


def test_the_statement_hash_covers_the_sql_text_and_its_bound_values() -> None:
    expected = hashlib.sha256(b"SELECT ?\n[1]").hexdigest()
    assert statement_hash("SELECT ?", [1]) == expected
    assert statement_hash("SELECT ?", [2]) != expected
    assert statement_hash("SELECT ? ", [1]) != expected


def test_the_rows_a_statement_returned_are_counted_however_they_are_fetched(
    tmp_path: Path,
) -> None:
    from riskmon.collect.ledger import Ledger

    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    values = np.arange(25)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
        connection.execute(text("INSERT INTO t VALUES (:x)"), [{"x": int(v)} for v in values])
    ledger = Ledger()
    with engine.connect() as connection:
        ledger.listen(connection)
        connection.execute(text("SELECT x FROM t")).all()
        connection.execute(text("SELECT x FROM t WHERE x < 3")).one_or_none
        result = connection.execute(text("SELECT x FROM t WHERE x < 10"))
        assert len(result.fetchmany(4)) == 4
        assert result.fetchone() is not None
        assert len(list(result)) == 5
        streamed = connection.execution_options(yield_per=7).execute(text("SELECT x FROM t"))
        assert sum(len(p) for p in streamed.partitions()) == 25
    engine.dispose()
    assert [e.rows for e in ledger.entries] == [25, 0, 10, 25]
