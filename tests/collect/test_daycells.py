"""A group's cells summed over days: on numpy for integer and float keys, one by one for any
other, each way as a ``dict`` of the keys would add them; a column kept packed reads back bit
for bit, and adds up as it did before it was kept."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.collect import daycells
from riskmon.collect.daycells import Column, DayCells, add_up, add_up_column


def _by_dict(days: list[list[tuple[Any, int, float]]]) -> dict[Any, tuple[int, float]]:
    """The reference: every day's cells added into a dict, in order."""
    out: dict[Any, tuple[int, float]] = {}
    for day in days:
        for key, n, w in day:
            before = out.get(key, (0, 0.0))
            out[key] = (before[0] + n, before[1] + w)
    return out


def _columns(days: list[list[tuple[Any, int, float]]]) -> list[Column]:
    columns = []
    for day in days:
        column = Column()
        for key, n, w in day:
            column.append(key, n, w)
        columns.append(column)
    return columns


_DECIMALS = st.decimals(places=2, allow_nan=False, allow_infinity=False)


def _cells(keys: st.SearchStrategy[Any]) -> st.SearchStrategy[list[list[tuple[Any, int, float]]]]:
    # a day's keys are distinct, as a GROUP BY returns them
    day = st.lists(
        st.tuples(keys, st.integers(1, 10**6), st.floats(0, 1e9)),
        max_size=30,
        unique_by=lambda cell: cell[0],
    )
    return st.lists(day, max_size=6)


@settings(max_examples=150)
@given(
    days=st.one_of(
        _cells(st.integers(-5, 40)),  # bins
        _cells(st.integers(-(2**70), 2**70)),  # beyond int64: one by one
        _cells(st.floats(allow_nan=False, allow_infinity=True)),  # a score's values, -0.0
        _cells(st.sampled_from([0.1, 0.25, float("nan"), 1.0])),  # NaN: a key of its own
        _cells(st.one_of(st.integers(0, 3), st.floats(0, 1))),  # mixed: one by one
        _cells(st.one_of(st.text(max_size=3), st.dates(), _DECIMALS)),
    )
)
def test_add_up_adds_each_key_as_a_dict_would(days: list[list[tuple[Any, int, float]]]) -> None:
    reference = _by_dict(days)
    out = add_up(_columns(days))
    assert len(out) == len({_identity(k) for k, _, _ in out})  # each key once
    assert {_identity(k): (n, w) for k, n, w in out} == {
        _identity(k): v for k, v in reference.items()
    }
    for key, n, _ in out:
        assert type(n) is int, key


@settings(max_examples=100)
@given(
    days=st.one_of(
        _cells(st.integers(-5, 40)),
        _cells(st.floats(allow_nan=False, allow_infinity=True)),
        _cells(st.one_of(st.integers(0, 3), st.floats(0, 1))),
        _cells(st.sampled_from([0.1, float("nan")])),
    )
)
def test_add_up_column_holds_the_keys_in_order_or_says_it_cannot(
    days: list[list[tuple[Any, int, float]]],
) -> None:
    """In arrays: each key once, ascending, with add_up's rows and weights; None where the
    keys are not all integers or all floats (a NaN, an integer among floats)."""
    columns = _columns(days)
    summed = add_up_column(columns)
    keys = [k for day in days for k, _, _ in day]
    numbers = all(type(k) is int for k in keys) or all(type(k) is float and k == k for k in keys)
    assert (summed is not None) == numbers
    if summed is None:
        return
    assert isinstance(summed.keys, np.ndarray)
    assert np.asarray(summed.rows).dtype == np.int64
    assert np.all(np.diff(summed.keys) > 0)
    assert list(zip(*summed.lists(), strict=True)) == sorted(add_up(columns))


def _identity(key: Any) -> Any:
    """A key as a dict tells keys apart (NaN by its object, so by its repr here)."""
    if isinstance(key, float) and key != key:
        return ("nan", id(key))
    if isinstance(key, float) and key == 0:
        return 0.0  # 0.0 and -0.0 are one key of a dict
    return key


def test_add_up_keeps_the_keys_types() -> None:
    days = [[(3, 2, 1.5), (1, 1, 0.5)], [(3, 4, 2.0)]]
    assert sorted(add_up(_columns(days))) == [(1, 1, 0.5), (3, 6, 3.5)]
    assert all(type(k) is int for k, _, _ in add_up(_columns(days)))
    scores = [[(0.125, 1, 1.0)], [(0.125, 2, 2.0), (np.float64(0.5), 1, 1.0)]]
    assert sorted(add_up(_columns(scores))) == [(0.125, 3, 3.0), (0.5, 1, 1.0)]
    others = [[(dt.date(2025, 1, 1), 1, 1.0)], [(decimal.Decimal("1.10"), 2, 2.0)]]
    assert {k for k, _, _ in add_up(_columns(others))} == {
        dt.date(2025, 1, 1),
        decimal.Decimal("1.10"),
    }


def _kept(columns: list[Column]) -> list[Column]:
    """``columns`` as a later run reads them back from the store, packed where they may be."""
    cells = DayCells(cells={("v", (f"s{i}",), 1): c for i, c in enumerate(columns)})
    back = DayCells.from_json(json.loads(json.dumps(cells.to_json())))
    return list(back.cells.values())


@settings(max_examples=150)
@given(
    days=st.one_of(
        _cells(st.integers(-5, 40)),
        _cells(st.integers(-(2**70), 2**70)),
        _cells(st.floats(allow_nan=False, allow_infinity=True)),
        _cells(st.sampled_from([0.1, 0.25, -0.0, 0.0, 1.0])),  # (a NaN read back is new)
        _cells(st.one_of(st.integers(0, 3), st.floats(0, 1))),
        _cells(st.one_of(st.text(max_size=3), st.dates(), _DECIMALS)),
    ),
    fresh=st.integers(0, 6),
)
def test_columns_read_back_packed_add_up_as_they_were_read(
    days: list[list[tuple[Any, int, float]]], fresh: int
) -> None:
    """Every day but the ``fresh`` newest kept and read back (packed wherever the keys allow
    it), the fresh ones as read: the sums are those of the columns as read, to the bit."""
    columns = _columns(days)
    old = len(columns) - min(fresh, len(columns))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(daycells, "PACKED_MIN", 1)
        stored = _kept(columns[:old])
    assert repr(add_up([*stored, *columns[old:]])) == repr(add_up(columns))


def test_a_packed_column_is_its_values_bit_for_bit() -> None:
    scores = [0.1, -0.0, 1e-300, math.inf, -math.inf, 0.30000000000000004] * 20
    column = Column(list(scores), list(range(120)), [float(i) / 3 for i in range(120)])
    ints = Column(list(range(-60, 60)), [2**40] * 120, [1.5] * 120)
    few = Column([0.25, 0.5], [1, 2], [1.0, 2.0])
    keys, rows, _weights = column.to_json()
    assert type(keys) is str
    assert keys.startswith("f8:")
    assert rows.startswith("i8:")
    assert few.to_json() == [[0.25, 0.5], [1, 2], [1.0, 2.0]]  # fewer than PACKED_MIN: numbers
    for before, after in zip([column, ints, few], _kept([column, ints, few]), strict=True):
        assert repr(after.lists()) == repr(before.lists())
    assert ints.packed().keys.dtype == np.int64
    assert np.array_equal(ints.packed().keys, ints.keys)
    mixed = Column([1, 0.5], [1, 1], [1.0, 1.0])
    assert mixed.packed() is mixed  # an integer beside a float: kept as read
