"""Records of one frozen dataclass held in columns: a run's figures and bins, compactly.

A run of 5,000 segments makes about 240,000 figures and 200,000 bins. As slotted records,
each with its own parameter dictionary and boxed floats, they left 176 MB of Python objects
after the figures' step; held, 84 MB (``benchmarks/messy.md``). :class:`Held` keeps the same
records as columns, the way :class:`riskmon.store.records.BaselineBins` keeps a baseline's
bins:

- a text field as one code a record (2 bytes until the field has more than 32,767 texts, then
  4), each distinct text once;
- an integer, float or boolean field in an :class:`array.array` (8 bytes a record, an integer
  4 until one needs 8, a boolean one), with a byte a record saying which are None when the
  field may be;
- a dictionary field (a figure's ``params``, a bin's ``extra``) as its keys, held once per
  distinct tuple of keys, and its values in a column per key of that tuple (in an
  :class:`array.array` while all of a column's values are floats, or all integers; as codes
  while all are texts).

A record is made again when it is read, equal to the one held (its dictionary a new one, so
that changing it changes nothing held; a float in it a new float, any other value the object
held). The field kinds come from the dataclass's annotations: ``str``, ``int``, ``float``,
``bool`` (each optionally ``| None``) and ``dict[...]``; a float field reads back a Python
float, as annotated (an integer or a numpy float given is read back as one), and an integer
field takes integers only. A record with a NaN is read back equal in every field but that one
(NaN is not equal to itself; a run's figures are finite or None).

This module sits at the bottom of the package: it imports nothing of riskmon's (numpy only,
to index many records at once).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from array import array
from bisect import bisect_left
from collections.abc import Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from itertools import islice, starmap
from operator import attrgetter
from typing import Any, Generic, TypeVar, overload

import numpy as np

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

#: an annotation's kind: its array's type code, or "text" or "document"
_CODES = {"int": "i", "float": "d", "bool": "b"}  # an "i" column becomes "q" when it must
_NONE = " | None"
#: records taken in, or read, at a time
_BATCH = 10_000


class _Column:
    """One field's values, by record position."""

    __slots__ = ("kind", "none", "values")

    def __init__(self, annotation: str, owner: str, name: str) -> None:
        base = annotation.removesuffix(_NONE)
        self.none: bytearray | None = bytearray() if base != annotation else None
        if base == "str":
            self.kind = "text"
            self.values: Any = _Coded[str]()
        elif base in _CODES:
            self.kind = _CODES[base]
            self.values = array(self.kind)
        elif base.startswith("dict["):
            self.kind = "document"
            self.values = _Documents()
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


class _Coded(Generic[K]):
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


class _Documents:
    """Dictionaries as their keys, each distinct tuple of keys once, and their values by key:
    per tuple of keys, a column a key, typed by its first value while every value of it has
    that value's type: an ``array('d')`` of floats or an array of integers (4 bytes a value
    until one needs 8; not a list's slot and a boxed number's 28 to 32), texts as codes
    (:class:`_Coded`, 2 bytes, then 4); else, or once a value of another type comes, a list of
    the values."""

    __slots__ = ("rows", "shapes", "tables")

    def __init__(self) -> None:
        self.shapes = _Coded[tuple[str, ...]]()  # None: a None document
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
                elif type(column) is _Coded and kind is not str:
                    column = table[i] = _widened(column, value)
                column.append(value)
        self.rows.extend(rows)

    def truncate(self, length: int) -> None:
        self.shapes.truncate(length)
        del self.rows[length:]
        codes = _numbers(self.shapes.codes)
        kept = np.bincount(codes[codes >= 0], minlength=len(self.tables))
        for table, n in zip(self.tables, kept.tolist(), strict=True):
            for column in table:
                if type(column) is _Coded:
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
        return _Coded[str]() if kind is str else []
    if type(column) is _Coded:
        return column.between(0, held)
    if column.typecode == "i" and kind is int and _BOUNDS["q"] <= value < -_BOUNDS["q"]:
        return array("q", column)
    return column.tolist()


def _numbers(codes: array[int]) -> Any:
    """``codes`` as a numpy array over the same memory (no copy)."""
    return np.frombuffer(codes, dtype=f"i{codes.itemsize}")


class _Index:
    """The position of the last record of each combination of codes of some text fields,
    keyed by one integer: the codes as the digits of a number, each in the base of its
    field's count of texts plus one (None, -1, the zero). While the numbers fit in 62 bits
    (a run's figures do), the distinct keys are held sorted in an array beside their
    positions, 16 bytes a record, found by bisection (a dictionary of Python integers took
    about 100, 28 MB for a run of 5,000 segments); otherwise in a dictionary."""

    __slots__ = ("coded", "keys", "large", "positions", "sizes")

    def __init__(self, coded: list[_Coded[str]]) -> None:
        self.coded = coded
        self.sizes = [len(c.texts) + 1 for c in coded]
        self.keys, self.positions = array("q"), array("q")
        self.large: dict[int, int] | None = None  # the keys of 62 bits and more
        if math.prod(self.sizes) < 2**62:  # in numpy's integers: a run's figures in a blink
            keys = np.zeros(len(coded[0].codes), dtype=np.int64)
            for c, size in zip(coded, self.sizes, strict=True):
                keys = keys * size + _numbers(c.codes) + 1
            order = np.argsort(keys, kind="stable")  # equal keys in the order held
            ranked = keys[order]
            last = np.ones(len(ranked), dtype=bool)  # of equal keys, the last held
            last[:-1] = ranked[1:] != ranked[:-1]
            self.keys = array("q", ranked[last].tobytes())
            self.positions = array("q", order[last].astype(np.int64).tobytes())
        else:
            numbers = [self.key(each) for each in zip(*(c.codes for c in coded), strict=True)]
            self.large = dict(zip(numbers, range(len(numbers)), strict=True))  # last wins

    def key(self, codes: Iterable[int]) -> int:
        out = 0
        for code, size in zip(codes, self.sizes, strict=True):
            out = out * size + code + 1
        return out

    def find(self, texts: Sequence[str]) -> int | None:
        out = 0
        for c, size, text in zip(self.coded, self.sizes, texts, strict=True):
            code = c.known.get(text)
            if code is None:
                return None
            out = out * size + code + 1
        if self.large is not None:
            return self.large.get(out)
        at = bisect_left(self.keys, out)
        if at == len(self.keys) or self.keys[at] != out:
            return None
        return self.positions[at]


class RecordSequence(Sequence[T]):
    """A sequence of records made when read (:meth:`_record`), compared as a sequence."""

    __slots__ = ()

    @abstractmethod
    def _record(self, position: int) -> T:
        """The record at ``position``, which is in range."""

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self._record(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._record(index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class Held(RecordSequence[T], Generic[T]):
    """Records of dataclass ``kind`` held in columns; read as records, made when read."""

    __slots__ = ("_columns", "_indexes", "_kind", "_length")

    def __init__(self, kind: type[T], records: Iterable[T] = ()) -> None:
        if not is_dataclass(kind):
            raise TypeError(f"{kind!r} is not a dataclass")
        self._kind = kind
        self._columns = {f.name: _Column(str(f.type), kind.__name__, f.name) for f in fields(kind)}
        self._length = 0
        self._indexes: dict[tuple[str, ...], _Index] = {}
        self.extend(records)

    @property
    def kind(self) -> type[T]:
        return self._kind

    def extend(self, records: Iterable[T]) -> None:
        """Hold ``records`` after those held, a batch at a time; if one cannot be held (a
        value not of its field's type), none of them is, and the error is raised."""
        if records is self or getattr(records, "records", None) is self:
            records = list(records)  # itself, or a Figures holding it: read before it grows
        start = self._length
        each = iter(records)
        try:
            while batch := list(islice(each, _BATCH)):
                for name, column in self._columns.items():
                    column.extend(list(map(attrgetter(name), batch)))
                self._length += len(batch)
        except BaseException:
            for column in self._columns.values():
                column.truncate(start)
            self._length = start
            raise
        finally:
            self._indexes.clear()  # made again when next asked, over every record held

    def rows(self, skip: Collection[str] = ()) -> Iterator[dict[str, Any]]:
        """Each record's fields (but those in ``skip``) by name, without making the record."""
        names = [name for name in self._columns if name not in skip]
        length = self._length  # the records held when asked
        for start in range(0, length, _BATCH):
            stop = min(start + _BATCH, length)
            columns = [self._columns[name].between(start, stop) for name in names]
            yield from (
                dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)
            )

    def __len__(self) -> int:
        return self._length

    def _record(self, position: int) -> T:
        return self._kind(*[column.get(position) for column in self._columns.values()])

    def __iter__(self) -> Iterator[T]:
        length = self._length  # the records held when asked
        for start in range(0, length, _BATCH):
            stop = min(start + _BATCH, length)
            columns = [column.between(start, stop) for column in self._columns.values()]
            yield from starmap(self._kind, zip(*columns, strict=True))

    def __repr__(self) -> str:
        return f"Held({self._kind.__name__}, {self._length} records)"

    def texts(self, name: str) -> list[str]:
        """The distinct texts of text field ``name``, by code."""
        return self._text_column(name).texts

    def codes(self, name: str) -> array[int]:
        """Text field ``name``'s code for each record (-1 for None)."""
        return self._text_column(name).codes

    def distinct(self, name: str) -> set[str]:
        """The texts of text field ``name`` that records hold (None aside)."""
        texts = self.texts(name)
        return {texts[c] for c in set(self.codes(name)) if c >= 0}

    def code(self, name: str, text: str) -> int | None:
        """The code of ``text`` in text field ``name``, or None if no record holds it."""
        return self._text_column(name).known.get(text)

    def where(self, **texts: str) -> Iterator[T]:
        """The records whose text fields are ``texts`` (by field name), in order; only they
        are made."""
        chosen: Any = None
        for name, text in texts.items():
            code = self.code(name, text)
            if code is None:
                return iter(())
            match = _numbers(self.codes(name)) == code
            chosen = match if chosen is None else chosen & match
        positions = range(self._length) if chosen is None else np.flatnonzero(chosen).tolist()
        return map(self._record, positions)

    def find(self, key: tuple[str, ...], texts: Sequence[str]) -> int | None:
        """The position of the last record whose text fields ``key`` are ``texts``, or None;
        by bisection over its sorted keys (each ``key``'s index is made once, when first asked)."""
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = _Index([self._text_column(name) for name in key])
        return index.find(texts)

    def field(self, position: int, name: str) -> Any:
        """Field ``name`` of the record at ``position`` (in range), without making it."""
        return self._columns[name].get(position)

    def _text_column(self, name: str) -> _Coded[str]:
        column = self._columns[name]
        if column.kind != "text":
            raise TypeError(f"{self._kind.__name__}.{name} is not a text field")
        texts: _Coded[str] = column.values
        return texts


__all__ = ["Held", "RecordSequence"]
