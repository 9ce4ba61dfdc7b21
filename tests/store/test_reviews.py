"""Reviews are only ever appended: no method of the store and no command changes or deletes
one; a forced re-run, a store upgrade and a refused downgrade keep them."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from sqlalchemy import Engine, text

from riskmon.cli import COMMANDS
from riskmon.errors import ConfigError, StoreError
from riskmon.records import RunCounts
from riskmon.store import ASSESSMENTS, MetricStore
from riskmon.store.migrate import current_revision, downgrade, head_revision, upgrade

AS_OF = dt.date(2025, 3, 31)


def _run(store: MetricStore) -> int:
    run_id = store.claim_run("m", AS_OF, score_direction="higher_is_riskier", config_hash="c")
    store.complete_run(run_id, counts=RunCounts(10, 5, 1), figures=[])
    return run_id


def test_a_review_is_appended_and_a_later_one_supersedes_it_only_in_display(
    store: MetricStore,
) -> None:
    run_id = _run(store)
    first = store.add_review(run_id, decision="action-required", reviewer="A. Val", assessment=3)
    second = store.add_review(run_id, decision="accepted", reviewer="B. Val", note="fixed")
    stored = store.reviews(run_id=run_id)
    assert [r.id for r in stored] == [first.id, second.id]
    assert stored[0] == first  # the earlier review is kept as it was
    assert (first.model, first.as_of, first.assessment_text) == (
        "m",
        AS_OF,
        "3 – major deficiencies",
    )
    assert second.assessment_text is None
    assert store.reviews(model="m") == stored
    assert store.reviews(model="other") == []


def test_the_assessment_scale_has_the_four_levels_and_nothing_else_is_stored(
    store: MetricStore,
) -> None:
    assert sorted(ASSESSMENTS) == [1, 2, 3, 4]
    run_id = _run(store)
    with pytest.raises(ConfigError, match="--assessment: expected 1, 2, 3 or 4, got 5"):
        store.add_review(run_id, decision="accepted", reviewer="A", assessment=5)
    with pytest.raises(ConfigError, match="--decision: expected one of accepted, "):
        store.add_review(run_id, decision="fine", reviewer="A")
    with pytest.raises(ConfigError, match="--by"):
        store.add_review(run_id, decision="accepted", reviewer=" ")
    # the database's own constraints refuse what riskmon's checks would
    with pytest.raises(StoreError), store._session() as session:
        session.execute(
            text(
                "INSERT INTO reviews (run_id, decision, assessment, reviewer, reviewed_at) "
                "VALUES (:r, 'accepted', 7, 'x', CURRENT_TIMESTAMP)"
            ),
            {"r": run_id},
        )
    assert store.reviews(run_id=run_id) == []


def test_neither_the_store_nor_the_command_line_can_change_or_delete_a_review(
    store: MetricStore,
) -> None:
    reviewing = sorted(name for name in dir(store) if "review" in name.lower())
    assert reviewing == ["add_review", "reviews"]
    assert sorted(name for name in COMMANDS if "review" in name) == ["review", "reviews"]
    run_id = _run(store)
    review = store.add_review(run_id, decision="escalated", reviewer="A")
    with pytest.raises(dataclasses.FrozenInstanceError):
        review.decision = "accepted"  # type: ignore[misc]
    # a forced re-run of the date replaces the figures, never the reviews
    again = store.claim_run(
        "m", AS_OF, score_direction="higher_is_riskier", config_hash="d", force=True
    )
    assert again == run_id
    store.complete_run(run_id, counts=RunCounts(11, 5, 1), figures=[])
    assert store.reviews(run_id=run_id) == [review]


def test_reviews_survive_an_upgrade_and_a_downgrade_is_refused_while_they_exist(
    engine: Engine,
) -> None:
    upgrade(engine, "0007")  # the last released schema, with a run in it
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO models (name, score_direction, created_at) "
                "VALUES ('m', 'higher_is_riskier', CURRENT_TIMESTAMP)"
            )
        )
        connection.execute(
            text(
                "INSERT INTO runs (model_id, as_of, status, started_at, riskmon_version, "
                "config_hash) VALUES (1, :d, 'succeeded', CURRENT_TIMESTAMP, '0.1', 'c')"
            ),
            {"d": AS_OF},
        )
    upgrade(engine)
    store = MetricStore(engine)
    run = store.run("m", AS_OF)
    assert run is not None
    assert run.provenance is None  # stored before riskmon kept it
    review = store.add_review(run.id, decision="accepted", reviewer="A", assessment=1)
    upgrade(engine)  # at the head already: nothing changes
    with pytest.raises(Exception, match=r"holds 1 review\(s\)"):
        downgrade(engine, "0007")
    # the migrations above 0008 were undone (the daily cells: a cache of the source), the
    # reviews' refused and kept
    assert current_revision(engine) == "0008"
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    assert store.reviews() == [review]
