"""The YAML reader of the configuration file: safe tags only, and bounded.

A configuration file is small and written by hand, so the reader refuses what only a mistake
or an attack produces: a file larger than :data:`MAX_CONFIG_BYTES` (refused by its size,
before it is read), a mapping that gives one key twice (YAML keeps the last one silently),
aliases that expand beyond :data:`MAX_ALIASES` uses or :data:`MAX_EXPANDED_NODES` nodes (a
"billion laughs" file is a few hundred bytes whose aliases expand to 10⁹ nodes), and nesting
deeper than :data:`MAX_DEPTH` levels. The nodes
are checked before anything is built from them, so a refusal costs no more than parsing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: the largest configuration file read, in bytes (1 MiB: the example configuration is 8 KB)
MAX_CONFIG_BYTES = 1024 * 1024
#: at most this many alias uses (``*name``, ``<<: *name``) in a file
MAX_ALIASES = 1000
#: at most this many nodes once every alias is expanded (the file as the program sees it)
MAX_EXPANDED_NODES = 100_000
#: at most this many levels of nested mappings and lists (the example configuration has 5)
MAX_DEPTH = 64

_MERGE_TAG = "tag:yaml.org,2002:merge"

Location = tuple[int | str, ...]

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UnsafeYAMLError(yaml.YAMLError):
    """YAML that parses but that the configuration reader refuses; ``location`` is the key
    path of the offending node (empty at the top level)."""

    def __init__(self, message: str, location: Location = ()):
        super().__init__(message)
        self.message = message
        self.location = location


class ConfigLoader(_Base):  # type: ignore[valid-type,misc]  # CSafeLoader where libyaml is built
    """A :class:`yaml.SafeLoader` (the C one where PyYAML has it) that refuses duplicate keys
    and alias expansion beyond :data:`MAX_ALIASES` / :data:`MAX_EXPANDED_NODES`.

    >>> yaml.load("a: 1\\nb: [x, y]\\n", Loader=ConfigLoader)
    {'a': 1, 'b': ['x', 'y']}
    """

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _NodeCheck().visit(node, ())
        return self.construct_document(node)


class _NodeCheck:
    """One pass over a document's node graph: each node is visited once, however many aliases
    reach it, and its expanded size is remembered, so that the check itself never expands."""

    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}
        self.open: set[int] = set()
        self.aliases = 0

    def visit(self, node: Node, location: Location) -> int:
        """The number of nodes ``node`` expands to; raises when a bound is passed."""
        key = id(node)
        if len(location) > MAX_DEPTH:
            raise UnsafeYAMLError(
                f"mappings and lists nested deeper than {MAX_DEPTH} levels "
                f"(line {node.start_mark.line + 1})",
                location[:MAX_DEPTH],
            )
        if key in self.open:
            raise UnsafeYAMLError(
                f"a recursive alias (line {node.start_mark.line + 1}): an anchor used inside "
                "itself expands without end",
                location,
            )
        if key in self.sizes:
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise UnsafeYAMLError(
                    f"more than {MAX_ALIASES:,} alias uses (line {node.start_mark.line + 1}): "
                    "aliases expanding without bound, as in a 'billion laughs' file",
                    location,
                )
            return _bounded(self.sizes[key], node, location)
        self.open.add(key)
        size = 1
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                size += self.visit(item, (*location, index))
        elif isinstance(node, MappingNode):
            _refuse_duplicates(node, location)
            for key_node, value_node in node.value:
                size += self.visit(key_node, location)
                size += self.visit(value_node, (*location, _key_name(key_node)))
        self.open.discard(key)
        self.sizes[key] = size
        return _bounded(size, node, location)


def _bounded(size: int, node: Node, location: Location) -> int:
    """``size``, the nodes ``node`` expands to, unless it passes the bound."""
    if size > MAX_EXPANDED_NODES:
        raise UnsafeYAMLError(
            f"aliases expand to {size:,} nodes (line {node.start_mark.line + 1}), each use "
            f"counted as the nodes it stands for: more than the {MAX_EXPANDED_NODES:,} a "
            "configuration may have (aliases nested as in a 'billion laughs' file)",
            location,
        )
    return size


def _key_name(node: Node) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else f"<{node.tag}>"


def _refuse_duplicates(node: MappingNode, location: Location) -> None:
    """Refuse a key given twice in one mapping (keys merged in with ``<<`` may be overridden:
    that is what merging is for)."""
    seen: dict[tuple[str, str], Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG or not isinstance(key_node, ScalarNode):
            continue
        name = key_node.value
        first = seen.setdefault((key_node.tag, name), key_node)
        if first is not key_node:
            at, again = first.start_mark, key_node.start_mark
            same_line = at.line == again.line  # a flow mapping: {a: 1, a: 2}
            where = [
                f"line {m.line + 1}" + (f", column {m.column + 1}" if same_line else "")
                for m in (at, again)
            ]
            raise UnsafeYAMLError(
                f"duplicate key {name!r}: given at {where[0]} and again at {where[1]} "
                "(YAML would keep only the last one)",
                (*location, name),
            )


def read_yaml(path: Path) -> Any:
    """The document in the file at ``path``, read with :class:`ConfigLoader`.

    Raises :class:`UnsafeYAMLError` for a file over :data:`MAX_CONFIG_BYTES` (by its size,
    before reading it; a file that grows while read, or a device, is cut off there), and
    whatever :class:`ConfigLoader` raises; ``OSError`` when it cannot be read.
    """
    size = path.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise UnsafeYAMLError(_too_large(size))
    with path.open("rb") as file:
        data = file.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise UnsafeYAMLError(_too_large(None))
    text = data.decode("utf-8")
    return yaml.load(text, Loader=ConfigLoader)  # ConfigLoader is a SafeLoader


def _too_large(size: int | None) -> str:
    got = f"{size:,} bytes" if size is not None else "more"
    return (
        f"the file is too large: {got}, over the {MAX_CONFIG_BYTES:,} bytes (1 MiB) a "
        "configuration file may have"
    )
