"""The columns :class:`riskmon.held.Held` holds its records' fields in, one a field.

- :class:`Column`: one field's values by record position, in an :class:`array.array` for an
  integer (4 bytes until a value needs 8), float or boolean field, with a byte a record saying
  which are None when the field may be; as codes for a text field; as :class:`Documents` for a
  dictionary field.
- :class:`Coded`: values as codes (2 bytes until there are more than 32,767 distinct values,
  then 4), each distinct value once.
- :class:`Documents`: dictionaries as their keys, once per distinct tuple of keys, and their
  values in a column per key, typed by its first value while the values after it have its type.

This module imports nothing of riskmon's (numpy only, to view codes as an array).
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)

#: an annotation's kind: its array's type code, or "text" or "document"
_CODES = {"int": "i", "float": "d", "bool": "b"}  # an "i" column becomes "q" when it must
_NONE = " | None"


class Column:
    """One field's values, by record position."""

    __slots__ = ("kind", "none", "values")

    def __init__(self, annotation: str, owner: str, name: str) -> None:
        base = annotation.removesuffix(_NONE)
        self.none: bytearray | None = bytearray() if base != annotation else None
        if base == "str":
            self.kind = "text"
            self.values: Any = Coded[str]()
        elif base in _CODES:
            self.kind = _CODES[base]
            self.values = array(self.kind)
        elif base.startswith("dict["):
            self.kind = "document"
            self.values = Documents()
        else:
            raise TypeError(f"{owner}.{name}: a field of type {annotation!r} cannot be held")

    def extend(self, values: list[Any]) -> None:
        if self.none is not None:
            self.none.extend([v is None for v in values])
            if self.kind not in ("text", "document"):
                values = [0 if v is None else v for v in values]
        if self.kind == "b":
            values = [bool(v) for v in values]
        if self.kind == "i" and self.values.typecode == "i" and values and not _fits_int32(values):
            self.values = array("q", self.values)  # an integer beyond 4 bytes: 8 from now
        self.values.extend(values)

    def truncate(self, length: int) -> None:
        """Keep the first ``length`` values only."""
        if self.none is not None:
            del self.none[length:]
        if isinstance(self.values, array):
            del self.values[length:]
        else:
            self.values.truncate(length)

    def get(self, position: int) -> Any:
        if self.none is not None and self.none[position]:
            return None
        value = self.values[position]
        return bool(value) if self.kind == "b" else value

    def between(self, start: int, stop: int) -> list[Any]:
        """The values of the records from ``start`` to ``stop`` (excluded)."""
        if not isinstance(self.values, array):
            held: list[Any] = self.values.between(start, stop)
            return held
        values = self.values[start:stop].tolist()
        if self.kind == "b":
            values = [bool(v) for v in values]
        if self.none is not None and any(self.none[start:stop]):
            return [None if n else v for n, v in zip(self.none[start:stop], values, strict=True)]
        return values


class Coded(Generic[K]):
    """Values as one code each (None as -1), each distinct value once."""

    __slots__ = ("codes", "known", "texts")

    def __init__(self) -> None:
        self.codes = array("h")  # 2 bytes a value while there are few texts, then 4
        self.known: dict[K, int] = {}
        self.texts: list[K] = []  # by code

    def _widen(self) -> None:
        if self.codes.typecode == "h" and len(self.texts) > _INT16_MAX:
            self.codes = array("i", self.codes)

    def extend(self, values: list[K | None]) -> None:
        known, texts = self.known, self.texts
        for value in dict.fromkeys(values):  # new values coded in the order they come
            if value is not None and value not in known:
                known[value] = len(texts)
                texts.append(value)
        self._widen()
        self.codes.extend([-1 if v is None else known[v] for v in values])

    def append(self, value: K) -> None:
        code = self.known.get(value)
        if code is None:
            code = self.known[value] = len(self.texts)
            self.texts.append(value)
            self._widen()
        self.codes.append(code)

    def __len__(self) -> int:
        return len(self.codes)

    def truncate(self, length: int) -> None:
        del self.codes[length:]  # a text no record holds any more keeps its code: harmless

    def __getitem__(self, position: int) -> K | None:
        code = self.codes[position]
        return None if code < 0 else self.texts[code]

    def between(self, start: int, stop: int) -> list[K | None]:
        texts = self.texts
        return [None if c < 0 else texts[c] for c in self.codes[start:stop]]


class Documents:
    """Dictionaries as their keys, each distinct tuple of keys once, and their values by key:
    per tuple of keys, a column a key, typed by its first value while every value of it has
    that value's type: an ``array('d')`` of floats or an array of integers (4 bytes a value
    until one needs 8; not a list's slot and a boxed number's 28 to 32), texts as codes
    (:class:`Coded`, 2 bytes, then 4); else, or once a value of another type comes, a list of
    the values."""

    __slots__ = ("rows", "shapes", "tables")

    def __init__(self) -> None:
        self.shapes = Coded[tuple[str, ...]]()  # None: a None document
        self.rows = array("i")  # each document's row in its keys' columns
        self.tables: list[list[Any]] = []  # by the code of the keys: a column a key

    def extend(self, documents: list[dict[str, Any] | None]) -> None:
        if not documents:
            return
        shapes = self.shapes
        shapes.extend([None if d is None else tuple(d) for d in documents])
        self.tables.extend([array("d") for _ in keys] for keys in shapes.texts[len(self.tables) :])
        rows = []
        for document, code in zip(documents, shapes.codes[-len(documents) :], strict=True):
            table = self.tables[code] if document else None
            if not table:  # None or no keys
                rows.append(0)
                continue
            rows.append(len(table[0]))
            for i, value in enumerate(document.values()):  # type: ignore[union-attr]
                column, kind = table[i], type(value)
                if type(column) is array:
                    if kind is not _ARRAY_KINDS[column.typecode] or (
                        kind is int
                        and not _BOUNDS[column.typecode] <= value < -_BOUNDS[column.typecode]
                    ):
                        column = table[i] = _widened(column, value)
                elif type(column) is Coded and kind is not str:
                    column = table[i] = _widened(column, value)
                column.append(value)
        self.rows.extend(rows)

    def truncate(self, length: int) -> None:
        self.shapes.truncate(length)
        del self.rows[length:]
        codes = as_numpy(self.shapes.codes)
        kept = np.bincount(codes[codes >= 0], minlength=len(self.tables))
        for table, n in zip(self.tables, kept.tolist(), strict=True):
            for column in table:
                if type(column) is Coded:
                    column.truncate(n)
                else:
                    del column[n:]

    def __getitem__(self, position: int) -> dict[str, Any] | None:
        code = self.shapes.codes[position]
        if code < 0:
            return None
        row = self.rows[position]
        return {k: c[row] for k, c in zip(self.shapes.texts[code], self.tables[code], strict=True)}

    def between(self, start: int, stop: int) -> list[dict[str, Any] | None]:
        keys, tables, rows = self.shapes.texts, self.tables, self.rows
        return [
            None if code < 0 else {k: c[row] for k, c in zip(keys[code], tables[code], strict=True)}
            for code, row in zip(self.shapes.codes[start:stop], rows[start:stop], strict=True)
        ]


#: the type of the values an array of each type code holds, and an integer array's lowest
#: value (its highest is one less than minus that)
_ARRAY_KINDS: dict[str, type] = {"d": float, "i": int, "q": int}
_BOUNDS = {"i": -(2**31), "q": -(2**63)}
_INT16_MAX = 2**15 - 1


def _fits_int32(values: list[Any]) -> bool:
    return bool(_BOUNDS["i"] <= min(values) and max(values) < -_BOUNDS["i"])


def _widened(column: Any, value: Any) -> Any:
    """A document column that can take ``value`` as well as the values it holds: typed by
    ``value`` while it holds none (integers in 4 bytes, then 8), else a list of its values."""
    kind = type(value)
    held = len(column)
    if not held:
        if kind is int and _BOUNDS["q"] <= value < -_BOUNDS["q"]:
            return array("i" if _fits_int32([value]) else "q")
        if kind is float:
            return array("d")
        return Coded[str]() if kind is str else []
    if type(column) is Coded:
        return column.between(0, held)
    if column.typecode == "i" and kind is int and _BOUNDS["q"] <= value < -_BOUNDS["q"]:
        return array("q", column)
    return column.tolist()


def as_numpy(codes: array[int]) -> Any:
    """``codes`` as a numpy array over the same memory (no copy)."""
    return np.frombuffer(codes, dtype=f"i{codes.itemsize}")


__all__ = ["Coded", "Column", "Documents", "as_numpy"]
