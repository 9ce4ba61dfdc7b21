"""Which channels hear about a run: the ``notify_on`` policy, and stable channel keys.

A run has one *state*: its worst alert status (GREEN, AMBER, RED or NOT_EVALUABLE) when it
succeeded, or ``FAILED``. ``notify_on`` picks the channels:

==========  =====================================================================================
``always``  every succeeded or failed run
``amber``   AMBER or RED runs, and failed runs
``red``     RED runs only
``change``  a run whose state differs from the previous finished run's (the latest earlier
            as-of date that succeeded or failed); a model's first run counts as a change
==========  =====================================================================================

A failed run is an operational problem, not a verdict on the model: it goes to the channels
that asked for every run (``always``), for anything that needs a look (``amber``) and, once per
outage, to ``change`` channels; a ``change`` channel also hears when the next run succeeds again.
``red`` channels are kept for model-risk breaches, so a broken database connection does not page
the people who act on a RED model. A skipped run (another process holds it) notifies nobody.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from riskmon.config import NotifyChannel
from riskmon.records import FAILED, Status
from riskmon.store import MetricStore

#: hex digits of the SHA-256 of a webhook URL kept in its channel key
KEY_HEX_DIGITS = 12
#: longest e-mail address kept verbatim in a channel key (the store's column holds 200)
MAX_KEY_ADDRESS = 190


def channel_key(channel: NotifyChannel) -> str:
    """A stable, non-secret name of ``channel`` for delivery records and log lines.

    A webhook URL often carries its credential in the path (Slack's ``/services/T0/B0/token``),
    so only a digest of it is kept: ``webhook:<first 12 hex digits of its SHA-256>``. An e-mail
    channel is ``email:<address>``, lower-cased.

    Examples
    --------
    >>> channel_key(NotifyChannel(email="Risk-Team@example.com"))
    'email:risk-team@example.com'
    >>> channel_key(NotifyChannel(webhook="https://hooks.example.com/T0/secret"))
    'webhook:f4df20849ad2'
    """
    if channel.webhook is not None:
        digest = hashlib.sha256(channel.webhook.encode()).hexdigest()
        return f"webhook:{digest[:KEY_HEX_DIGITS]}"
    assert channel.email is not None
    address = channel.email.strip().lower()
    if len(address) > MAX_KEY_ADDRESS:
        address = hashlib.sha256(address.encode()).hexdigest()[:KEY_HEX_DIGITS]
    return f"email:{address}"


def should_notify(notify_on: str, *, state: str, previous_state: str | None) -> bool:
    """Whether a channel with ``notify_on`` hears about a run in ``state``.

    Parameters
    ----------
    notify_on : {"change", "amber", "red", "always"}
        The channel's policy.
    state : str
        The run's worst alert status, or ``FAILED``.
    previous_state : str or None
        The state of the model's previous finished run; None for its first run.

    Examples
    --------
    >>> should_notify("change", state="GREEN", previous_state="GREEN")
    False
    >>> should_notify("change", state="RED", previous_state="GREEN")
    True
    >>> should_notify("red", state=FAILED, previous_state="RED")
    False
    """
    if notify_on == "always":
        return True
    if notify_on == "amber":
        return state in (Status.AMBER, Status.RED, FAILED)
    if notify_on == "red":
        return state == Status.RED
    if notify_on == "change":
        return state != previous_state
    raise ValueError(f"Expected notify_on in change, amber, red, always, got {notify_on!r}")


def previous_state(store: MetricStore, model: str, as_of: dt.date) -> str | None:
    """The state of ``model``'s latest run before ``as_of`` that succeeded or failed."""
    succeeded = store.latest_run(model, before=as_of, status="succeeded")
    failed = store.latest_run(model, before=as_of, status="failed")
    if failed is not None and (succeeded is None or failed.as_of > succeeded.as_of):
        return FAILED
    if succeeded is None:
        return None
    return Status.worst(a.status for a in store.alerts(succeeded.id))
