"""The result of one attempt to notify one channel, and the errors an attempt can end with."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from riskmon.redact import redact

#: longest error text quoted in a message, a delivery record or a log line
MAX_ERROR_CHARS = 500


class DeliveryError(Exception):
    """A channel did not accept a notification; the message is safe to log and store."""


@dataclass(frozen=True)
class DeliveryAttempt:
    """One notification of one run to one channel, as :func:`notify_run` attempted it."""

    model: str
    as_of: dt.date
    run_id: int | None
    #: the channel's key: ``webhook:<digest>`` or ``email:<address>``
    channel: str
    #: True when this re-sends a notification that failed on an earlier run
    late: bool
    #: None when the channel accepted the message; otherwise why not (password-masked)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def bounded_error(text: str) -> str:
    """``text`` password-masked, on one line, and at most :data:`MAX_ERROR_CHARS` long.

    Examples
    --------
    >>> bounded_error("connect to postgresql://risk:s3cret@db/loans\\nfailed")
    'connect to postgresql://risk:***@db/loans failed'
    """
    flat = " ".join(redact(text).split())
    if len(flat) <= MAX_ERROR_CHARS:
        return flat
    return flat[: MAX_ERROR_CHARS - 1] + "…"
