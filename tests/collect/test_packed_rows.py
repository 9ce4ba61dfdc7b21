"""``riskmon.collect.packed_rows``: a ``packed`` statement's rows added up as arrays, a batch
at a time, give the cells, sums, invalid counts and census that adding them row by row into
the aggregate gives (the way every other layout is read)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Date, Float, Integer, MetaData, String, Table

from riskmon.collect.aggregate import Aggregate
from riskmon.collect.census import LevelTally
from riskmon.collect.packed_rows import PackedRows, _factorized
from riskmon.collect.request import CollectRequest, Variable
from riskmon.collect.selection import QueryColumns, statement_groups

from .test_collect import request

N_SUMS, N_MOMENTS = 3, 2  # the bad count and two sums; the bad count and a moment
COLUMNS = ("exposure", "channel", "pd_score", "income", "region", "grade")


UNSEEN = 4  # the last bin of the census's variable (``region``: three levels, missing, unseen)


def _bin(key: Any) -> Any:
    """Texts to bins, several texts to one bin (as a categorical's unseen levels)."""
    return key if not isinstance(key, str) else min(len(key), UNSEEN)


@st.composite
def _rows(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    segment = st.sampled_from(["a", "b", None])
    key = st.one_of(st.integers(0, 4), st.none(), st.sampled_from(["x", "yy", "zzzzzzzzzz", ""]))
    maybe = st.one_of(st.none(), st.floats(-5, 5, allow_nan=False, width=32))
    row = st.tuples(
        st.sampled_from([0, 1]),  # population
        segment,
        st.sampled_from([0, 1, None]),  # label
        key,
        key,
        st.integers(1, 30),  # rows
        st.floats(0.01, 1e6, allow_nan=False),  # weight
        st.sampled_from([0, 1, None]),  # invalid weights
        st.sampled_from([0, 2, None]),  # bad PDs
        maybe,
        maybe,
        st.sampled_from([0, 1, None]),  # bad targets
        maybe,
    )
    return draw(st.lists(row, max_size=40))


def _reference(
    aggregate: Aggregate, rows: list[tuple[Any, ...]], names: list[str], tally: LevelTally
) -> int:
    """Row by row, as ``riskmon.collect.grouped`` adds the rows of its other layouts."""
    invalid = 0
    for row in rows:
        population = ["current", "performance"][row[0]]
        n, w = row[5], row[6]
        for i, name in enumerate(names):
            key = _bin(row[3 + i])
            if name == names[0]:
                invalid += int(row[7] or 0)
                aggregate.count_invalid_pd(name, row[8])
            if name == names[1]:
                aggregate.count_invalid_target(name, row[11])
            if i == 1 and population == tally.population and key == UNSEEN:
                tally.add(name, str(row[3 + i]), n, w)
            aggregate.add(
                (population, name, (row[1],), row[2], key),
                n,
                w,
                row[9:11] if name == names[0] else None,
                row[12:] if name == names[1] else None,
            )
    return invalid


def _tally(req: CollectRequest, variables: tuple[Variable, ...]) -> LevelTally:
    tally = LevelTally(req)
    assert tally.watch([(1, variables[1])], ["current", "performance"]) == [(1, "region", UNSEEN)]
    return tally


@settings(max_examples=40, deadline=None)
@given(rows=_rows(), cuts=st.lists(st.integers(0, 40), max_size=4))
def test_packed_rows_add_up_as_row_by_row(rows: list[tuple[Any, ...]], cuts: list[int]) -> None:
    base = request()
    variables = (base.variables[2], base.variables[3])  # income, region
    names = [v.name for v in variables]
    req = dataclasses.replace(base, census=("region",), census_population="current")
    columns = [Column(n, String if n in {"channel", "region"} else Float) for n in COLUMNS]
    loans = Table("loans", MetaData(), Column("score_date", Date), Column("bad", Integer), *columns)
    (group,) = statement_groups(req)
    cols = QueryColumns(loans, req, group)
    ends = sorted(cuts)
    split = [rows[a:b] for a, b in zip([0, *ends], [*ends, len(rows)], strict=True)]
    results = []
    for batches in ([rows], split):
        aggregate, tally = Aggregate(), _tally(req, variables)
        packed = PackedRows(
            aggregate, cols, variables, [_bin, _bin], 1, True, 3, N_SUMS, N_MOMENTS,
            {names[0]}, {names[1]}, names[0], tally, [(1, "region", UNSEEN)],
        )  # fmt: skip
        invalid = sum(packed.add(batch) for batch in batches)
        results.append((aggregate, tally, invalid))
    expected, expected_tally = Aggregate(), _tally(req, variables)
    expected_invalid = _reference(expected, rows, names, expected_tally)
    for exact, (aggregate, tally, invalid) in zip((True, False), results, strict=True):
        assert invalid == expected_invalid
        got, wanted_cells = aggregate.cell_dict(), expected.cell_dict()
        assert got.keys() == wanted_cells.keys()
        for key, (n, w) in wanted_cells.items():
            got_n, got_w = got[key]
            assert got_n == n
            assert type(got_n) is int
            assert got_w == w if exact else np.isclose(got_w, w, rtol=1e-12, atol=0)
        for held, wanted in (
            (aggregate.sum_dict("sums"), expected.sum_dict("sums")),
            (aggregate.sum_dict("moments"), expected.sum_dict("moments")),
        ):
            assert held.keys() == wanted.keys()
            for key, values in wanted.items():
                tolerance = {"rtol": 0, "atol": 0} if exact else {"rtol": 1e-12, "atol": 1e-12}
                np.testing.assert_allclose(held[key], values, **tolerance)
        assert aggregate.invalid_pds == expected.invalid_pds
        assert aggregate.invalid_targets == expected.invalid_targets
        assert tally.censuses() == expected_tally.censuses()  # each level's rows in row order


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**40), max_size=300), st.integers(1, 50))
def test_keys_are_coded_by_first_appearance_as_pandas_factorize_codes_them(
    keys: list[int], spread: int
) -> None:
    # few distinct keys (many repeats) as well as many
    values = np.asarray([k % (spread * 7) if spread < 25 else k for k in keys], dtype=np.intp)
    codes, distinct = _factorized(values)
    expected_codes, expected_distinct = pd.factorize(values)
    assert codes.tolist() == expected_codes.tolist()
    assert distinct.tolist() == expected_distinct.tolist()
    assert codes.dtype == np.intp
