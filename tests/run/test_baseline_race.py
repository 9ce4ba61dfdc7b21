"""Processes running different dates of a model that has no baseline yet freeze it once: one
version, which every run uses — real processes, on a PostgreSQL and on a SQLite store."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from riskmon.baseline import freeze
from riskmon.collect import Source
from riskmon.store import MetricStore, StoreConflict
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

from .. import forkserver
from .sources import AS_OF, MODEL, config_of, load_loans, loans_model, slow_model, write_config

RUN_ONCE = Path(__file__).with_name("run_once.py")
#: upper bound on any one subprocess of these tests
PROCESS_TIMEOUT = 120
#: as-of dates the processes run, one each: all covered by the test loans
DATES = (AS_OF, dt.date(2025, 3, 15), dt.date(2025, 3, 20))
#: seconds the processes get to import riskmon before they start together
START_DELAY = 8


def _run_at_once(config: Path) -> list[tuple[dict[str, object], str]]:
    """Run each of :data:`DATES` in a process of its own, all starting at the same moment;
    each one's printed outcome and its log."""
    start_at = time.time() + START_DELAY
    children = [
        forkserver.popen(
            [sys.executable, str(RUN_ONCE), str(config), MODEL, str(day), str(start_at)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for day in DATES
    ]
    try:
        outputs = [child.communicate(timeout=PROCESS_TIMEOUT) for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait(timeout=PROCESS_TIMEOUT)
    assert [c.returncode for c in children] == [0] * len(DATES), outputs
    return [(json.loads(out), err) for out, err in outputs]


def _assert_one_baseline(store: MetricStore, results: list[tuple[dict[str, object], str]]) -> None:
    assert [r["status"] for r, _ in results] == ["succeeded"] * len(DATES), results
    assert store.count_rows("baselines") == 1
    frozen = store.latest_baseline(MODEL)
    assert frozen is not None
    assert frozen.version == 1
    assert {r["baseline_version"] for r, _ in results} == {1}
    assert {run.baseline_id for run in store.runs(MODEL)} == {frozen.id}
    froze = [log for _, log in results if "baseline version 1 frozen" in log]
    assert len(froze) == 1, [log for _, log in results]


@pytest.mark.postgres
def test_concurrent_first_runs_on_postgresql_freeze_one_baseline_and_wait_for_it(
    postgres_url: str, tmp_path: Path
) -> None:
    load_loans(postgres_url)
    engine = store_engine(postgres_url)
    try:
        upgrade(engine)
        store = MetricStore(engine)
        # every source query sleeps, so that the others ask while the first is freezing
        config = tmp_path / "riskmon.yaml"
        write_config(config, config_of(postgres_url, [slow_model(postgres_url)]))
        results = _run_at_once(config)
        _assert_one_baseline(store, results)
        waited = [log for _, log in results if "waiting for another process" in log]
        assert len(waited) == len(DATES) - 1, [log for _, log in results]
    finally:
        engine.dispose()


def test_concurrent_first_runs_on_sqlite_store_one_baseline(tmp_path: Path) -> None:
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load_loans(loans, n=20000)
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    store = MetricStore.open(store_url)
    try:
        upgrade(store.engine)
        config = tmp_path / "riskmon.yaml"
        write_config(config, config_of(store_url, [loans_model(loans)]))
        _assert_one_baseline(store, _run_at_once(config))
    finally:
        store.engine.dispose()


def test_a_taken_version_is_refused_and_nothing_is_stored(
    store: MetricStore, tmp_path: Path
) -> None:
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load_loans(loans)
    model = loans_model(loans)
    with Source(model) as source:
        first = freeze(model, source, store, version=1)
        with pytest.raises(StoreConflict):
            freeze(model, source, store, version=1)
        assert store.count_rows("baselines") == 1
        again = freeze(model, source, store)  # the next version
    assert (first.version, again.version) == (1, 2)
    assert store.count_rows("baselines") == 2
    assert again.variables.keys() == first.variables.keys()
