"""Notify the channels of a finished run, after re-sending what earlier runs failed to deliver.

Nothing here fails a run: a channel that is down is recorded in the store (``deliveries``, and
the run's alerts' notification state) and logged, and sent again at the start of the model's
next notification.

Nor does anything here hold a run up for long: every delivery has a total deadline
(``notifications.delivery_timeout_seconds``), and all of a run's deliveries, retries
included, share one (``notifications.run_timeout_seconds``). A channel that misses its
deadline is not tried again within the same run's notifications; what is not attempted is
recorded as failed, and sent again after the model's next run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from sqlalchemy.exc import SQLAlchemyError

from riskmon.config import ModelConfig, NotifyChannel, RiskmonConfig
from riskmon.errors import RiskmonError
from riskmon.notify._deadline import Deadline, DeliveryTimeout
from riskmon.notify._delivery import DeliveryAttempt, DeliveryError, bounded_error
from riskmon.notify._email import build_email, send_email
from riskmon.notify._message import AlertLine, Notice, webhook_payload
from riskmon.notify._policy import channel_key, previous_state, should_notify
from riskmon.notify._webhook import post_json, scrub_url
from riskmon.outcome import RunOutcome
from riskmon.records import Status
from riskmon.redact import redact
from riskmon.report import report_path as run_report_path
from riskmon.store import MetricStore, RunRecord

log = logging.getLogger("riskmon.notify")

#: what a store that is down or refuses a write raises (an integrity error is not wrapped)
STORE_ERRORS = (RiskmonError, SQLAlchemyError)
#: a delivery that failed this many times is not retried any more (it stays failed in the store)
MAX_DELIVERY_ATTEMPTS = 10
#: the previous state when the store cannot tell it: differs from every state, so
#: ``change`` channels hear about the run rather than miss it
_UNKNOWN = "UNKNOWN"


class _Phase:
    """One run's notifications: their shared deadline, and the channels that missed theirs."""

    def __init__(self, config: RiskmonConfig) -> None:
        self.settings = config.notifications
        self.deadline = Deadline(self.settings.run_timeout_seconds)
        self.missed: set[str] = set()

    def delivery(self, key: str) -> Deadline:
        """The deadline of one delivery to ``key``; DeliveryTimeout if it is not to start."""
        if key in self.missed:
            raise DeliveryTimeout(
                "not attempted: this channel missed its deadline earlier in this run's "
                "notifications"
            )
        if self.deadline.passed:
            raise DeliveryTimeout(
                f"not attempted: this run's {self.settings.run_timeout_seconds:g} s for "
                f"notifications (notifications.run_timeout_seconds) were spent"
            )
        return Deadline(self.settings.delivery_timeout_seconds, within=self.deadline)


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
        report_url=_report_url(config, report_path),
    )
    _log_outcome(notice)
    if outcome.status == "skipped":
        return []
    phase = _Phase(config)
    attempts = _retry_failed(config, model, store, phase, skip_run=outcome.run_id)
    due = _due_channels(model, store, notice)
    current = [_deliver(config, store, phase, channel, notice, report_path) for channel in due]
    if outcome.run_id is not None and outcome.status == "succeeded":
        _set_alert_state(store, outcome.run_id, current)
    return attempts + current


def _log_outcome(notice: Notice) -> None:
    where = f"{notice.model} as of {notice.as_of.isoformat()}"
    if notice.status == "skipped":
        log.info("%s: skipped, another process holds the run; nobody notified", where)
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


def _report_url(config: RiskmonConfig, report_path: Path | None) -> str | None:
    """Where the report is served: ``store.reports_url`` plus its path under ``reports_dir``."""
    base = config.store.reports_url
    if not base:
        return None
    base = redact(base)
    if report_path is None:
        return base
    try:
        relative = report_path.resolve().relative_to(config.store.reports_dir.resolve())
    except ValueError:  # written somewhere else: served by name, as the report step does
        relative = Path(report_path.name)
    return f"{base.rstrip('/')}/{quote(relative.as_posix())}"


def _unique(channels: Iterable[NotifyChannel]) -> list[NotifyChannel]:
    seen: dict[str, NotifyChannel] = {}
    for channel in channels:
        seen.setdefault(channel_key(channel), channel)
    return list(seen.values())


def _due_channels(model: ModelConfig, store: MetricStore, notice: Notice) -> list[NotifyChannel]:
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


def _send(
    config: RiskmonConfig,
    channel: NotifyChannel,
    notice: Notice,
    report: Path | None,
    deadline: Deadline,
) -> None:
    if channel.webhook is not None:
        post_json(channel.webhook, webhook_payload(notice), deadline=deadline)
        return
    assert channel.email is not None
    message = build_email(
        notice,
        to=channel.email,
        sender=config.smtp.sender,
        report=report,
        max_attachment_bytes=config.smtp.max_attachment_bytes,
    )
    send_email(config.smtp, message, deadline=deadline)


def _deliver(
    config: RiskmonConfig,
    store: MetricStore,
    phase: _Phase,
    channel: NotifyChannel,
    notice: Notice,
    report: Path | None,
) -> DeliveryAttempt:
    """Send ``notice`` to ``channel`` within ``phase``'s deadlines, record the attempt, and
    log it; never raises."""
    key = channel_key(channel)
    error: str | None = None
    try:
        _send(config, channel, notice, report, phase.delivery(key))
    except DeliveryTimeout as exc:
        phase.missed.add(key)
        error = str(exc)
    except DeliveryError as exc:
        error = str(exc)
    except Exception as exc:  # a bug in one channel must not cost the others their message
        # no traceback in the log: it would quote the exception unscrubbed
        text = f"unexpected {type(exc).__name__}: {exc}"
        error = scrub_url(text, channel.webhook) if channel.webhook else bounded_error(text)
    what = f"{notice.headline}{' (late)' if notice.late else ''} to {key}"
    if error is None:
        log.info("notified %s", what)
    else:
        log.warning("could not notify %s: %s", what, error)
    if notice.run_id is not None:
        try:
            store.record_delivery(notice.run_id, key, error=error)
        except STORE_ERRORS as exc:
            log.error("could not record the notification of %s: %s", what, bounded_error(str(exc)))
    return DeliveryAttempt(notice.model, notice.as_of, notice.run_id, key, notice.late, error)


def _set_alert_state(store: MetricStore, run_id: int, attempts: list[DeliveryAttempt]) -> None:
    failed = [a for a in attempts if not a.ok]
    if not attempts:
        state, error = "not_needed", None
    elif failed:
        state = "failed"
        error = bounded_error("; ".join(f"{a.channel}: {a.error}" for a in failed))
    else:
        state, error = "sent", None
    try:
        store.set_notify_state(run_id, state, error=error)
    except STORE_ERRORS as exc:
        log.error(
            "could not record the notification state of run %s: %s", run_id, bounded_error(str(exc))
        )


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
        report_url=_report_url(config, _stored_report(config, run)),
        late=True,
    )


def _retry_failed(
    config: RiskmonConfig,
    model: ModelConfig,
    store: MetricStore,
    phase: _Phase,
    *,
    skip_run: int | None,
) -> list[DeliveryAttempt]:
    """Send again the failed deliveries of ``model``'s earlier runs (not of ``skip_run``)."""
    try:
        failed = [
            d
            for d in store.failed_deliveries(model.name)
            if d.run_id != skip_run and d.attempts < MAX_DELIVERY_ATTEMPTS
        ]
        runs = {r.id: r for r in store.runs(model.name)} if failed else {}
    except STORE_ERRORS as exc:
        log.error(
            "%s: cannot read failed notifications to retry: %s", model.name, bounded_error(str(exc))
        )
        return []
    channels = {channel_key(c): c for c in model.notify}
    attempts: list[DeliveryAttempt] = []
    notices: dict[int, Notice] = {}
    for delivery in failed:
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
        attempt = _deliver(config, store, phase, channel, notice, _stored_report(config, run))
        attempts.append(attempt)
        if not attempt.ok and delivery.attempts + 1 >= MAX_DELIVERY_ATTEMPTS:
            log.warning(
                "giving up on notifying %s to %s after %d attempts",
                notice.headline,
                delivery.channel,
                MAX_DELIVERY_ATTEMPTS,
            )
    for run_id, notice in notices.items():
        if notice.status == "succeeded":
            _refresh_alert_state(store, run_id)
    return attempts


def _refresh_alert_state(store: MetricStore, run_id: int) -> None:
    try:
        pending = [d for d in store.deliveries(run_id) if d.state == "failed"]
    except STORE_ERRORS as exc:
        log.error("could not read the notifications of run %s: %s", run_id, bounded_error(str(exc)))
        return
    if pending:
        error = "; ".join(f"{d.channel}: {d.last_error}" for d in pending)
        store_state, store_error = "failed", bounded_error(error)
    else:
        store_state, store_error = "sent", None
    try:
        store.set_notify_state(run_id, store_state, error=store_error)
    except STORE_ERRORS as exc:
        log.error(
            "could not record the notification state of run %s: %s", run_id, bounded_error(str(exc))
        )
