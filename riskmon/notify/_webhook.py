"""Webhook channel: one JSON POST, a timeout, and any answer other than 2xx is a failure.

The URL is a secret (Slack and Teams put the credential in its path), so it never appears in an
error: messages name the channel by its key, and any echo of the URL in a server's answer is
masked.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from riskmon import __version__
from riskmon.notify._delivery import DeliveryError, bounded_error
from riskmon.redact import MASK

#: seconds a webhook server gets to accept the connection and answer
WEBHOOK_TIMEOUT_SECONDS = 10.0
#: characters of a failing server's answer quoted in the error (Slack says why in its body)
MAX_BODY_CHARS = 200


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # urllib would turn a redirected POST into a GET without its body: a redirect is a failure
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def scrub_url(text: str, url: str) -> str:
    """``text`` without the webhook URL or its path and query (where the token lives)."""
    parts = urlsplit(url)
    for secret in (url, parts.path + (f"?{parts.query}" if parts.query else ""), parts.query):
        if len(secret) > 1:
            text = text.replace(secret, MASK)
    return bounded_error(text)


def post_json(
    url: str, payload: dict[str, Any], *, timeout: float = WEBHOOK_TIMEOUT_SECONDS
) -> None:
    """POST ``payload`` as JSON to ``url``; :class:`DeliveryError` unless it answers 2xx.

    Parameters
    ----------
    url : str
        The webhook, ``http`` or ``https``.
    payload : dict
        A JSON-serialisable body.
    timeout : float
        Seconds for connecting and for each read.
    """
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
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            status = response.status
            answer = response.read(MAX_BODY_CHARS).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        with exc:
            answer = exc.read(MAX_BODY_CHARS).decode("utf-8", "replace")
        raise DeliveryError(scrub_url(f"HTTP {exc.code} {exc.reason}: {answer}", url)) from None
    except urllib.error.URLError as exc:
        raise DeliveryError(scrub_url(f"cannot reach the webhook: {exc.reason}", url)) from None
    except TimeoutError:
        raise DeliveryError(f"no answer from the webhook within {timeout:g} s") from None
    except OSError as exc:
        raise DeliveryError(scrub_url(f"webhook connection failed: {exc}", url)) from None
    if not 200 <= status < 300:
        raise DeliveryError(scrub_url(f"HTTP {status}: {answer}", url))
