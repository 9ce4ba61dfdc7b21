"""Webhook channel: one JSON POST within a deadline; any answer other than 2xx is a failure.

The URL is a secret (Slack and Teams put the credential in its path), so it never appears in an
error: messages name the channel by its key, and any echo of the URL in a server's answer is
masked.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from riskmon import __version__
from riskmon.notify._deadline import Deadline, DeliveryTimeout
from riskmon.notify._delivery import DeliveryError, bounded_error
from riskmon.redact import MASK

#: seconds a webhook server gets, in all, to accept the connection and answer
WEBHOOK_TIMEOUT_SECONDS = 10.0
#: characters of a failing server's answer quoted in the error (Slack says why in its body)
MAX_BODY_CHARS = 200


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # urllib would turn a redirected POST into a GET without its body: a redirect is a failure
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _watched(deadline: Deadline) -> list[urllib.request.BaseHandler]:
    """HTTP(S) handlers whose connections the deadline watches (proxies still apply)."""

    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class TLSConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Connection, req)

    class TLSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(TLSConnection, req, context=self._context)  # type: ignore[attr-defined]

    return [Handler(), TLSHandler()]


def scrub_url(text: str, url: str) -> str:
    """``text`` without the webhook URL or its path and query (where the token lives)."""
    parts = urlsplit(url)
    for secret in (url, parts.path + (f"?{parts.query}" if parts.query else ""), parts.query):
        if len(secret) > 1:
            text = text.replace(secret, MASK)
    return bounded_error(text)


def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    timeout: float = WEBHOOK_TIMEOUT_SECONDS,
    deadline: Deadline | None = None,
) -> None:
    """POST ``payload`` as JSON to ``url``; :class:`DeliveryError` unless it answers 2xx.

    Parameters
    ----------
    url : str
        The webhook, ``http`` or ``https``.
    payload : dict
        A JSON-serialisable body.
    timeout : float
        Seconds for the whole delivery: connecting, sending and reading the answer.
    deadline : Deadline, optional
        An earlier end than ``timeout`` (what is left of a run's notification time).
    """
    deadline = Deadline(timeout, within=deadline)
    try:
        with deadline.enforced():
            _post(url, payload, deadline)
    except DeliveryTimeout:
        raise
    except DeliveryError:
        if deadline.fired:
            raise _late(deadline) from None
        raise


def _late(deadline: Deadline) -> DeliveryTimeout:
    return DeliveryTimeout(f"no complete answer from the webhook within {deadline.seconds:.3g} s")


def _post(url: str, payload: dict[str, Any], deadline: Deadline) -> None:
    body = json.dumps(payload, allow_nan=False).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": f"riskmon/{__version__}",
        },
    )
    opener = urllib.request.build_opener(_NoRedirect, *_watched(deadline))
    try:
        with opener.open(request, timeout=deadline.timeout(deadline.seconds)) as response:
            status = response.status
            answer = response.read(MAX_BODY_CHARS).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        with exc:
            answer = exc.read(MAX_BODY_CHARS).decode("utf-8", "replace")
        raise DeliveryError(scrub_url(f"HTTP {exc.code} {exc.reason}: {answer}", url)) from None
    except urllib.error.URLError as exc:
        raise DeliveryError(scrub_url(f"cannot reach the webhook: {exc.reason}", url)) from None
    except TimeoutError:
        raise _late(deadline) from None
    except (OSError, http.client.HTTPException) as exc:
        if deadline.fired:
            raise _late(deadline) from None
        raise DeliveryError(scrub_url(f"webhook connection failed: {exc}", url)) from None
    if deadline.fired:  # what was read may be cut short
        raise _late(deadline)
    if not 200 <= status < 300:
        raise DeliveryError(scrub_url(f"HTTP {status}: {answer}", url))
