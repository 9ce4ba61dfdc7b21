"""Records of one frozen dataclass held in columns: a run's figures and bins, compactly.

A run of 5,000 segments makes about 240,000 figures and 200,000 bins. As slotted records,
each with its own parameter dictionary and boxed floats, they left 176 MB of Python objects
after the figures' step; held, 84 MB (``benchmarks/messy.md``), and the held figures and bins
themselves now 21.0 and 23.8 MB. :class:`Held` keeps the same
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

This module sits at the bottom of the package: it imports nothing of riskmon's but the columns
themselves (:mod:`riskmon.held_columns`), and numpy, to index many records at once.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from array import array
from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from itertools import islice, starmap
from operator import attrgetter
from typing import Any, Generic, TypeVar, overload

import numpy as np

from riskmon.held_columns import Coded, Column, as_numpy

T = TypeVar("T")

#: records taken in, or read, at a time
_BATCH = 10_000


class _Index:
    """The position of the last record of each combination of codes of some text fields,
    keyed by one integer: the codes as the digits of a number, each in the base of its
    field's count of texts plus one (None, -1, the zero). While the numbers fit in 62 bits
    (a run's figures do), the distinct keys are held sorted in an array beside their
    positions, 16 bytes a record, found by bisection (a dictionary of Python integers took
    about 100, 28 MB for a run of 5,000 segments); otherwise in a dictionary."""

    __slots__ = ("coded", "keys", "large", "positions", "sizes")

    def __init__(self, coded: list[Coded[str]]) -> None:
        self.coded = coded
        self.sizes = [len(c.texts) + 1 for c in coded]
        self.keys, self.positions = array("q"), array("q")
        self.large: dict[int, int] | None = None  # the keys of 62 bits and more
        if math.prod(self.sizes) < 2**62:  # in numpy's integers: a run's figures in a blink
            keys = np.zeros(len(coded[0].codes), dtype=np.int64)
            for c, size in zip(coded, self.sizes, strict=True):
                keys = keys * size + as_numpy(c.codes) + 1
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
        self._columns = {f.name: Column(str(f.type), kind.__name__, f.name) for f in fields(kind)}
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
            match = as_numpy(self.codes(name)) == code
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

    def _text_column(self, name: str) -> Coded[str]:
        column = self._columns[name]
        if column.kind != "text":
            raise TypeError(f"{self._kind.__name__}.{name} is not a text field")
        texts: Coded[str] = column.values
        return texts


__all__ = ["Held", "RecordSequence"]
