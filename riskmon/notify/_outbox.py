"""Sending what the outbox owes: the deliveries queued with a run and not sent yet.

A run's deliveries are queued in the transaction that stores it (see
:mod:`riskmon.store.deliveries`). Whoever comes next sends them: the process that stored the run,
right after its report is written; or, if that process was killed, stopped or lost its
channel, the model's next run (marked late), ``riskmon schedule`` when it starts, or
``riskmon notify --pending``. Each delivery is taken before it is sent, so two processes never
both send it.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path

from riskmon.config import ModelConfig, NotifyChannel, RiskmonConfig
from riskmon.notify._delivery import DeliveryAttempt, bounded_error
from riskmon.notify._message import AlertLine, Notice
from riskmon.notify._policy import channel_key
from riskmon.notify._send import STORE_ERRORS, Phase, deliver, report_url
from riskmon.records import Status
from riskmon.report_files import report_path as run_report_path
from riskmon.store import DeliveryRecord, MetricStore, RunRecord, default_owner, owner_is_dead

log = logging.getLogger("riskmon.notify")

#: a delivery that failed this many times is not retried any more (it stays failed in the store)
MAX_DELIVERY_ATTEMPTS = 10


def send_one(
    config: RiskmonConfig,
    store: MetricStore,
    phase: Phase,
    channel: NotifyChannel,
    notice: Notice,
    report: Path | None,
) -> DeliveryAttempt | None:
    """Take the delivery of ``notice`` to ``channel`` and send it; None when another process
    took it first (or it was sent meanwhile). A store that cannot be read does not keep the
    message from going: better twice than never."""
    key = channel_key(channel)
    taken = False
    if notice.run_id is not None:
        try:
            if not store.take_delivery(notice.run_id, key, stale_after=phase.sending_stale_after):
                log.info("%s to %s: sent or being sent by another process", notice.headline, key)
                return None
            taken = True
        except STORE_ERRORS as exc:
            log.error(
                "cannot take the notification of %s to %s from the outbox, sending it all the "
                "same: %s",
                notice.headline,
                key,
                bounded_error(str(exc)),
            )
    return deliver(config, store, phase, channel, notice, report, taken=taken)


def _stored_report(config: RiskmonConfig, run: RunRecord) -> Path | None:
    """The report the report step wrote for ``run``, if it is on disk."""
    path = run_report_path(config.store.reports_dir, run.model, run.as_of)
    return path if path.is_file() else None


def _stored_notice(config: RiskmonConfig, store: MetricStore, run: RunRecord) -> Notice:
    alerts = tuple(AlertLine.of(a) for a in store.alerts(run.id))
    return Notice(
        model=run.model,
        as_of=run.as_of,
        status=run.status,
        alert_status=Status.worst(a.status for a in alerts),
        alerts=alerts,
        run_id=run.id,
        error=run.error,
        report_url=report_url(config, _stored_report(config, run)),
        late=True,
    )


def _left(delivery: DeliveryRecord, run: RunRecord | None, phase: Phase) -> bool:
    """Whether a delivery is owed by whoever comes: not one just queued by a process that is
    alive and about to send it itself (its message would go out marked late, perhaps before
    its report is written)."""
    if delivery.state != "pending" or run is None or run.owner is None:
        return True
    queued = dt.datetime.now(dt.timezone.utc) - delivery.last_attempt_at
    return (
        queued > phase.sending_stale_after
        or run.owner == default_owner()
        or owner_is_dead(run.owner)
    )


def _owed(
    store: MetricStore, model: ModelConfig, phase: Phase, skip_run: int | None
) -> tuple[list[DeliveryRecord], dict[int, RunRecord]] | None:
    try:
        owed = [
            d
            for d in store.owed_deliveries(model.name)
            if d.run_id != skip_run and d.attempts < MAX_DELIVERY_ATTEMPTS
        ]
        runs = {r.id: r for r in store.runs(model.name, details=False)} if owed else {}
        owed = [d for d in owed if _left(d, runs.get(d.run_id), phase)]
    except STORE_ERRORS as exc:
        log.error(
            "%s: cannot read failed notifications to retry: %s", model.name, bounded_error(str(exc))
        )
        return None
    return owed, runs


def send_owed(
    config: RiskmonConfig,
    model: ModelConfig,
    store: MetricStore,
    phase: Phase,
    *,
    skip_run: int | None = None,
) -> list[DeliveryAttempt]:
    """Send the deliveries of ``model``'s runs (not ``skip_run``'s) that are owed: queued and
    not sent (by a process that died, or long enough ago that its process is not sending it),
    failed (fewer than :data:`MAX_DELIVERY_ATTEMPTS` times), or left ``sending`` by a process
    killed mid-send. Each goes out marked late."""
    found = _owed(store, model, phase, skip_run)
    if found is None:
        return []
    owed, runs = found
    channels = {channel_key(c): c for c in model.notify}
    attempts: list[DeliveryAttempt] = []
    notices: dict[int, Notice] = {}
    for delivery in owed:
        run = runs.get(delivery.run_id)
        channel = channels.get(delivery.channel)
        if run is None or run.status not in ("succeeded", "failed"):
            continue  # deleted, or being computed again right now: its own run notifies
        if channel is None:
            log.info(
                "%s as of %s: %s is no longer configured; its failed notification is not retried",
                run.model,
                run.as_of.isoformat(),
                delivery.channel,
            )
            continue
        try:
            notice = notices.get(run.id) or _stored_notice(config, store, run)
        except STORE_ERRORS as exc:
            log.error(
                "%s: cannot rebuild the notification of run %s: %s",
                model.name,
                run.id,
                bounded_error(str(exc)),
            )
            continue
        notices[run.id] = notice
        attempt = send_one(config, store, phase, channel, notice, _stored_report(config, run))
        if attempt is None:
            continue
        attempts.append(attempt)
        if not attempt.ok and delivery.attempts + 1 >= MAX_DELIVERY_ATTEMPTS:
            log.warning(
                "giving up on notifying %s to %s after %d attempts",
                notice.headline,
                delivery.channel,
                MAX_DELIVERY_ATTEMPTS,
            )
    for run_id in notices:
        refresh_alert_state(store, run_id, ())
    return attempts


def send_pending(config: RiskmonConfig, store: MetricStore) -> list[DeliveryAttempt]:
    """Send every configured model's owed deliveries (``riskmon notify --pending``, and
    ``riskmon schedule`` when it starts): what processes killed or stopped before they sent
    their runs' notifications left in the outbox. A store that cannot be read raises."""
    owing = set(store.owing_models())
    attempts: list[DeliveryAttempt] = []
    for model in config.models:
        if model.name in owing:
            attempts += send_owed(config, model, store, Phase(config))
    return attempts


def refresh_alert_state(
    store: MetricStore, run_id: int, attempts: Sequence[DeliveryAttempt]
) -> None:
    """Set the notification state of a run's alerts from its deliveries in the store: sent
    when every one was sent, failed (with the errors) when one failed, pending while one is
    owed, not needed when it has none. ``attempts`` decide it when the store cannot be read."""
    try:
        deliveries = store.deliveries(run_id)
    except STORE_ERRORS as exc:
        log.error("could not read the notifications of run %s: %s", run_id, bounded_error(str(exc)))
        now = dt.datetime.now(dt.timezone.utc)
        deliveries = [
            DeliveryRecord(
                run_id, a.channel, "failed" if a.error else "sent", 1, a.error, now, None
            )
            for a in attempts
        ]
    failed = [d for d in deliveries if d.state == "failed"]
    if not deliveries:
        state, error = "not_needed", None
    elif failed:
        state = "failed"
        error = bounded_error("; ".join(f"{d.channel}: {d.last_error}" for d in failed))
    elif any(d.state != "sent" for d in deliveries):
        state, error = "pending", None
    else:
        state, error = "sent", None
    try:
        store.set_notify_state(run_id, state, error=error)
    except STORE_ERRORS as exc:
        log.error(
            "could not record the notification state of run %s: %s", run_id, bounded_error(str(exc))
        )
