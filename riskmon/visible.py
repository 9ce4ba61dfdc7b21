"""Text a page or a message shows, with each character that could hide or reorder it (a
control character but tab and newline, a bidirectional mark, override or isolate) written as
its escape. Apart from the report, so that a notification uses it without loading the pages'
machinery (the figure catalog and what it computes with)."""

from __future__ import annotations

import re

#: characters that would hide or reorder text: the C0 controls but tab and newline,
#: DEL, the C1 controls, and the bidirectional marks, embeddings, overrides and isolates
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    r"""``text`` with each character that could hide or reorder text (a control character
    but tab and newline, a bidirectional mark, override or isolate) written as its escape.

    >>> visible("abc\u202edef\x00")
    'abc\\u202edef\\x00'
    """
    return _HIDDEN.sub(_escape, text)
