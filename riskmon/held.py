"""Records of one frozen dataclass held in columns: a run's figures and bins, compactly.

A run of 5,000 segments makes about 240,000 figures and 200,000 bins. As slotted records,
each with its own parameter dictionary and boxed floats, they left 176 MB of Python objects
after the figures' step; held, 76 MB (``benchmarks/messy.md``). :class:`Held` keeps the same
records as columns, the way :class:`riskmon.store.records.BaselineBins` keeps a baseline's
bins:

- a text field as one code a record (``array('i')``), each distinct text once;
- an integer, float or boolean field in an :class:`array.array` (8 bytes a record, one for a
  boolean), with a byte a record saying which are None when the field may be;
- a dictionary field (a figure's ``params``, a bin's ``extra``) as its keys, held once per
  distinct set of keys, and a tuple of its values.

A record is made again when it is read, equal to the one held (its dictionary a new one, so
that changing it changes nothing held; the values in it are the objects held). The field
kinds come from the dataclass's annotations: ``str``, ``int``, ``float``, ``bool`` (each
optionally ``| None``) and ``dict[...]``; a float field reads back a float, as annotated.

This module sits at the bottom of the package: it imports nothing of riskmon's.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

#: an annotation's kind: its array's type code, or "text" or "document"
_CODES = {"int": "q", "float": "d", "bool": "b"}
_NONE = " | None"


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

    def append(self, value: Any) -> None:
        if self.none is not None:
            self.none.append(value is None)
            if value is None and self.kind not in ("text", "document"):
                value = 0
        self.values.append(value)

    def get(self, position: int) -> Any:
        if self.none is not None and self.none[position]:
            return None
        value = self.values[position]
        return bool(value) if self.kind == "b" else value


class _Coded(Generic[K]):
    """Values as one code each (None as -1), each distinct value once."""

    __slots__ = ("codes", "known", "texts")

    def __init__(self) -> None:
        self.codes = array("i")
        self.known: dict[K, int] = {}
        self.texts: list[K] = []  # by code

    def append(self, value: K | None) -> None:
        if value is None:
            self.codes.append(-1)
            return
        code = self.known.get(value)
        if code is None:
            code = self.known[value] = len(self.texts)
            self.texts.append(value)
        self.codes.append(code)

    def __getitem__(self, position: int) -> K | None:
        code = self.codes[position]
        return None if code < 0 else self.texts[code]


class _Documents:
    """Dictionaries as their keys (each distinct tuple of keys once) and a tuple of values."""

    __slots__ = ("shapes", "values")

    def __init__(self) -> None:
        self.shapes = _Coded[tuple[str, ...]]()
        self.values: list[tuple[Any, ...] | None] = []

    def append(self, document: dict[str, Any] | None) -> None:
        if not document:
            self.shapes.codes.append(-1)
            self.values.append(None if document is None else ())
            return
        self.shapes.append(tuple(document))
        self.values.append(tuple(document.values()))

    def __getitem__(self, position: int) -> dict[str, Any] | None:
        values = self.values[position]
        if values is None:
            return None
        keys = self.shapes[position]
        return dict(zip(keys, values, strict=True)) if keys else {}


class RecordSequence(Sequence[T]):
    """A sequence of records made when read (:meth:`_record`), compared as a sequence."""

    __slots__ = ()

    def _record(self, position: int) -> T:
        """The record at ``position``, which is in range."""
        raise NotImplementedError

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
        self._indexes: dict[tuple[str, ...], dict[int, int]] = {}
        self.extend(records)

    @property
    def kind(self) -> type[T]:
        return self._kind

    def extend(self, records: Iterable[T]) -> None:
        """Hold ``records`` after those held."""
        if isinstance(records, Held) and records is self:
            records = list(records)
        columns = list(self._columns.items())
        self._indexes.clear()
        for record in records:
            for name, column in columns:
                column.append(getattr(record, name))
            self._length += 1

    def __len__(self) -> int:
        return self._length

    def _record(self, position: int) -> T:
        return self._kind(*[column.get(position) for column in self._columns.values()])

    def __iter__(self) -> Iterator[T]:
        return map(self._record, range(self._length))

    def __repr__(self) -> str:
        return f"Held({self._kind.__name__}, {self._length} records)"

    def texts(self, name: str) -> list[str]:
        """The distinct texts of text field ``name``, by code."""
        return self._text_column(name).texts

    def codes(self, name: str) -> array[int]:
        """Text field ``name``'s code for each record (-1 for None)."""
        return self._text_column(name).codes

    def code(self, name: str, text: str) -> int | None:
        """The code of ``text`` in text field ``name``, or None if no record holds it."""
        return self._text_column(name).known.get(text)

    def where(self, name: str, text: str) -> Iterator[T]:
        """The records whose text field ``name`` is ``text``, in order (only they are made)."""
        code = self.code(name, text)
        if code is None:
            return iter(())
        codes = self.codes(name)
        return (self._record(i) for i in range(self._length) if codes[i] == code)

    def find(self, key: tuple[str, ...], texts: Sequence[str]) -> int | None:
        """The position of the last record whose text fields ``key`` are ``texts``, or None;
        in constant time (each ``key``'s index is made once, when first asked)."""
        codes = [self.code(name, text) for name, text in zip(key, texts, strict=True)]
        if None in codes:
            return None
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = {}
            for position, each in enumerate(zip(*map(self.codes, key), strict=True)):
                index[self._key(key, each)] = position
        return index.get(self._key(key, codes))  # type: ignore[arg-type]

    def _key(self, key: tuple[str, ...], codes: Sequence[int]) -> int:
        """One integer for the codes of ``key``'s fields (a small one: 28 bytes, not a tuple's
        72 and more)."""
        out = 0
        for name, code in zip(key, codes, strict=True):
            out = out * (len(self.texts(name)) + 1) + code + 1
        return out

    def _text_column(self, name: str) -> _Coded[str]:
        column = self._columns[name]
        if column.kind != "text":
            raise TypeError(f"{self._kind.__name__}.{name} is not a text field")
        texts: _Coded[str] = column.values
        return texts


__all__ = ["Held", "RecordSequence"]
