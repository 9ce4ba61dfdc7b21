"""A window summed from its stored days holds a variable whose keys are numbers in blocks (a
column of keys per segment and label, ``Aggregate.blocks``); its count tables, row counts and
checks are those of the same cells added one by one, and a variable with a key of another kind
(an integer among floats, a decimal) is held cell by cell as a whole."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.collect import CollectRequest, Population, Variable
from riskmon.collect.aggregate import Aggregate
from riskmon.collect.checks import check_cells
from riskmon.collect.daycells import Column, DayCells
from riskmon.collect.days import days_of, merge
from riskmon.collect.tables import assemble
from riskmon.metrics import Binning
from riskmon.plan import DateWindow

BINS = Binning("numeric", edges=(0.1, 0.2, 0.4))
START = dt.date(2025, 3, 1)
REQUEST = CollectRequest(
    populations=[
        Population(
            "current",
            DateWindow(START + dt.timedelta(days=2), START + dt.timedelta(days=5)),
            labeled=False,
        ),
        Population("performance", DateWindow(START, START + dt.timedelta(days=3)), labeled=True),
    ],
    variables=[
        Variable("score", "pd", BINS),  # bins: int keys
        Variable("score_values", "pd"),  # a score's values: float keys
        Variable("points", "points"),  # a scorecard's points: int keys
        Variable("odd", "odd"),
    ],
    score_date="score_date",
    label="bad",
    weight="exposure",
    segments=("channel",),
)
KEYS = {
    "score": st.integers(0, BINS.n_bins - 1),
    "score_values": st.sampled_from([0.05, 0.125, 0.3, 0.31, 0.9]),
    "points": st.integers(300, 310),
    # floats and, on some days, keys of other kinds: then cell by cell
    "odd": st.sampled_from([1.5, 2.5, 4, decimal.Decimal("3.5")]),
}


@st.composite
def _days(draw: st.DrawFn) -> dict[tuple[str, dt.date], DayCells]:
    out = {}
    for population in REQUEST.populations:
        labels = [0, 1, None] if population.labeled else [None]
        for day in days_of(population.window):
            cells = {}
            for variable, keys in KEYS.items():
                for channel in draw(st.sets(st.sampled_from(["web", "branch", None]))):
                    for label in draw(st.sets(st.sampled_from(labels))):
                        drawn = draw(st.lists(keys, min_size=1, max_size=5, unique_by=repr))
                        column = Column()
                        for key in drawn:
                            column.append(key, draw(st.integers(1, 50)), draw(st.floats(0, 1e6)))
                        cells[(variable, (channel,), label)] = column.packed()
            out[(population.name, day)] = DayCells(cells=cells)
    return out


def _one_by_one(days: dict[tuple[str, dt.date], DayCells]) -> Aggregate:
    """The reference: every stored cell added by ``Aggregate.add``, as a reading adds rows."""
    aggregate = Aggregate()
    for (population, _), cells in days.items():
        for (variable, segments, label, key), (n, w) in cells.items():
            aggregate.add((population, variable, segments, label, key), n, w)
    return aggregate


@settings(max_examples=60, deadline=None)
@given(days=_days())
def test_blocks_make_the_tables_the_cells_make(days: dict[tuple[str, dt.date], DayCells]) -> None:
    merged, _ = merge(REQUEST, days)
    reference = _one_by_one(days)
    in_blocks = {(p, v) for p, v, _, _ in merged.blocks}
    assert not set(merged.tables) & in_blocks  # a variable one way only
    for population in REQUEST.populations:
        odd: dict[tuple[Any, ...], set[type]] = {}  # each group's kinds of key, over the days
        for (name, _), cells in days.items():
            for (variable, *group, key), _ in cells.items():
                if name == population.name and variable == "odd":
                    odd.setdefault(tuple(group), set()).add(type(key))
        # in blocks where each group's keys are all integers or all floats
        numbers = bool(odd) and all(kinds in ({int}, {float}) for kinds in odd.values())
        assert ((population.name, "odd") in in_blocks) == numbers, odd
        held = {
            v
            for (name, _), cells in days.items()
            if name == population.name
            for v, *_ in cells.cells
        }
        for variable in {"score", "score_values", "points"} & held:
            assert (population.name, variable) in in_blocks
    found, expected = check_cells(REQUEST, merged, "pd"), check_cells(REQUEST, reference, "pd")
    assert (found.bad_labels, found.null_scores) == (expected.bad_labels, expected.null_scores)
    assert found.weights.keys() == expected.weights.keys()
    for population, weight in expected.weights.items():
        assert abs(found.weights[population] - weight) <= 1e-12 * max(weight, 1.0)
    tables, want = assemble(REQUEST, merged), assemble(REQUEST, reference)
    assert tables.equals(want, rtol=1e-12)
    assert not merged.blocks  # taken out as their tables were made
