"""The repository: one row per (model, date), one transaction per run, no partial figures."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from riskmon.records import AlertRecord, BinRecord, FigureRecord, RunCounts
from riskmon.store import (
    MetricStore,
    RunInProgressError,
    StoreConflict,
)
from riskmon.store import models as m

AS_OF = dt.date(2025, 3, 31)
COUNTS = RunCounts(n_current=1000, n_matured=800, n_unmatured=50)


def _claim(store: MetricStore, owner: str = "host-a:1", as_of: dt.date = AS_OF) -> int:
    return store.claim_run(
        "retail_pd",
        as_of,
        score_direction="higher_is_riskier",
        config_hash="c" * 64,
        owner=owner,
        force=True,  # these tests re-run dates that succeeded
    )


def _figures(ks: float) -> list[FigureRecord]:
    return [
        FigureRecord("ks", ks, "performance", params={"score_at": 0.31}),
        FigureRecord("auc", None, "performance", reason="no bads in the cohort"),
        FigureRecord("csi", 0.12, "current", variable="income", segment="channel=web"),
    ]


def test_complete_run_stores_every_figure_bin_and_alert(store: MetricStore) -> None:
    run_id = _claim(store)
    store.complete_run(
        run_id,
        counts=COUNTS,
        figures=_figures(0.42),
        bins=[BinRecord("score", "current", 0, "(-inf, 0.1]", 10, 10.0, actual_share=0.1)],
        alerts=[AlertRecord("ks_band", "GREEN", 0.42, {"low": 0.2, "high": 0.75}, "KS in band")],
    )
    (run,) = store.runs("retail_pd")
    assert (run.status, run.n_current, run.n_matured, run.n_unmatured) == (
        "succeeded",
        1000,
        800,
        50,
    )
    assert run.finished_at is not None
    assert run.finished_at >= run.started_at
    stored = {(f.name, f.variable, f.segment): f for f in store.figures(run_id)}
    assert stored[("ks", "", "")].value == 0.42
    assert stored[("ks", "", "")].params == {"score_at": 0.31}
    assert stored[("auc", "", "")].value is None
    assert stored[("auc", "", "")].reason == "no bads in the cohort"
    assert stored[("csi", "income", "channel=web")].value == 0.12
    assert store.count_rows("bin_stats") == 1
    assert store.count_rows("alerts") == 1


def test_rerun_of_the_same_date_replaces_the_earlier_one(store: MetricStore) -> None:
    first = _claim(store)
    store.complete_run(first, counts=COUNTS, figures=_figures(0.42))
    second = _claim(store)
    store.complete_run(second, counts=COUNTS, figures=_figures(0.40))
    assert second == first
    assert len(store.runs("retail_pd")) == 1
    ks = [f.value for f in store.figures(first) if f.name == "ks"]
    assert ks == [0.40]
    assert store.count_rows("figures") == 3


def test_a_failed_first_attempt_keeps_its_error_and_no_figures(store: MetricStore) -> None:
    run_id = _claim(store)
    store.fail_run(run_id, "source postgresql://risk:hunter2@db/loans unreachable")
    (run,) = store.runs("retail_pd")
    assert run.status == "failed"
    assert run.error == "source postgresql://risk:***@db/loans unreachable"
    assert (run.n_current, run.n_matured, run.baseline_id) == (None, None, None)
    assert store.figures(run_id) == []


def test_a_failed_rerun_keeps_the_earlier_results(store: MetricStore) -> None:
    run_id = _claim(store)
    store.complete_run(run_id, counts=COUNTS, figures=_figures(0.42))
    (before,) = store.runs("retail_pd")
    _claim(store)
    store.fail_run(run_id, "source postgresql://risk:hunter2@db/loans unreachable")
    (run,) = store.runs("retail_pd")
    assert run.status == "succeeded"
    assert run.n_current == COUNTS.n_current
    assert run.finished_at == before.finished_at
    assert run.error is not None
    assert "a re-run at" in run.error
    assert "failed and was discarded" in run.error
    assert "risk:***@db" in run.error
    assert "hunter2" not in run.error
    assert [f.value for f in store.figures(run_id) if f.name == "ks"] == [0.42]


def test_a_taken_over_owner_cannot_write(store: MetricStore) -> None:
    run_id = _claim(store, owner="host-a:1")
    long_ago = m.utcnow() - dt.timedelta(hours=2)
    with store.engine.begin() as connection:
        connection.execute(update(m.Run).where(m.Run.id == run_id).values(heartbeat_at=long_ago))
    _claim(store, owner="host-b:2")
    store.complete_run(run_id, counts=COUNTS, figures=_figures(0.40), owner="host-b:2")
    with pytest.raises(RunInProgressError, match=r"no longer held by host-a:1 \(now host-b:2\)"):
        store.complete_run(run_id, counts=COUNTS, figures=_figures(0.99), owner="host-a:1")
    with pytest.raises(RunInProgressError):
        store.fail_run(run_id, "late failure", owner="host-a:1")
    (run,) = store.runs("retail_pd")
    assert run.status == "succeeded"
    assert [f.value for f in store.figures(run_id) if f.name == "ks"] == [0.40]


def test_a_failing_write_leaves_nothing_behind(store: MetricStore) -> None:
    run_id = _claim(store)
    duplicate = [FigureRecord("ks", 0.4, "performance"), FigureRecord("ks", 0.5, "performance")]
    with pytest.raises(StoreConflict, match=r"metric store (sqlite|postgresql)"):
        store.complete_run(run_id, counts=COUNTS, figures=duplicate)
    assert store.count_rows("figures") == 0
    assert store.runs("retail_pd")[0].status == "running"


def test_live_claim_blocks_a_second_process(store: MetricStore) -> None:
    _claim(store, owner="host-a:1")
    with pytest.raises(RunInProgressError, match=r"being computed by host-a:1"):
        _claim(store, owner="host-b:2")


def test_stale_claim_of_a_killed_process_is_taken_over(store: MetricStore) -> None:
    run_id = _claim(store, owner="host-a:1")
    long_ago = m.utcnow() - dt.timedelta(hours=2)
    with store.engine.begin() as connection:
        connection.execute(update(m.Run).where(m.Run.id == run_id).values(heartbeat_at=long_ago))
    assert _claim(store, owner="host-b:2") == run_id
    with store.engine.connect() as connection:
        owner = connection.execute(select(m.Run.owner).where(m.Run.id == run_id)).scalar_one()
    assert owner == "host-b:2"


def test_database_itself_rejects_a_second_run_for_the_same_date(store: MetricStore) -> None:
    run_id = _claim(store)
    with store.engine.connect() as connection:
        model_id = connection.execute(select(m.Run.model_id).where(m.Run.id == run_id)).scalar_one()
    row = {
        "model_id": model_id,
        "as_of": AS_OF,
        "status": "running",
        "started_at": m.utcnow(),
        "riskmon_version": "x",
        "config_hash": "y",
    }
    with pytest.raises(IntegrityError), store.engine.begin() as connection:
        connection.execute(insert(m.Run).values(**row))


def test_figure_values_keep_double_precision(store: MetricStore) -> None:
    run_id = _claim(store)
    value = 0.123456789012345678
    store.complete_run(run_id, counts=COUNTS, figures=[FigureRecord("auc", value, "performance")])
    (stored,) = store.figures(run_id)
    assert stored.value is not None
    assert math.isclose(stored.value, value, rel_tol=1e-15)
