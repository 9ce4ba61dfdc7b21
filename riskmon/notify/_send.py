"""Sending one delivery: within its deadlines, recorded in the store, logged; never raising.

Every delivery has a total deadline (``notifications.delivery_timeout_seconds``), and all of
the deliveries one process sends for a run, retries included, share one
(``notifications.run_timeout_seconds``): a :class:`Phase`. A channel that misses its deadline is
not tried again within the same phase; what is not attempted is recorded as failed, and sent
again later.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from urllib.parse import quote

from sqlalchemy.exc import SQLAlchemyError

from riskmon.config import NotifyChannel, RiskmonConfig
from riskmon.errors import RiskmonError
from riskmon.notify._deadline import Deadline, DeliveryTimeout
from riskmon.notify._delivery import DeliveryAttempt, DeliveryError, bounded_error
from riskmon.notify._email import build_email, send_email
from riskmon.notify._message import Notice, webhook_payload
from riskmon.notify._policy import channel_key
from riskmon.notify._webhook import post_json, scrub_url
from riskmon.redact import redact
from riskmon.store import MetricStore

log = logging.getLogger("riskmon.notify")

#: what a store that is down or refuses a write raises (an integrity error is not wrapped)
STORE_ERRORS = (RiskmonError, SQLAlchemyError)
#: beyond a phase's deadline, how long a delivery ``sending`` may stay so before it is taken to
#: belong to a process killed mid-send (and taken again)
SENDING_MARGIN = dt.timedelta(seconds=5)


class Phase:
    """One run's notifications: their shared deadline, and the channels that missed theirs."""

    def __init__(self, config: RiskmonConfig) -> None:
        self.settings = config.notifications
        self.deadline = Deadline(self.settings.run_timeout_seconds)
        self.missed: set[str] = set()

    @property
    def sending_stale_after(self) -> dt.timedelta:
        """How long a delivery stays taken before another process may take it again."""
        return dt.timedelta(seconds=self.settings.run_timeout_seconds) + SENDING_MARGIN

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


def report_url(config: RiskmonConfig, report_path: Path | None) -> str | None:
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


def deliver(
    config: RiskmonConfig,
    store: MetricStore,
    phase: Phase,
    channel: NotifyChannel,
    notice: Notice,
    report: Path | None,
    *,
    taken: bool = False,
) -> DeliveryAttempt:
    """Send ``notice`` to ``channel`` within ``phase``'s deadlines, record the attempt (as one
    of a delivery this process ``taken`` from the outbox), and log it; never raises."""
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
            store.record_delivery(notice.run_id, key, error=error, taken=taken)
        except STORE_ERRORS as exc:
            log.error("could not record the notification of %s: %s", what, bounded_error(str(exc)))
    return DeliveryAttempt(notice.model, notice.as_of, notice.run_id, key, notice.late, error)
