"""A run's life in the metric store: claimed, kept alive, then completed or failed.

:meth:`Runs.claim_run` takes the (model, as-of date) row — the database's unique constraint
makes that atomic across processes — then :meth:`Runs.complete_run` writes every figure, bin
and alert of the run in one transaction (replacing those of an earlier run of the same date),
or :meth:`Runs.fail_run` records the error. Figures are never written outside that one
transaction, so a failed or killed run leaves no partial figures.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, func, null, select, update
from sqlalchemy.orm import Session

from riskmon import __version__
from riskmon.errors import EXIT_FAILED, StoreError
from riskmon.records import FAILED, AlertRecord, BinRecord, FigureRecord, RunCounts, Status
from riskmon.store import models as m
from riskmon.store._session import (
    StoreConflict,
    StoreSession,
    _utc,
    insert_records,
    insert_rows,
    record_row,
    stored_error,
)
from riskmon.store.deliveries import queue_deliveries

#: a run whose heartbeat is older than this is taken to belong to a dead process
DEFAULT_STALE_AFTER = dt.timedelta(minutes=30)


class RunInProgressError(StoreError):
    """Another process is computing the same (model, as-of date) right now."""

    exit_code = EXIT_FAILED


class RunAlreadySucceeded(RunInProgressError):
    """The (model, as-of date) has succeeded already, and is not computed again unless forced.

    Whoever computed it — another scheduler, a backfill, an earlier ``riskmon run`` — stored
    its figures and queued its notifications: computing it again would only notify twice.
    """

    def __init__(self, message: str, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id


def default_owner() -> str:
    """Who holds a run: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(owner: str) -> bool:
    """Whether a run's owner was a process on this host that no longer exists."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, under another user
        return False
    return False


def _held(run_id: int, owner: str | None) -> list[Any]:
    """The conditions under which ``owner`` still holds run ``run_id``."""
    conditions: list[Any] = [m.Run.id == run_id]
    if owner is not None:
        conditions += [m.Run.owner == owner, m.Run.status == "running"]
    return conditions


def _take_finish(session: Session, run_id: int, owner: str | None) -> None:
    """Raise unless ``owner`` still holds the run (it may have been taken over)."""
    if owner is None:
        return
    held = session.scalar(select(func.count()).select_from(m.Run).where(*_held(run_id, owner)))
    if not held:
        holder = session.scalar(select(m.Run.owner).where(m.Run.id == run_id))
        raise RunInProgressError(
            f"run {run_id} is no longer held by {owner} (now {holder}): not written"
        )


def _clear_results(session: Session, run_id: int) -> str:
    """Delete the run's earlier figures, bins and alerts; the state they gave the run: its
    worst alert, or ``FAILED`` when it had no results (a failed or a first attempt — a
    delivery it has was about a failure)."""
    alerts = session.scalars(select(m.Alert.status).where(m.Alert.run_id == run_id)).all()
    had = session.scalar(
        select(func.count()).select_from(m.Figure).where(m.Figure.run_id == run_id)
    )
    for table in (m.Figure, m.BinStat, m.Alert):
        session.execute(delete(table).where(table.run_id == run_id))
    return Status.worst(alerts) if had or alerts else FAILED


def _refuse_claim(session: Session, model: str, model_id: int, as_of: dt.date) -> None:
    """Raise why (model, as_of) could not be claimed: succeeded already, or held."""
    row = session.execute(
        select(m.Run.id, m.Run.status, m.Run.owner, m.Run.finished_at).where(
            m.Run.model_id == model_id, m.Run.as_of == as_of
        )
    ).one()
    if row.status == "succeeded":
        finished = _utc(row.finished_at)
        when = f" at {finished:%Y-%m-%d %H:%M} UTC" if finished else ""
        raise RunAlreadySucceeded(
            f"model {model!r} as of {as_of} succeeded already (run {row.id}{when}): "
            f"not computed again (--force recomputes it)",
            row.id,
        )
    raise RunInProgressError(
        f"model {model!r} as of {as_of} is being computed by {row.owner} right now"
    )


class Runs(StoreSession):
    """Claims, heartbeats, completion and failure of runs."""

    def claim_run(
        self,
        model: str,
        as_of: dt.date,
        *,
        score_direction: str,
        config_hash: str,
        owner: str | None = None,
        plan: dict[str, Any] | None = None,
        stale_after: dt.timedelta = DEFAULT_STALE_AFTER,
        force: bool = False,
    ) -> int:
        """Mark (model, as_of) as running by this process and return the run's id.

        Raises RunInProgressError when another process holds a live claim on it, and
        RunAlreadySucceeded when the date has succeeded already (unless ``force``): the claim
        is what makes a date computed once however many processes plan it. A claim whose
        heartbeat is older than ``stale_after`` belonged to a killed process and is taken over;
        a failed date is taken again.
        """
        model_id = self.ensure_model(model, score_direction)
        owner = owner or default_owner()
        now = m.utcnow()
        claim = {
            "status": "running",
            "owner": owner,
            "started_at": now,
            "heartbeat_at": now,
            "error": None,
            "riskmon_version": __version__,
            "config_hash": config_hash,
        }
        try:
            with self._session() as session:
                # a new run shows what it set out to measure; a re-run keeps the plan of the
                # results it may replace until it stores its own
                first = claim | {"plan": null() if plan is None else plan}
                run = m.Run(model_id=model_id, as_of=as_of, **first)
                session.add(run)
                session.flush()
                return run.id
        except StoreConflict:
            pass  # the date has a run already: take it over unless it is live
        with self._session() as session:
            holder = session.scalar(
                select(m.Run.owner).where(m.Run.model_id == model_id, m.Run.as_of == as_of)
            )
            running = m.Run.status == "running"
            takeable = (m.Run.status == "failed") | (
                running & (m.Run.heartbeat_at < now - stale_after)
            )
            if force:
                takeable = takeable | (m.Run.status == "succeeded")
            if holder is not None and owner_is_dead(holder):  # killed here: no need to wait
                takeable = takeable | (running & (m.Run.owner == holder))
            taken = session.execute(
                update(m.Run)
                .where(m.Run.model_id == model_id, m.Run.as_of == as_of, takeable)
                .values(**claim)
            )
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                _refuse_claim(session, model, model_id, as_of)
            return session.execute(
                select(m.Run.id).where(m.Run.model_id == model_id, m.Run.as_of == as_of)
            ).scalar_one()

    def heartbeat(self, run_id: int, *, owner: str | None = None) -> None:
        """Tell other processes this run's owner is alive."""
        with self._session() as session:
            session.execute(
                update(m.Run).where(*_held(run_id, owner)).values(heartbeat_at=m.utcnow())
            )

    def complete_run(
        self,
        run_id: int,
        *,
        counts: RunCounts,
        figures: Sequence[FigureRecord],
        bins: Iterable[BinRecord] = (),
        alerts: Iterable[AlertRecord] = (),
        baseline_id: int | None = None,
        plan: dict[str, Any] | None = None,
        owner: str | None = None,
        notify: Sequence[str] | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Store everything a run computed, in one transaction, replacing earlier results.

        ``plan`` is what the run measured as it planned it (windows, columns), kept as JSON.
        With ``owner``, nothing is written (RunInProgressError) unless that process still holds
        the run: a process that stalled and was taken over cannot overwrite the new results.
        ``notify`` names the channels due to hear of the run: their deliveries are queued
        ``pending`` in the same transaction (the outbox), so that a process killed before it
        sent them leaves them for the next one (see :meth:`Deliveries.queue_deliveries`).
        """
        alerts = list(alerts)
        with self._session() as session:
            _take_finish(session, run_id, owner)
            before = _clear_results(session, run_id)
            insert_records(session, m.Figure, figures, run_id=run_id)
            insert_records(session, m.BinStat, bins, run_id=run_id)
            state = "pending" if notify else "not_needed"
            insert_rows(
                session,
                m.Alert,
                (
                    record_row(a)
                    | {"status": str(a.status), "run_id": run_id, "notify_state": state}
                    for a in alerts
                ),
            )
            if notify is not None:
                after = Status.worst(a.status for a in alerts)
                queue_deliveries(session, run_id, notify, renew=before != after)
            session.execute(
                update(m.Run)
                .where(m.Run.id == run_id)
                .values(
                    status="succeeded",
                    finished_at=m.utcnow(),
                    error=None,
                    baseline_id=baseline_id,
                    plan=null() if plan is None else plan,  # SQL NULL, not JSON null
                    provenance=null() if provenance is None else provenance,
                    n_current=counts.n_current,
                    n_matured=counts.n_matured,
                    n_unmatured=counts.n_unmatured,
                )
            )

    def fail_run(
        self,
        run_id: int,
        error: str,
        *,
        owner: str | None = None,
        plan: dict[str, Any] | None = None,
        notify: Sequence[str] | None = None,
    ) -> None:
        """Record that an attempt at a run failed, with its (password-masked) error.

        ``notify`` names the channels due to hear of the failure, queued as in
        :meth:`complete_run` (not when earlier results are kept: the run did not change).

        A first attempt is stored as failed, with no figures, and with its ``plan`` (what it
        set out to measure) when given. A failed *re-run* of a date that
        had succeeded keeps the earlier results — a passing outage must not erase a month of
        history — and says in the run's error that a re-run failed and when.
        """
        with self._session() as session:
            _take_finish(session, run_id, owner)
            earlier = session.scalar(
                select(func.count()).select_from(m.Figure).where(m.Figure.run_id == run_id)
            )
            now = m.utcnow()
            if earlier:
                finished = session.scalar(select(m.Run.finished_at).where(m.Run.id == run_id))
                kept = f" finished {_utc(finished):%Y-%m-%d %H:%M} UTC" if finished else ""
                note = (
                    f"a re-run at {now:%Y-%m-%d %H:%M} UTC failed and was discarded; the results "
                    f"are those of the earlier run{kept}. The re-run's error: {error}"
                )
                values: dict[str, Any] = {"status": "succeeded", "error": stored_error(note)}
            else:
                values = {
                    "status": "failed",
                    "finished_at": now,
                    "error": stored_error(error),
                    "n_current": None,
                    "n_matured": None,
                    "n_unmatured": None,
                    "baseline_id": None,
                    "plan": null() if plan is None else plan,
                }
            session.execute(update(m.Run).where(m.Run.id == run_id).values(**values))
            if notify is not None and not earlier:  # a delivery it has was about a failure
                queue_deliveries(session, run_id, notify, renew=False)
