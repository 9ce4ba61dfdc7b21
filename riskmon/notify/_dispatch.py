"""Notify the channels of a finished run, after sending what earlier runs still owe.

Nothing here fails a run: a channel that is down is recorded in the store (``deliveries``, and
the run's alerts' notification state) and logged, and sent again later (see
:mod:`riskmon.notify._outbox`).

Nor does anything here hold a run up for long: every delivery has a total deadline
(``notifications.delivery_timeout_seconds``), and all of a run's deliveries, retries
included, share one (``notifications.run_timeout_seconds``); see :mod:`riskmon.notify._send`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from pathlib import Path

from riskmon.config import ModelConfig, NotifyChannel, RiskmonConfig
from riskmon.notify._delivery import DeliveryAttempt, bounded_error
from riskmon.notify._message import AlertLine, Notice
from riskmon.notify._outbox import refresh_alert_state, send_one, send_owed
from riskmon.notify._policy import channel_key, previous_state, should_notify
from riskmon.notify._send import STORE_ERRORS, Phase, report_url
from riskmon.outcome import RunOutcome
from riskmon.records import FAILED, Status
from riskmon.redact import redact
from riskmon.store import MetricStore

log = logging.getLogger("riskmon.notify")

#: the previous state when the store cannot tell it: differs from every state, so
#: ``change`` channels hear about the run rather than miss it
_UNKNOWN = "UNKNOWN"


def notify_run(
    config: RiskmonConfig,
    model: ModelConfig,
    outcome: RunOutcome,
    store: MetricStore,
    *,
    report_path: Path | None = None,
) -> list[DeliveryAttempt]:
    """Log a finished run and notify the model's channels that its ``notify_on`` selects.

    First re-sends the notifications of ``model``'s earlier runs that could not be delivered
    (marked late), then notifies the channels due for ``outcome`` (see
    :mod:`riskmon.notify._policy` for who hears about what). Every attempt is recorded with
    :meth:`MetricStore.record_delivery`, and the run's alerts get the notification state
    ``sent``, ``failed`` (with the error) or ``not_needed``.

    Parameters
    ----------
    config : RiskmonConfig
        The deployment: SMTP server, ``store.reports_url`` and ``store.reports_dir``.
    model : ModelConfig
        The model the run belongs to; its ``notify`` list names the channels.
    outcome : RunOutcome
        What :func:`riskmon.run.run_model` returned, after the run was stored. A skipped run
        (another process holds it) is logged and notifies nobody.
    store : MetricStore
        The metric store holding the run.
    report_path : Path, optional
        The run's HTML report (else ``outcome.report_path``), attached to e-mails when small
        enough and linked under ``store.reports_url`` when that is set.

    Returns
    -------
    list of DeliveryAttempt
        Every attempt, late ones first; ``attempt.error`` is None for a delivered message.
        Never raises for a channel that is down or a store that cannot be written.
    """
    if report_path is None and outcome.report_path:
        report_path = Path(outcome.report_path)
    notice = Notice(
        model=outcome.model,
        as_of=outcome.as_of,
        status=outcome.status,
        alert_status=outcome.alert_status,
        alerts=tuple(AlertLine.of(a) for a in outcome.alerts),
        run_id=outcome.run_id,
        error=outcome.error,
        report_url=report_url(config, report_path),
    )
    _log_outcome(notice)
    if outcome.status not in ("succeeded", "failed"):
        return []
    phase = Phase(config)
    attempts = send_owed(config, model, store, phase, skip_run=outcome.run_id)
    current = [
        attempt
        for channel in _owed_by(model, store, notice)
        if (attempt := send_one(config, store, phase, channel, notice, report_path)) is not None
    ]
    if outcome.run_id is not None and outcome.status == "succeeded":
        refresh_alert_state(store, outcome.run_id, current)
    return attempts + current


def _owed_by(model: ModelConfig, store: MetricStore, notice: Notice) -> list[NotifyChannel]:
    """The channels that are owed ``notice``: those its run queued when it was stored and has
    not sent yet, or, for a run stored without them, those due now (queued first, so that a
    concurrent process sends each once)."""
    channels = {channel_key(c): c for c in _unique(model.notify)}
    if notice.run_id is None:
        return _due(model, store, notice)
    try:
        queued = store.deliveries(notice.run_id)
        stored = store.run_by_id(notice.run_id) if not queued else None
        if stored is not None and stored.status != notice.status:
            # a failed re-run that kept the earlier results: the run did not change
            log.info("%s: the stored run is %s; nobody notified", notice.headline, stored.status)
            return []
        if not queued:
            due = _due(model, store, notice)
            store.queue(notice.run_id, [channel_key(c) for c in due])
            queued = store.deliveries(notice.run_id)
    except STORE_ERRORS as exc:
        log.error(
            "%s: cannot read the notifications of run %s, so they are sent without the outbox: %s",
            notice.headline,
            notice.run_id,
            bounded_error(str(exc)),
        )
        return _due(model, store, notice)
    return [channels[d.channel] for d in queued if d.state != "sent" and d.channel in channels]


def due_channels(model: ModelConfig, store: MetricStore, as_of: dt.date, state: str) -> list[str]:
    """The keys of ``model``'s channels due to hear of its run as of ``as_of`` in ``state``
    (its worst alert status, or ``FAILED``): what the run queues with its results."""
    failed = state == FAILED
    notice = Notice(
        model=model.name,
        as_of=as_of,
        status="failed" if failed else "succeeded",
        alert_status=Status.NOT_EVALUABLE if failed else state,
    )
    return [channel_key(c) for c in _due(model, store, notice)]


def _log_outcome(notice: Notice) -> None:
    where = f"{notice.model} as of {notice.as_of.isoformat()}"
    if notice.status not in ("succeeded", "failed"):
        log.info(
            "%s: %s, not computed here; nobody notified: %s", where, notice.status, notice.error
        )
        return
    if notice.status == "failed":
        log.warning(
            "%s: run %s failed: %s", where, notice.run_id, bounded_error(notice.error or "")
        )
        return
    counts = {
        s: sum(a.status == s for a in notice.alerts)
        for s in (Status.RED, Status.AMBER, Status.NOT_EVALUABLE)
    }
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"
    report = f"; report {redact(notice.report_url)}" if notice.report_url else ""
    level = logging.WARNING if notice.alert_status == Status.RED else logging.INFO
    log.log(
        level,
        "%s: run %s succeeded, %s; %d alerts, not green: %s%s",
        where,
        notice.run_id,
        notice.alert_status,
        len(notice.alerts),
        summary,
        report,
    )


def _unique(channels: Iterable[NotifyChannel]) -> list[NotifyChannel]:
    seen: dict[str, NotifyChannel] = {}
    for channel in channels:
        seen.setdefault(channel_key(channel), channel)
    return list(seen.values())


def _due(model: ModelConfig, store: MetricStore, notice: Notice) -> list[NotifyChannel]:
    channels = _unique(model.notify)
    previous: str | None = _UNKNOWN
    if any(c.notify_on == "change" for c in channels):
        try:
            previous = previous_state(store, notice.model, notice.as_of)
        except STORE_ERRORS as exc:
            log.error(
                "%s as of %s: cannot read the previous run, so 'change' channels are notified: %s",
                notice.model,
                notice.as_of.isoformat(),
                bounded_error(str(exc)),
            )
    due = []
    for channel in channels:
        if should_notify(channel.notify_on, state=notice.state, previous_state=previous):
            due.append(channel)
        else:
            log.debug("%s: not due for %s (%s)", channel_key(channel), notice.headline, previous)
    return due


__all__ = ["due_channels", "notify_run"]
