"""How the metric store keeps any text in its columns: NULs escaped (PostgreSQL's text cannot
hold U+0000), and a bounded key for the key columns the unique constraints cover (see
:mod:`riskmon.store.models`)."""

from __future__ import annotations

import hashlib
import re

NAME_LENGTH = 200

#: the most characters a key column (``segment``, ``variable``) holds: the text itself up to it
KEY_LENGTH = NAME_LENGTH
#: hex digits of the SHA-256 of a text that a shortened key ends with (160 bits)
KEY_DIGEST_CHARS = 40
#: what separates a shortened key's prefix from its digest
KEY_MARK = "\u2026#"
#: a key that is a prefix and a digest; a text that looks like one is keyed by its digest too,
#: so no text's own key can be another text's digest key
_DIGEST_KEY = re.compile(f"{KEY_MARK}[0-9a-f]{{{KEY_DIGEST_CHARS}}}\\Z")
#: what starts a text stored escaped: a noncharacter (Unicode keeps them for a program's own
#: use), so that ordinary text is stored as it is
ESCAPED = "\ufdd0"
#: how a NUL is written in an escaped text (whose backslashes are doubled): PostgreSQL's text
#: cannot hold U+0000
NUL_ESCAPE = "\\x00"
_UNESCAPE = re.compile(r"\\(\\|x00)")


def stored_text(value: str) -> str:
    r"""``value`` as the store keeps it: as it is, unless it holds a NUL (or starts with
    :data:`ESCAPED`); then :data:`ESCAPED` and the text, each backslash doubled and each NUL
    written ``\x00``. :func:`read_text` undoes it: every text reads back as it was written.

    >>> stored_text("a\x00b\\c")
    '\ufdd0a\\x00b\\\\c'
    >>> stored_text("channel=web")
    'channel=web'
    """
    if "\x00" not in value and not value.startswith(ESCAPED):
        return value
    return ESCAPED + value.replace("\\", "\\\\").replace("\x00", NUL_ESCAPE)


def read_text(text: str) -> str:
    r"""A text as it was written, from :func:`stored_text`.

    >>> read_text(stored_text("a\x00b\\x00")) == "a\x00b\\x00"
    True
    """
    if not text.startswith(ESCAPED):
        return text
    return _UNESCAPE.sub(lambda m: "\x00" if m[1] == "x00" else "\\", text[len(ESCAPED) :])


def text_key(value: str) -> str:
    """The key of ``value`` (a :func:`stored_text`) in a bounded key column: the text itself
    when it has at most :data:`KEY_LENGTH` characters (and does not end like a shortened key),
    else its first characters, :data:`KEY_MARK` and :data:`KEY_DIGEST_CHARS` hex digits of its
    SHA-256 — distinct texts, distinct keys.

    >>> text_key("channel=web")
    'channel=web'
    >>> len(text_key("x" * 5000)) == KEY_LENGTH
    True
    """
    if len(value) <= KEY_LENGTH and (KEY_MARK not in value or not _DIGEST_KEY.search(value)):
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    suffix = f"{KEY_MARK}{digest[:KEY_DIGEST_CHARS]}"
    return value[: KEY_LENGTH - len(suffix)] + suffix


def key_of(value: str) -> str:
    """The key column's value for the text ``value`` as given (NULs and all): what a write
    stores and a lookup compares."""
    return text_key(stored_text(value))
