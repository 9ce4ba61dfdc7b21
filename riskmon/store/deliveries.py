"""Notifications in the metric store: each delivery of a run to a channel, and the
notification state of the run's alerts."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from riskmon.redact import redact
from riskmon.store import models as m
from riskmon.store._session import StoreSession, _utc
from riskmon.store.records import DeliveryRecord


class Deliveries(StoreSession):
    """Records notification attempts and reads them back."""

    def record_delivery(self, run_id: int, channel: str, *, error: str | None) -> None:
        """Record one attempt to notify ``channel`` of a run: sent, or failed with ``error``."""
        now = m.utcnow()
        state = "failed" if error else "sent"
        values: dict[str, Any] = {
            "state": state,
            "last_error": redact(error) if error else None,
            "last_attempt_at": now,
            "sent_at": None if error else now,
        }
        with self._session() as session:
            existing = session.scalar(
                select(m.Delivery).where(m.Delivery.run_id == run_id, m.Delivery.channel == channel)
            )
            if existing is None:
                session.add(m.Delivery(run_id=run_id, channel=channel, attempts=1, **values))
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
        query = (
            select(m.Delivery)
            .join(m.Run, m.Run.id == m.Delivery.run_id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Model.name == model, m.Delivery.state == "failed")
            .order_by(m.Run.as_of, m.Delivery.id)
        )
        with self._session() as session:
            return [self._delivery(d) for d in session.scalars(query)]

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
            "notify_error": redact(error) if error else None,
        }
        if state in ("sent", "failed"):
            values["notify_attempts"] = m.Alert.notify_attempts + 1
        if state == "sent":
            values["notified_at"] = m.utcnow()
        with self._session() as session:
            session.execute(update(m.Alert).where(m.Alert.run_id == run_id).values(**values))
