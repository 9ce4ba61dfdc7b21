"""Notify: tell people about a finished run — a log line always, webhooks and e-mail by policy.

:func:`notify_run` is called once a run has been stored (succeeded or failed). It logs the run
on the ``riskmon.notify`` logger (WARNING for a RED or failed run, INFO otherwise), re-sends the
notifications of the model's earlier runs that could not be delivered, then notifies each
channel of ``models[].notify`` that its ``notify_on`` selects:

- a **webhook** gets a JSON POST whose ``text`` renders in Slack and whose ``riskmon`` object
  holds the model, as-of date, status and every alert;
- an **e-mail** address gets ``[riskmon] <model> <as-of>: <status>`` with a plain-text body and
  the HTML report attached when it is small enough (else linked under ``store.reports_url``).

A run's deliveries are queued in the store with the run itself (an outbox), then sent: a
process killed in between leaves them pending, and the next process — the model's next run,
``riskmon schedule`` as it starts, ``riskmon notify --pending`` — sends them; each is taken before
it is sent, so that it goes out once however many processes share the store. A channel that is
down never fails the run: the attempt is recorded in the store and retried later. Nor does a
slow one hold it up: each delivery has a total deadline, and all of a run's deliveries
(retries included) share one (``notifications`` in the configuration).
Channels are named by keys that hold no secret (``webhook:<digest>``, ``email:<address>``).
"""

from riskmon.notify._deadline import Deadline, DeliveryTimeout
from riskmon.notify._delivery import MAX_ERROR_CHARS, DeliveryAttempt, DeliveryError
from riskmon.notify._dispatch import due_channels, notify_run
from riskmon.notify._outbox import MAX_DELIVERY_ATTEMPTS, send_pending
from riskmon.notify._policy import channel_key, should_notify
from riskmon.notify._webhook import WEBHOOK_TIMEOUT_SECONDS
from riskmon.records import FAILED

__all__ = [
    "FAILED",
    "MAX_DELIVERY_ATTEMPTS",
    "MAX_ERROR_CHARS",
    "WEBHOOK_TIMEOUT_SECONDS",
    "Deadline",
    "DeliveryAttempt",
    "DeliveryError",
    "DeliveryTimeout",
    "channel_key",
    "due_channels",
    "notify_run",
    "send_pending",
    "should_notify",
]
