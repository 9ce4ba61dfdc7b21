"""A population's variable's cells held in columns (``riskmon.collect.celltable``) sum as a
dict of cells added one at a time does: the same cells, in the order they first came, with the
same sums to the last bit, whether they come one by one or a batch at a time, and however
often they are summed on the way."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.collect import celltable
from riskmon.collect.aggregate import Aggregate
from riskmon.collect.celltable import CellTable, Codes, aligned

_FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)
_CELL = st.tuples(
    st.sampled_from([("a",), ("b",), ("c", 1)]),  # segment values
    st.sampled_from([0, 1, None]),  # label
    st.one_of(st.integers(0, 6), st.sampled_from(["x", None, 2.5])),  # key
    st.integers(0, 50),  # rows
    _FLOATS,  # weight
    st.lists(_FLOATS, min_size=3, max_size=3),  # PD sums
)


def _by_dict(cells: list[tuple[Any, ...]]) -> dict[Any, list[Any]]:
    """The reference: cells added one at a time into a dict, sums by ``+=``."""
    out: dict[Any, list[Any]] = {}
    for segment, label, key, rows, weight, sums in cells:
        held = out.setdefault((segment, label, key), [0, 0.0, np.zeros(3)])
        held[0] += rows
        held[1] += weight
        held[2] = held[2] + np.asarray(sums)
    return out


def _read(aggregate: Aggregate) -> dict[Any, list[Any]]:
    return {key[2:]: [n, w, s] for key, n, w, s, _ in aggregate.read("current", "score")}


@settings(max_examples=150, deadline=None)
@given(cells=st.lists(_CELL, max_size=60), batch=st.integers(1, 7), small=st.booleans())
def test_sums_as_a_dict_does(cells: list[tuple[Any, ...]], batch: int, small: bool) -> None:
    """One by one (``add``) and a batch at a time (``add_grouped``), summed often or once: the
    dict's cells, order and sums, bit for bit."""
    with pytest.MonkeyPatch.context() as patch:
        if small:  # sum after every few rows, so that cells span many summings
            patch.setattr(celltable, "_ROW_BATCH", 3)
            patch.setattr(celltable, "_MIN_PENDING", 2)
        _check_sums(cells, batch)


def _check_sums(cells: list[tuple[Any, ...]], batch: int) -> None:
    expected = _by_dict(cells)
    one = Aggregate()
    for segment, label, key, rows, weight, sums in cells:
        one.add(("current", "score", segment, label, key), rows, weight, sums)
    many = Aggregate()
    for start in range(0, len(cells), batch):
        part = cells[start : start + batch]
        groups = many.groups([("current", c[0], c[1]) for c in part])
        many.add_grouped(
            "score",
            groups,
            [c[2] for c in part],
            (np.arange(len(part)), np.arange(len(part))),
            np.asarray([c[3] for c in part]),
            np.asarray([c[4] for c in part], np.float64),
            np.asarray([c[5] for c in part], np.float64).reshape(-1, 3),
        )
    for aggregate in (one, many):
        got = _read(aggregate) if cells else {}
        assert list(got) == list(expected)  # the order cells first came
        for cell, (n, w, s) in expected.items():
            assert got[cell][0] == n
            assert isinstance(got[cell][0], int)
            assert got[cell][1] == w  # the same double: added in the same order, from 0
            assert got[cell][2].tolist() == s.tolist()


def test_equal_values_share_a_code_as_dict_keys_do() -> None:
    codes = Codes()
    assert [codes.code(v) for v in (1, 1.0, True, "1", None, 2)] == [0, 0, 0, 1, 2, 3]
    assert codes.values == [1, "1", None, 2]  # the first of equal values is kept
    assert len(codes) == 4


def test_a_cell_without_sums_reads_none() -> None:
    """Where only some cells have PD sums (a merged window's days), the others read None,
    and a log of other cells than the counts' is matched cell by cell."""
    table = CellTable()
    table.add((0, 0, 0), 2, 2.0, None, None)
    table.add((0, 0, 1), 3, 3.0, [1.0, None], None)  # a NULL sum, of no rows, as 0
    table.add_sums((0, 0, 0), "sums", [0.5, 0.25])
    counts, sums, moments = table.summed()
    assert counts.codes.tolist() == [[0, 0, 0], [0, 0, 1]]
    assert sums is not None
    assert sums.codes.tolist() == [[0, 0, 1], [0, 0, 0]]
    read = list(aligned(counts.codes, sums))
    assert [r.tolist() for r in read] == [[0.5, 0.25], [1.0, 0.0]]
    assert list(aligned(counts.codes, moments)) == [None, None]


def test_add_all_recodes_the_other_aggregates_cells() -> None:
    """Cells of another aggregate, coded in another order, are added under this one's codes."""
    mine, theirs = Aggregate(), Aggregate()
    mine.add(("current", "score", ("a",), 0, 5), 1, 1.0)
    theirs.add(("current", "score", ("b",), 1, 7), 2, 0.5)
    theirs.add(("current", "score", ("a",), 0, 5), 3, 2.0)
    mine.add_all(theirs)
    assert mine.cell_dict() == {
        ("current", "score", ("a",), 0, 5): (4, 3.0),
        ("current", "score", ("b",), 1, 7): (2, 0.5),
    }
