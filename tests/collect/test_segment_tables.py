"""The count tables made from a variable's cell columns (riskmon.collect.segment_tables) are, to
the last bit and in the same order, the tables made row by row from the cells as tuples."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.collect import CollectRequest, Population, Variable
from riskmon.collect.aggregate import Aggregate
from riskmon.collect.tables import assemble, segment_key
from riskmon.errors import InvalidDataError
from riskmon.metrics import Binning, CountTable
from riskmon.plan import DateWindow
from riskmon.records import ALL

BINS = Binning("numeric", edges=(0.1, 0.2, 0.4))
WINDOW = DateWindow(dt.date(2025, 1, 1), dt.date(2025, 3, 31))
REQUEST = CollectRequest(
    populations=[
        Population("development", WINDOW, labeled=True),
        Population("baseline", WINDOW, labeled=False, copy_of="development"),
        Population("current", WINDOW, labeled=False),
    ],
    variables=[
        Variable("score", "pd", BINS),  # bin indices
        Variable("score_values", "pd"),  # a score's values
    ],
    score_date="score_date",
    label="bad",
    weight="exposure",
    segments=("channel", "region"),
)
#: each variable's keys, drawn by index: bin indices, a score's values
KEYS = {"score": list(range(BINS.n_bins)), "score_values": [0.05, 0.3, 0.9, 0.3, 0.05]}
#: labels as drivers give them: integers, booleans, floats; None where not matured
LABELS = st.sampled_from([0, 1, True, False, 0.0, 1.0, None])

cells = st.lists(
    st.tuples(
        st.sampled_from(["development", "current"]),
        st.sampled_from(["web", "branch", None]),
        st.sampled_from(["north", "south", None]),
        LABELS,
        st.integers(0, BINS.n_bins - 1),
        st.integers(1, 40),
        st.floats(0, 1e6, allow_subnormal=False),
    ),
    max_size=80,
)


def _aggregate(drawn: list[tuple[Any, ...]]) -> Aggregate:
    aggregate = Aggregate()
    for population, channel, region, label, index, n, w in drawn:
        for variable, keys in KEYS.items():  # each loan counts in every variable
            aggregate.add((population, variable, (channel, region), label, keys[index]), n, w)
    return aggregate


def _row_by_row(aggregate: Aggregate) -> tuple[dict[Any, CountTable], dict[Any, tuple[int, int]]]:
    """The reference: each cell read as a tuple and appended to its segments' rows, each table
    made by ``CountTable.from_rows``."""
    tables, counts = {}, {}
    for population, variable in aggregate.tables:
        names = {population: population == "development"}
        if population == "development":
            names["baseline"] = False
        rows: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        for (_, _, values, label, key), n, w, _, _ in aggregate.read(population, variable):
            segments = [
                ALL,
                *(segment_key(c, v) for c, v in zip(REQUEST.segments, values, strict=True)),
            ]
            for segment in segments:
                rows[segment].append((key, label, n, w))
        for segment, group in rows.items():
            for name, labeled in names.items():
                usable = [r for r in group if r[1] is not None] if labeled else group
                tables[(name, variable, segment)] = CountTable.from_rows(
                    ((k, int(lb) if labeled else None, n, w) for k, lb, n, w in usable),
                    binning=REQUEST.variable(variable).binning,
                    labeled=labeled,
                )
                if variable == "score":
                    unlabeled = sum(r[2] for r in group if r[1] is None)
                    counts[(name, segment)] = (sum(r[2] for r in group), unlabeled)
    return tables, counts


@settings(max_examples=150, deadline=None)
@given(drawn=cells)
def test_the_columns_make_the_tables_rows_make(drawn: list[tuple[Any, ...]]) -> None:
    want, want_counts = _row_by_row(_aggregate(drawn))
    got = assemble(REQUEST, _aggregate(drawn))
    made = {k: t for k, t in got.tables.items() if k in want}
    assert list(made) == list(want)  # the same tables, in the same order
    for key, table in want.items():
        assert made[key].equals(table), key  # to the last bit
    for key, (n_all, n_unlabeled) in want_counts.items():
        assert (got.counts[key].n_rows, got.counts[key].n_unlabeled) == (n_all, n_unlabeled)
    # what is not in the reference: only the empty tables of a population without cells
    for key in got.tables.keys() - want.keys():
        assert key[2] == ALL, key
        assert got.tables[key].n_total.sum() == 0, key


def test_a_label_neither_0_nor_1_is_named() -> None:
    aggregate = Aggregate()
    for label in (0, None, 1, 2, 3):
        aggregate.add(("development", "score", ("web", None), label, 1), 5, 5.0)
    with pytest.raises(InvalidDataError, match="Expected label values 0 and 1, got 2"):
        assemble(REQUEST, aggregate)
