"""One population's sums on one score day (:class:`DayCells`), their JSON, and the sum of a
group's cells over many days (:func:`add_up`).

A day's cells are kept in columns: per *group* — (variable, segment values, label) — its keys
and, beside them, each key's rows and weight (:class:`Column`). A score ranked on its distinct
values puts thousands of keys a day in one group; as columns a window's days decode from JSON
and add up in a fraction of the time one tagged key each took (benchmarks/incremental.md).

JSON keeps a key's value as itself where it has a type of its own, else tagged (dates,
decimals, non-finite floats), so that a key reads back equal and of the same type.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from riskmon.records import Exclusions, LevelCount

#: a cell's key without its population: (variable, segment values, label, key)
CellKey = tuple[str, tuple[Any, ...], Any, Any]
#: a cell's group: (variable, segment values, label)
Group = tuple[str, tuple[Any, ...], Any]


@dataclass
class Column:
    """One group's cells on one day: its keys, and each key's rows and weight."""

    keys: list[Any] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)

    def append(self, key: Any, rows: int, weight: float) -> None:
        self.keys.append(key)
        self.rows.append(rows)
        self.weights.append(weight)


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
            for value, n, w in zip(column.keys, column.rows, column.weights, strict=True):
                yield (variable, segments, label, value), (n, w)

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [
                [
                    *_tag_group(g),
                    [_tag(k) for k in c.keys],
                    [int(n) for n in c.rows],
                    _floats(c.weights),
                ]
                for g, c in self.cells.items()
            ],
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
        cells = {
            _untag_group(variable, segments, label): Column(
                [_untag(k) if type(k) is list else k for k in keys],
                [int(n) for n in rows],
                _unfloats(weights),
            )
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
    values) are added on numpy; any other keys one by one, as equal keys of a ``dict``."""
    keys = list(chain.from_iterable(c.keys for c in columns))
    rows = list(chain.from_iterable(c.rows for c in columns))
    weights = list(chain.from_iterable(c.weights for c in columns))
    values = _numeric(keys)
    if values is None:
        out: dict[Any, list[Any]] = {}
        sum_counts(out, keys, rows, weights)
        return [(key, int(n), float(w)) for key, (n, w) in out.items()]
    unique, inverse = np.unique(values, return_inverse=True)
    size = unique.size
    total_rows = np.bincount(inverse, weights=np.asarray(rows, dtype=np.float64), minlength=size)
    total_weights = np.bincount(inverse, weights=np.asarray(weights, np.float64), minlength=size)
    return list(
        zip(
            unique.tolist(),
            total_rows.astype(np.int64).tolist(),
            total_weights.tolist(),
            strict=True,
        )
    )


_INTS = frozenset({int, np.int64})
_FLOATS = frozenset({float, np.float64})


def _numeric(keys: list[Any]) -> npt.NDArray[Any] | None:
    """``keys`` as a numpy array where they are all integers or all floats but NaN (a NaN is
    a ``dict`` key of its own), with no value lost; else None."""
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
