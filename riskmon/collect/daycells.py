"""One population's sums on one score day (:class:`DayCells`), their JSON, and the sum of a
group's cells over many days (:func:`add_up`).

A day's cells are kept in columns: per *group* — (variable, segment values, label) — its keys
and, beside them, each key's rows and weight (:class:`Column`). A score ranked on its distinct
values puts thousands of keys a day in one group; as columns a window's days decode from JSON
and add up in a fraction of the time one tagged key each took (benchmarks/incremental.md).

JSON keeps a key's value as itself where it has a type of its own, else tagged (dates,
decimals, non-finite floats), so that a key reads back equal and of the same type. A column of
at least :data:`PACKED_MIN` cells whose keys are all integers or all floats is kept packed: its
keys, rows and weights each as the base64 text of their little-endian 8-byte values
(:func:`_pack`), which read back as numpy arrays bit for bit, without parsing a number each
(a score's thousands of distinct values a day; benchmarks/incremental.md).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.records import Exclusions, LevelCount

#: a cell's key without its population: (variable, segment values, label, key)
CellKey = tuple[str, tuple[Any, ...], Any, Any]
#: a cell's group: (variable, segment values, label)
Group = tuple[str, tuple[Any, ...], Any]


#: the cells a column holds at least to be kept packed (fewer: JSON numbers, readable)
PACKED_MIN = 64

#: a column's values: a list as a day's reading appends them, or an array as read packed
Values = list[Any] | npt.NDArray[Any]


@dataclass
class Column:
    """One group's cells on one day: its keys, and each key's rows and weight (lists, or
    numpy arrays where they were read back packed)."""

    keys: Values = field(default_factory=list)
    rows: Values = field(default_factory=list)
    weights: Values = field(default_factory=list)

    def append(self, key: Any, rows: int, weight: float) -> None:
        assert isinstance(self.keys, list), "a packed column is read, not appended to"
        assert isinstance(self.rows, list)
        assert isinstance(self.weights, list)
        self.keys.append(key)
        self.rows.append(rows)
        self.weights.append(weight)

    def packed(self) -> Column:
        """This column in numpy arrays where its keys are all integers or all floats (a few
        bytes a cell instead of three Python objects), else as it is."""
        keys = _numeric(self.keys)
        if keys is None:
            return self
        return Column(keys, np.asarray(self.rows, np.int64), np.asarray(self.weights, np.float64))

    def lists(self) -> tuple[list[Any], list[Any], list[Any]]:
        """The keys, rows and weights as lists of Python values."""
        return _plain(self.keys), _plain(self.rows), _plain(self.weights)

    def to_json(self) -> list[Any]:
        """[keys, rows, weights]: packed where there are enough cells and the keys are all
        integers or all floats, else JSON numbers (keys tagged where JSON has no type)."""
        keys = _numeric(self.keys) if len(self.keys) >= PACKED_MIN else None
        if keys is not None:
            rows = np.asarray(self.rows, dtype=np.int64)
            return [_pack(keys), _pack(rows), _pack(np.asarray(self.weights, dtype=np.float64))]
        keys_, rows_, weights_ = self.lists()
        return [[_tag(k) for k in keys_], [int(n) for n in rows_], _floats(weights_)]

    @classmethod
    def from_json(cls, keys: Any, rows: Any, weights: Any) -> Column:
        if type(keys) is str:
            return cls(_unpack(keys), _unpack(rows), _unpack(weights))
        return cls(
            [_untag(k) if type(k) is list else k for k in keys],
            [int(n) for n in rows],
            _unfloats(weights),
        )


@dataclass
class DayCells:
    """One population's sums on one score day."""

    cells: dict[Group, Column] = field(default_factory=dict)
    sums: dict[CellKey, list[float]] = field(default_factory=dict)
    moments: dict[CellKey, list[float]] = field(default_factory=dict)
    exclusions: Exclusions | None = None
    #: used loans whose PD was NULL or outside [0, 1] (a PD not checked loan by loan)
    invalid_pd: int = 0
    #: a day of the census's population: each categorical's levels in its unseen bin
    #: (:func:`riskmon.collect.census.day_levels`)
    levels: dict[str, list[LevelCount]] = field(default_factory=dict)
    #: the day's rows when they were read (:mod:`.fingerprint`); None: not taken
    fingerprint: str | None = None

    def add(self, key: CellKey, rows: int, weight: float) -> None:
        """Add the cell ``key`` (not held yet) to its group's column."""
        variable, segments, label, value = key
        group = (variable, segments, label)
        column = self.cells.get(group)
        if column is None:
            column = self.cells[group] = Column()
        column.append(value, rows, weight)

    def items(self) -> Iterable[tuple[CellKey, tuple[int, float]]]:
        """Every cell's key, rows and weight."""
        for (variable, segments, label), column in self.cells.items():
            for value, n, w in zip(*column.lists(), strict=True):
                yield (variable, segments, label, value), (n, w)

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [[*_tag_group(g), *c.to_json()] for g, c in self.cells.items()],
            "sums": [[_tag_key(k), _floats(v)] for k, v in self.sums.items()],
            "moments": [[_tag_key(k), _floats(v)] for k, v in self.moments.items()],
            "exclusions": None if self.exclusions is None else vars(self.exclusions),
            "invalid_pd": self.invalid_pd,
            "levels": {
                name: [[c.level, c.n, _tag(c.weight)] for c in counts]
                for name, counts in self.levels.items()
            },
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DayCells:
        excluded = data.get("exclusions")
        # in arrays where the keys are numbers: a window's days add up on numpy (:func:`add_up`)
        cells = {
            _untag_group(variable, segments, label): Column.from_json(keys, rows, weights).packed()
            for variable, segments, label, keys, rows, weights in data["cells"]
        }
        return cls(
            cells=cells,
            sums={_untag_key(k): _unfloats(v) for k, v in data["sums"]},
            moments={_untag_key(k): _unfloats(v) for k, v in data["moments"]},
            exclusions=None if excluded is None else Exclusions(**excluded),
            invalid_pd=int(data.get("invalid_pd", 0)),
            levels={
                name: [LevelCount(str(level), int(n), float(_untag(w))) for level, n, w in counts]
                for name, counts in data.get("levels", {}).items()
            },
            fingerprint=data.get("fingerprint"),
        )


def add_up(columns: Sequence[Column]) -> list[tuple[Any, int, float]]:
    """One group's keys over ``columns`` (its cells of many days), each once, with its rows
    and weight added up in the order of ``columns``. Integer or float keys (bins, a score's
    values) are added on numpy (:func:`add_up_column`); any other keys one by one, as equal
    keys of a ``dict``."""
    summed = add_up_column(columns)
    if summed is None:
        return add_up_by_key(columns)
    return list(zip(*summed.lists(), strict=True))


def add_up_by_key(columns: Sequence[Column]) -> list[tuple[Any, int, float]]:
    """:func:`add_up` one key at a time, as equal keys of a ``dict`` (keys of any kind)."""
    out: dict[Any, list[Any]] = {}
    for column in columns:
        sum_counts(out, *column.lists())
    return [(key, int(n), float(w)) for key, (n, w) in out.items()]


def add_up_column(columns: Sequence[Column]) -> Column | None:
    """:func:`add_up` in arrays: the group's distinct keys in ascending order (int64 or
    float64), their rows (int64) and weights (float64) added up in the order of ``columns``;
    None where the keys are not all integers or all floats (NaN, text, dates, NULL)."""
    columns = [c for c in columns if len(c.keys)]
    arrays = [_numeric(c.keys) for c in columns]
    kinds = {a.dtype for a in arrays if a is not None}
    if not columns:
        return Column(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))
    if any(a is None for a in arrays) or len(kinds) != 1:
        return None
    values = np.concatenate([a for a in arrays if a is not None])
    rows = np.concatenate([np.asarray(c.rows) for c in columns]).astype(np.float64)
    weights = np.concatenate([np.asarray(c.weights) for c in columns]).astype(np.float64)
    unique, inverse = np.unique(values, return_inverse=True)
    size = unique.size
    total_rows = np.bincount(inverse, weights=rows, minlength=size)
    total_weights = np.bincount(inverse, weights=weights, minlength=size)
    return Column(unique, total_rows.astype(np.int64), total_weights)


_INTS = frozenset({int, np.int64})
_FLOATS = frozenset({float, np.float64})


def _numeric(keys: Values) -> npt.NDArray[Any] | None:
    """``keys`` as a numpy array where they are all integers or all floats but NaN (a NaN is
    a ``dict`` key of its own), with no value lost; else None."""
    if isinstance(keys, np.ndarray):  # read packed: int64 or float64, as packed
        return None if keys.dtype.kind == "f" and np.isnan(keys).any() else keys
    kinds = set(map(type, keys))
    if not kinds:
        return None
    if kinds <= _INTS:
        try:
            return np.asarray(keys, dtype=np.int64)
        except OverflowError:
            return None
    if kinds <= _FLOATS:
        values = np.asarray(keys, dtype=np.float64)
        return None if np.isnan(values).any() else values
    return None


def _plain(values: Values) -> list[Any]:
    plain: list[Any] = values.tolist() if isinstance(values, np.ndarray) else values
    return plain


#: a packed column's kinds: its bytes' layout, and the array they read back as
_PACKED = {"i8": (np.dtype("<i8"), np.int64), "f8": (np.dtype("<f8"), np.float64)}


def _pack(values: npt.NDArray[Any]) -> str:
    """``values`` (int64 or float64) as ``"i8:"`` or ``"f8:"`` and the base64 of their
    little-endian bytes."""
    kind = "i8" if values.dtype.kind in "iu" else "f8"
    data = np.ascontiguousarray(values, dtype=_PACKED[kind][0]).tobytes()
    return f"{kind}:{base64.b64encode(data).decode('ascii')}"


def _unpack(text: str) -> npt.NDArray[Any]:
    kind, _, data = text.partition(":")
    layout, native = _PACKED[kind]
    return np.frombuffer(base64.b64decode(data), dtype=layout).astype(native)


# ----------------------------------------------------------------------- JSON of cell keys
def _tag(value: Any) -> Any:
    """``value`` as JSON: as itself where JSON keeps its type, else a tagged list."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ["f", repr(value)]
    if isinstance(value, dt.datetime):
        return ["t", value.isoformat()]
    if isinstance(value, dt.date):
        return ["d", value.isoformat()]
    if isinstance(value, decimal.Decimal):
        return ["D", str(value)]
    if isinstance(value, np.generic):
        return _tag(value.item())
    raise TypeError(f"cannot keep a cell keyed {value!r} ({type(value).__name__})")


def _untag(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    kind, text = value
    if kind == "f":
        return float(text)
    if kind == "t":
        return dt.datetime.fromisoformat(text)
    if kind == "d":
        return dt.date.fromisoformat(text)
    return decimal.Decimal(text)


def _tag_group(group: Group) -> list[Any]:
    variable, segments, label = group
    return [variable, [_tag(s) for s in segments], _tag(label)]


def _untag_group(variable: str, segments: Sequence[Any], label: Any) -> Group:
    values = tuple(_untag(s) if type(s) is list else s for s in segments)
    return (variable, values, _untag(label) if type(label) is list else label)


def _tag_key(key: CellKey) -> list[Any]:
    variable, segments, label, value = key
    return [*_tag_group((variable, segments, label)), _tag(value)]


def _untag_key(data: Sequence[Any]) -> CellKey:
    variable, segments, label, value = data
    return (*_untag_group(variable, segments, label), _untag(value))


def _floats(values: Any) -> list[Any]:
    array = np.asarray(values, dtype=np.float64)
    plain: list[Any] = array.tolist()
    return plain if np.isfinite(array).all() else [_tag(v) for v in plain]


def _unfloats(values: Sequence[Any]) -> list[float]:
    return [v if type(v) is float else float(_untag(v)) for v in values]


def sum_counts(
    held: dict[Any, list[Any]], keys: Iterable[Any], rows: Iterable[Any], weights: Iterable[Any]
) -> None:
    """Add each key's rows and weight into ``held`` (key -> [rows, weight]), in key order."""
    for key, n, w in zip(keys, rows, weights, strict=True):
        cell = held.get(key)
        if cell is None:
            held[key] = [n, w]
        else:
            cell[0] += n
            cell[1] += w
