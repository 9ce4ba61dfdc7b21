"""Keep secrets out of every message, log line, stored error, report and notification.

Three layers, strongest first:

1. **The configured URL is read by riskmon before anything else parses it.** A password may hold
   any character, unencoded ``@``, ``/``, ``:``, ``#``, ``?`` and spaces included, so
   :func:`split_password` takes it as everything between the user's ``:`` and the *last* ``@``
   of the URL, and :func:`database_url` hands SQLAlchemy the URL with that password set as a
   field (never re-parsed from text). :func:`mask_url` masks exactly that span.
2. **Known secrets are masked wherever they appear.** Every password and token the
   configuration holds is registered (:func:`register_secret`) when the configuration is
   validated, as written, percent-decoded and percent-encoded; :func:`redact` replaces each
   occurrence in any text, whatever surrounds it. Values shorter than :data:`MIN_SECRET_CHARS`
   are not registered: masking every ``ab`` of every message would garble them, and the
   patterns below still apply.
3. **Patterns for text nobody configured**: ``scheme://user:password@host`` (up to the last
   ``@`` before a blank) and ``password=...`` pairs, as drivers and tracebacks quote them. An
   e-mail address (``risk-team@example.com``, ``mailto:risk@example.com``) has no ``//`` before
   it and is left as it is.

The CLI applies :func:`redact` to every error it prints, and :class:`RedactingFilter` to every
log record, its traceback included.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

MASK = "***"
#: shorter secrets are masked by the URL and DSN patterns only, not wherever they appear
MIN_SECRET_CHARS = 4

# //user:password@ in free text; the password runs to the last "@" before a blank or a quote
_URL_PASSWORD = re.compile(r"(?P<head>//[^\s:/@'\"]*:)(?P<secret>[^\s'\"]*)@")
# password=secret / pwd='secret' in DSNs and driver messages
_DSN_PASSWORD = re.compile(
    r"(?P<head>\b(?:password|passwd|pwd)\s*=\s*)(?P<secret>'[^']*'|\"[^\"]*\"|[^\s;,&]+)",
    re.IGNORECASE,
)
# scheme://userinfo@ of a configured URL: the userinfo runs to the last "@" of the URL
_CONFIGURED_USERINFO = re.compile(r"^(?P<scheme>[^:/]*:)?//(?P<userinfo>.*)@", re.DOTALL)

_known: set[str] = set()
_known_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None


def register_secret(value: str | None) -> None:
    """Mask ``value``, its percent-decoded and its percent-encoded forms in every later
    :func:`redact`."""
    if not value:
        return
    forms = (value, unquote(value), quote(unquote(value), safe=""))
    new = {v for v in forms if len(v) >= MIN_SECRET_CHARS} - _known
    if not new:
        return
    global _pattern
    with _known_lock:
        _known.update(new)
        # longest first, so that a secret containing another is masked whole
        ordered = sorted(_known, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(v) for v in ordered))


def split_password(url: str) -> tuple[str, str | None]:
    """``url`` without its password, and the password exactly as written (None if none).

    The password is everything between the first ``:`` of the user information and the last
    ``@`` of the URL, so it may contain any character, unencoded.

    Examples
    --------
    >>> split_password("postgresql+psycopg://risk:p@ss/w:rd?#@db:5432/loans")
    ('postgresql+psycopg://risk@db:5432/loans', 'p@ss/w:rd?#')
    >>> split_password("sqlite:///riskmon.db")
    ('sqlite:///riskmon.db', None)
    """
    match = _CONFIGURED_USERINFO.match(url)
    if match is None:
        return url, None
    user, colon, password = match["userinfo"].partition(":")
    if not colon:
        return url, None
    return f"{match['scheme'] or ''}//{user}@{url[match.end() :]}", password


def mask_url(url: object) -> str:
    """The URL with its password replaced by ``***``, as written otherwise; the password is
    registered as a known secret. Text that is no URL is :func:`redact`-ed."""
    text = str(url)
    match = _CONFIGURED_USERINFO.match(text)
    _, password = split_password(text)
    if match is None or password is None:
        return redact(text)
    register_secret(password)
    user = match["userinfo"].partition(":")[0]
    return redact(f"{match['scheme'] or ''}//{user}:{MASK}@{text[match.end() :]}")


def database_url(url: str) -> URL:
    """The SQLAlchemy URL of a configured one, its password taken by :func:`split_password`
    (percent-escapes in it decoded) and set as a field, never parsed by SQLAlchemy.

    Raises ``ValueError`` (or SQLAlchemy's ``ArgumentError``) for text that is no URL; the
    message holds no password.
    """
    # SQLAlchemy is imported here: logging and the CLI's error path use this module at start-up
    from sqlalchemy.engine import make_url

    rest, password = split_password(url)
    parsed = make_url(rest)
    if password is None:
        return parsed
    register_secret(password)
    # URL.set() treats None as "unchanged"; the URL is a named tuple, so replace the field
    return parsed._replace(password=unquote(password))


def redact(text: str) -> str:
    """``text`` with every known secret, URL password and ``password=...`` value masked."""
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(MASK, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@", text)
    return _DSN_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", text)


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in the message of every record, and in its
    traceback and stack."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
