"""A strict HTML tree for the report tests, on the standard library's html.parser.

Every element must be closed in order (void elements excepted): the reports are written to be
well formed, so a stray or mismatched tag fails the test that parses the page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


def _attr(keyword: str) -> str:
    """``data_figure`` as the attribute ``data-figure``, ``class_`` as ``class``."""
    return keyword.rstrip("_").replace("_", "-")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    def iter(self, tag: str | None = None) -> Iterator[Element]:
        """This element and every element below it (of ``tag``), in document order."""
        if tag is None or self.tag == tag:
            yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter(tag)

    def find(self, tag: str | None = None, **attrs: str) -> Element | None:
        for element in self.iter(tag):
            if all(element.attrs.get(_attr(k)) == v for k, v in attrs.items()):
                return element
        return None

    def get(self, tag: str | None = None, **attrs: str) -> Element:
        found = self.find(tag, **attrs)
        assert found is not None, f"no <{tag}> with {attrs}"
        return found

    def text(self) -> str:
        """The element's text, whitespace collapsed."""
        parts: list[str] = []

        def walk(node: Element | str) -> None:
            if isinstance(node, str):
                parts.append(node)
            else:
                for child in node.children:
                    walk(child)

        walk(self)
        return " ".join("".join(parts).split())

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        open_tag = self.stack[-1].tag
        assert open_tag == tag, f"</{tag}> closes <{open_tag}> at line {self.getpos()[0]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    """The document's tree; raises AssertionError on an unclosed or mismatched tag."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], f"unclosed: {[e.tag for e in builder.stack[1:]]}"
    return builder.root
