"""Claims: a run claimed by a process that died on this host is taken over at once; a date
that succeeded is not claimed again unless forced; a run's deliveries are queued with it and
taken once."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import sys

import pytest

from riskmon.records import AlertRecord, FigureRecord, RunCounts, Status
from riskmon.store import MetricStore, RunAlreadySucceeded, RunInProgressError


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _claim(store: MetricStore, owner: str | None) -> int:
    return store.claim_run(
        "m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h", owner=owner
    )


def test_a_dead_local_owner_is_taken_over_without_waiting(store: MetricStore) -> None:
    host = socket.gethostname()
    run_id = _claim(store, f"{host}:{_dead_pid()}")
    assert _claim(store, None) == run_id


def test_a_live_local_owner_blocks(store: MetricStore) -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as alive:
        try:
            _claim(store, f"{socket.gethostname()}:{alive.pid}")
            with pytest.raises(RunInProgressError):
                _claim(store, None)
        finally:
            alive.kill()


def test_an_owner_on_another_host_is_trusted_until_stale(store: MetricStore) -> None:
    _claim(store, f"elsewhere.example:{_dead_pid()}")
    with pytest.raises(RunInProgressError, match=r"elsewhere\.example"):
        _claim(store, None)


def _complete(store: MetricStore, run_id: int) -> None:
    counts = RunCounts(n_current=1, n_matured=1, n_unmatured=0)
    store.complete_run(run_id, counts=counts, figures=[FigureRecord("ks", 0.4, "performance")])


def test_a_succeeded_date_is_not_claimed_again_unless_forced(store: MetricStore) -> None:
    run_id = _claim(store, None)
    _complete(store, run_id)
    with pytest.raises(RunAlreadySucceeded, match=r"succeeded already \(run \d+ at .* UTC\)"):
        _claim(store, None)
    stored = store.run_by_id(run_id)
    assert stored is not None
    assert stored.status == "succeeded"  # untouched by the refused claim
    forced = store.claim_run(
        "m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h", force=True
    )
    assert forced == run_id
    retaken = store.run_by_id(run_id)
    assert retaken is not None
    assert retaken.status == "running"


def test_a_failed_date_is_claimed_again_without_force(store: MetricStore) -> None:
    run_id = _claim(store, None)
    store.fail_run(run_id, "the source was down")
    assert _claim(store, None) == run_id


def test_a_run_queues_its_deliveries_in_the_transaction_that_stores_it(store: MetricStore) -> None:
    run_id = _claim(store, None)
    counts = RunCounts(n_current=1, n_matured=1, n_unmatured=0)
    red = AlertRecord("ks_range", Status.RED, 0.1, {"red": 0.2}, "KS is low")
    store.complete_run(
        run_id, counts=counts, figures=[], alerts=[red], notify=["webhook:a", "email:b"]
    )
    assert [(d.channel, d.state, d.attempts) for d in store.deliveries(run_id)] == [
        ("webhook:a", "pending", 0),
        ("email:b", "pending", 0),
    ]
    assert {a.notify_state for a in store.alerts(run_id)} == {"pending"}
    stale = dt.timedelta(minutes=1)
    assert store.take_delivery(run_id, "webhook:a", stale_after=stale)
    assert not store.take_delivery(run_id, "webhook:a", stale_after=stale)  # taken once only
    assert store.take_delivery(run_id, "webhook:a", stale_after=dt.timedelta(0))  # left: retaken
    # computed again with the same status: the deliveries stand; with another: owed again
    retaken = store.claim_run(
        "m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h", force=True
    )
    store.complete_run(retaken, counts=counts, figures=[], alerts=[red], notify=["webhook:a"])
    assert [d.state for d in store.deliveries(run_id)] == ["sending", "pending"]
    green = AlertRecord("ks_range", Status.GREEN, 0.4, {"red": 0.2}, "KS is fine")
    store.claim_run(
        "m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h", force=True
    )
    store.complete_run(run_id, counts=counts, figures=[], alerts=[green], notify=["webhook:a"])
    # owed GREEN now; the RED e-mail never sent is not due to GREEN: dropped
    assert [(d.channel, d.state) for d in store.deliveries(run_id)] == [("webhook:a", "pending")]


def test_an_error_quoting_a_nul_is_recorded(store: MetricStore) -> None:
    # PostgreSQL's text cannot hold U+0000: the failure must still be recorded, NUL visible
    run_id = _claim(store, None)
    store.fail_run(run_id, "invalid segment value 'north\x00east'")
    failed = store.run_by_id(run_id)
    assert failed is not None
    assert failed.status == "failed"
    assert failed.error == "invalid segment value 'north\\x00east'"


def test_a_delivery_owed_anew_while_it_was_being_sent_stays_owed(store: MetricStore) -> None:
    # taken by one process; the run computed again with another status meanwhile: the late
    # record of the old message must not mark the new one sent
    run_id = _claim(store, None)
    counts = RunCounts(n_current=1, n_matured=1, n_unmatured=0)
    red = AlertRecord("ks_range", Status.RED, 0.1, {"red": 0.2}, "KS is low")
    store.complete_run(run_id, counts=counts, figures=[], alerts=[red], notify=["webhook:a"])
    assert store.take_delivery(run_id, "webhook:a", stale_after=dt.timedelta(minutes=1))
    store.claim_run(
        "m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h", force=True
    )
    green = AlertRecord("ks_range", Status.GREEN, 0.4, {"red": 0.2}, "KS is fine")
    store.complete_run(run_id, counts=counts, figures=[], alerts=[green], notify=["webhook:a"])
    store.record_delivery(run_id, "webhook:a", error=None, taken=True)  # the RED one's
    assert [d.state for d in store.deliveries(run_id)] == ["pending"]


def test_a_run_computed_again_drops_unsent_deliveries_no_longer_due(store: MetricStore) -> None:
    run_id = _claim(store, None)
    store.fail_run(run_id, "the source was down", notify=["email:amber", "email:always"])
    store.record_delivery(run_id, "email:amber", error="SMTP down")
    store.claim_run("m", dt.date(2025, 1, 31), score_direction="higher_is_riskier", config_hash="h")
    counts = RunCounts(n_current=1, n_matured=1, n_unmatured=0)
    green = AlertRecord("ks_range", Status.GREEN, 0.4, {"red": 0.2}, "KS is fine")
    # GREEN is due to the 'always' channel only: the failure the 'amber' one never got is moot
    store.complete_run(run_id, counts=counts, figures=[], alerts=[green], notify=["email:always"])
    assert [(d.channel, d.state) for d in store.deliveries(run_id)] == [("email:always", "pending")]
