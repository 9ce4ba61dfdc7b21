"""Notifications in the metric store: the outbox of each run's deliveries to its channels, and
the notification state of the run's alerts.

A delivery is one message about one run to one channel (unique per run and channel). It is
queued ``pending`` in the transaction that stores the run (:func:`queue_deliveries`, called by
:meth:`Runs.complete_run` and :meth:`Runs.fail_run`), so that storing a run and owing its
notifications are one fact: a process killed after the commit leaves them pending, and
whichever process comes next sends them. To send one, a process first takes it
(:meth:`Deliveries.take_delivery`: ``pending`` or ``failed`` → ``sending``, one UPDATE that only
one process can win), then records the attempt (``sent`` or ``failed``). A delivery left
``sending`` by a process killed mid-send is taken again once it is older than the sender's
deadline: the one case where a channel may hear of a run twice (the message may have left
before the kill), never none.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from riskmon.store import models as m
from riskmon.store._session import StoreConflict, StoreSession, _utc, stored_error
from riskmon.store.records import DeliveryRecord

#: the delivery states a process may take a delivery from, to send it
SENDABLE = ("pending", "failed")


def queue_deliveries(
    session: Session, run_id: int, channels: Iterable[str], *, renew: bool = True
) -> None:
    """Queue a ``pending`` delivery of run ``run_id`` to each channel, within ``session``.

    A channel that has a delivery of the run already keeps it as it is, unless ``renew`` (the
    run was computed again and its state changed): then it is owed the new state, pending, and
    an unsent delivery to a channel the new state is not due to is dropped (it would tell that
    channel of a state it did not ask for).
    """
    now = m.utcnow()
    existing = {
        d.channel: d for d in session.scalars(select(m.Delivery).where(m.Delivery.run_id == run_id))
    }
    due = list(dict.fromkeys(channels))
    for channel in due:
        delivery = existing.get(channel)
        if delivery is None:
            session.add(
                m.Delivery(
                    run_id=run_id, channel=channel, state="pending", attempts=0, last_attempt_at=now
                )
            )
        elif renew:
            delivery.state, delivery.attempts, delivery.last_error = "pending", 0, None
            delivery.last_attempt_at, delivery.sent_at = now, None
    if renew:
        for channel, delivery in existing.items():
            if channel not in due and delivery.state != "sent":
                session.delete(delivery)


class Deliveries(StoreSession):
    """The outbox: queues, takes and records deliveries, and reads them back."""

    def queue(self, run_id: int, channels: Iterable[str]) -> None:
        """Queue deliveries of a stored run that has none yet (a run stored without its
        notifications decided); a concurrent queue of the same deliveries is not an error."""
        try:
            with self._session() as session:
                queue_deliveries(session, run_id, channels, renew=False)
                if channels:
                    session.execute(
                        update(m.Alert)
                        .where(m.Alert.run_id == run_id, m.Alert.notify_state == "not_needed")
                        .values(notify_state="pending")
                    )
        except StoreConflict:
            pass  # another process queued them first: they are owed once, not twice

    def take_delivery(self, run_id: int, channel: str, *, stale_after: dt.timedelta) -> bool:
        """Take the delivery of ``run_id`` to ``channel`` for sending; False when another process
        took it first, or it was sent. A delivery ``sending`` for longer than ``stale_after``
        belonged to a process killed mid-send, and is taken again."""
        now = m.utcnow()
        with self._session() as session:
            taken = session.execute(
                update(m.Delivery)
                .where(
                    m.Delivery.run_id == run_id,
                    m.Delivery.channel == channel,
                    or_(
                        m.Delivery.state.in_(SENDABLE),
                        (m.Delivery.state == "sending")
                        & (m.Delivery.last_attempt_at < now - stale_after),
                    ),
                )
                .values(state="sending", last_attempt_at=now)
            )
            return bool(taken.rowcount == 1)  # type: ignore[attr-defined]

    def record_delivery(
        self, run_id: int, channel: str, *, error: str | None, taken: bool = False
    ) -> None:
        """Record one attempt to notify ``channel`` of a run: sent, or failed with ``error``.

        ``taken``: the attempt was of a delivery this process took (:meth:`take_delivery`); it
        is recorded only if the delivery is still taken — a run computed again meanwhile may
        have owed it anew (pending), and that message is still to go.
        """
        now = m.utcnow()
        state = "failed" if error else "sent"
        values: dict[str, Any] = {
            "state": state,
            "last_error": stored_error(error) if error else None,
            "last_attempt_at": now,
            "sent_at": None if error else now,
        }
        with self._session() as session:
            existing = session.scalar(
                select(m.Delivery).where(m.Delivery.run_id == run_id, m.Delivery.channel == channel)
            )
            if existing is None:
                session.add(m.Delivery(run_id=run_id, channel=channel, attempts=1, **values))
            elif taken and existing.state != "sending":
                return
            else:
                for key, value in values.items():
                    setattr(existing, key, value)
                existing.attempts += 1

    def deliveries(self, run_id: int) -> list[DeliveryRecord]:
        """The notifications of a run."""
        query = select(m.Delivery).where(m.Delivery.run_id == run_id).order_by(m.Delivery.id)
        with self._session() as session:
            return [self._delivery(d) for d in session.scalars(query)]

    def failed_deliveries(self, model: str) -> list[DeliveryRecord]:
        """Notifications of ``model``'s runs that failed and have not been sent since."""
        return self.owed_deliveries(model, states=("failed",))

    def owed_deliveries(
        self,
        model: str | None = None,
        *,
        states: Iterable[str] = (*SENDABLE, "sending"),
    ) -> list[DeliveryRecord]:
        """Deliveries not sent yet (of ``model``'s runs, or of every model), oldest run first."""
        query = (
            select(m.Delivery)
            .join(m.Run, m.Run.id == m.Delivery.run_id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Delivery.state.in_(tuple(states)))
            .order_by(m.Model.name, m.Run.as_of, m.Delivery.id)
        )
        if model is not None:
            query = query.where(m.Model.name == model)
        with self._session() as session:
            return [self._delivery(d) for d in session.scalars(query)]

    def owing_models(self) -> list[str]:
        """The models that have deliveries not sent yet."""
        query = (
            select(m.Model.name)
            .join(m.Run, m.Run.model_id == m.Model.id)
            .join(m.Delivery, m.Delivery.run_id == m.Run.id)
            .where(m.Delivery.state != "sent")
            .group_by(m.Model.name)
            .order_by(m.Model.name)
        )
        with self._session() as session:
            return list(session.scalars(query))

    @staticmethod
    def _delivery(d: m.Delivery) -> DeliveryRecord:
        attempted = _utc(d.last_attempt_at)
        assert attempted is not None
        return DeliveryRecord(
            run_id=d.run_id,
            channel=d.channel,
            state=d.state,
            attempts=d.attempts,
            last_error=d.last_error,
            last_attempt_at=attempted,
            sent_at=_utc(d.sent_at),
        )

    def set_notify_state(self, run_id: int, state: str, *, error: str | None = None) -> None:
        """Set the notification state of every alert of a run."""
        values: dict[str, Any] = {
            "notify_state": state,
            "notify_error": stored_error(error) if error else None,
        }
        if state in ("sent", "failed"):
            values["notify_attempts"] = m.Alert.notify_attempts + 1
        if state == "sent":
            values["notified_at"] = m.utcnow()
        with self._session() as session:
            session.execute(update(m.Alert).where(m.Alert.run_id == run_id).values(**values))
