"""Keep database passwords out of every message, log line and report.

Two layers: URLs that riskmon itself prints go through :func:`mask_url`; any other text that may
quote a URL or a DSN (driver error messages, tracebacks) goes through :func:`redact`, which the
CLI applies to every error it prints and :class:`RedactingFilter` applies to every log record.
"""

from __future__ import annotations

import logging
import re

MASK = "***"

# scheme://user:password@host -> scheme://user:***@host; the scheme is optional so that
# malformed URLs (scheme typos, a missing "//") are masked too
_URL_PASSWORD = re.compile(
    r"(?P<head>(?:[A-Za-z][A-Za-z0-9+.\-]*:?//)?[^\s:/@'\"]+:)(?P<secret>[^\s@/'\"]+)@"
)
# password=secret / pwd='secret' in DSNs and driver messages
_DSN_PASSWORD = re.compile(
    r"(?P<head>\b(?:password|passwd|pwd)\s*=\s*)(?P<secret>'[^']*'|\"[^\"]*\"|[^\s;,&]+)",
    re.IGNORECASE,
)


def mask_url(url: object) -> str:
    """The URL with its password replaced by ``***`` (the text itself if it is no URL)."""
    # SQLAlchemy is imported here: logging and the CLI's error path use this module at start-up
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    text = str(url)
    try:
        parsed = make_url(text)
    except (ArgumentError, ValueError):
        return redact(text)
    if parsed.password is None:
        return redact(text)
    return parsed.render_as_string(hide_password=True)


def redact(text: str) -> str:
    """``text`` with every password in a URL or a ``password=...`` pair masked."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@", text)
    return _DSN_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", text)


class RedactingFilter(logging.Filter):
    """A logging filter that masks passwords in the formatted message of every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
