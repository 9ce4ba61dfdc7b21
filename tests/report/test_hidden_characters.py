"""A page shows every character that could hide or reorder its text — a control character, a
bidirectional mark, embedding, override or isolate — as its escape, whatever value carries it;
autoescaping stays on and the page's own markup stays markup."""

from __future__ import annotations

import pytest
from markupsafe import Markup

from riskmon.report.render import environment
from riskmon.visible import visible

HIDDEN = [
    *(chr(c) for c in range(0x20) if chr(c) not in "\t\n"),
    *(chr(c) for c in range(0x7F, 0xA0)),
    "\u061c",
    "\u200e",
    "\u200f",
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
]


def _render(source: str, **values: object) -> str:
    return environment().from_string(source).render(**values)


@pytest.mark.parametrize("char", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_each_hidden_character_is_shown_as_its_escape(char: str) -> None:
    html = _render('<td data-label="{{ x }}">{{ x }}</td>', x=f"a{char}b")
    assert char not in html
    escape = f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    assert html == f'<td data-label="a{escape}b">a{escape}b</td>'


def test_text_is_still_autoescaped_and_markup_stays_markup() -> None:
    html = _render("{{ x }}|{{ m }}|{{ n }}", x="<script>\u202e", m=Markup("<b>\u202e</b>"), n=1.5)
    assert html == "&lt;script&gt;\\u202e|<b>\\u202e</b>|1.5"


def test_tab_newline_and_other_text_are_left_as_they_are() -> None:
    text = "tab\there\nnew line, 😀, é, 中文, \u00a0, ‘quotes’"
    assert visible(text) == text
