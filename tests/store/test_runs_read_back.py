"""A run's plan is stored with its results and read back; runs are found by id."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from sqlalchemy import select

from riskmon.records import FigureRecord, RunCounts
from riskmon.store import MetricStore
from riskmon.store import models as m

AS_OF = dt.date(2025, 3, 31)
COUNTS = RunCounts(n_current=1000, n_matured=800, n_unmatured=50)
PLAN: dict[str, Any] = {
    "current": {"start": "2025-03-01", "end": "2025-03-31"},
    "performance": {"start": "2024-03-01", "end": "2024-03-31", "horizon_months": 12},
    "columns": ["score", "income", "channel"],
    "segments": {"channel": ["branch", "web"]},
    "sample_weight": None,
}


def _claim(store: MetricStore, as_of: dt.date = AS_OF) -> int:
    return store.claim_run(
        "retail_pd",
        as_of,
        score_direction="higher_is_riskier",
        config_hash="c" * 64,
        force=True,  # these tests re-run dates that succeeded
    )


def _ks(value: float) -> list[FigureRecord]:
    return [FigureRecord("ks", value, "performance")]


def test_the_plan_is_stored_and_read_back(store: MetricStore) -> None:
    run_id = _claim(store)
    store.complete_run(run_id, counts=COUNTS, figures=_ks(0.42), plan=PLAN)
    (listed,) = store.runs("retail_pd")
    assert listed.plan == PLAN
    looked_up = store.run("retail_pd", AS_OF)
    assert looked_up is not None
    assert looked_up.plan == PLAN
    latest = store.latest_run("retail_pd")
    assert latest is not None
    assert latest.plan == PLAN


def test_a_run_without_a_plan_reads_none_and_stores_null(store: MetricStore) -> None:
    run_id = _claim(store)
    store.complete_run(run_id, counts=COUNTS, figures=_ks(0.42))
    (run,) = store.runs("retail_pd")
    assert run.plan is None
    with store.engine.connect() as connection:
        is_null = connection.execute(select(m.Run.plan.is_(None)).where(m.Run.id == run_id))
        assert is_null.scalar_one()


def test_a_rerun_replaces_the_plan_and_a_failed_rerun_keeps_it(store: MetricStore) -> None:
    run_id = _claim(store)
    store.complete_run(run_id, counts=COUNTS, figures=_ks(0.42), plan={"columns": ["score"]})
    _claim(store)
    store.complete_run(run_id, counts=COUNTS, figures=_ks(0.40), plan=PLAN)
    _claim(store)
    store.fail_run(run_id, "source unreachable")
    (run,) = store.runs("retail_pd")
    assert (run.status, run.plan) == ("succeeded", PLAN)


def test_a_failed_first_attempt_has_no_plan(store: MetricStore) -> None:
    run_id = _claim(store)
    store.complete_run(run_id, counts=COUNTS, figures=[], plan=PLAN)
    _claim(store)
    store.fail_run(run_id, "source unreachable")
    (run,) = store.runs("retail_pd")
    assert (run.status, run.plan) == ("failed", None)


def test_run_by_id_finds_the_run_or_none(store: MetricStore) -> None:
    first = _claim(store)
    store.complete_run(first, counts=COUNTS, figures=_ks(0.42), plan=PLAN)
    second = _claim(store, as_of=AS_OF + dt.timedelta(days=30))
    assert store.run_by_id(first) == store.run("retail_pd", AS_OF)
    found = store.run_by_id(second)
    assert found is not None
    assert (found.id, found.model, found.status, found.plan) == (
        second,
        "retail_pd",
        "running",
        None,
    )
    assert store.run_by_id(second + 1000) is None


def test_a_new_run_shows_its_plan_while_it_runs_and_a_rerun_keeps_the_stored_one(
    store: MetricStore,
) -> None:
    claim = {"score_direction": "higher_is_riskier", "config_hash": "c" * 64, "force": True}
    run_id = store.claim_run("retail_pd", AS_OF, plan=PLAN, **claim)  # type: ignore[arg-type]
    assert store.run_by_id(run_id).plan == PLAN  # type: ignore[union-attr]
    store.complete_run(run_id, counts=COUNTS, figures=_ks(0.42), plan=PLAN)
    store.claim_run("retail_pd", AS_OF, plan={"other": "plan"}, **claim)  # type: ignore[arg-type]
    assert store.run_by_id(run_id).plan == PLAN  # type: ignore[union-attr]


def test_runs_without_details_are_the_runs_less_their_plan_and_provenance(
    store: MetricStore,
) -> None:
    """A list of runs need not read each one's JSON: without ``details`` every other field
    reads back the same, the plan and provenance as None."""
    for day, value in ((AS_OF - dt.timedelta(days=1), 0.40), (AS_OF, 0.42)):
        run_id = _claim(store, day)
        store.complete_run(
            run_id, counts=COUNTS, figures=_ks(value), plan=PLAN, provenance={"windows": {}}
        )
    full, light = store.runs("retail_pd"), store.runs("retail_pd", details=False)
    assert [r.plan for r in full] == [PLAN, PLAN]
    assert [r.provenance for r in full] == [{"windows": {}}, {"windows": {}}]
    assert [(r.plan, r.provenance) for r in light] == [(None, None), (None, None)]
    assert [replace(r, plan=None, provenance=None) for r in full] == light
