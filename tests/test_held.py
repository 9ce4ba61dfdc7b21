"""Records held in columns (riskmon.held) read back as the records given, and looked up as a
dictionary of the records would look them up."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.figure_table import Figures
from riskmon.held import Held
from riskmon.records import ALL, CURRENT, PERFORMANCE, BinRecord, FigureRecord, Status

_TEXTS = st.sampled_from(["", "a", "b", "region=north", "ünïcode", "x" * 40])
_FLOATS = st.floats(allow_nan=False) | st.none()
_PARAMS = st.dictionaries(
    st.sampled_from(["n", "mean_pd", "grade", "note", "window"]),
    st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.floats(allow_nan=False).map(np.float64)  # not a float column's: held as it is
    | st.none()
    | _TEXTS
    | st.lists(st.integers()),
    max_size=4,
)
_FIGURES = st.builds(
    FigureRecord,
    name=st.sampled_from(["ks", "psi", "n_rows", "grade_jeffreys_p"]),
    value=_FLOATS,
    population=st.sampled_from([CURRENT, PERFORMANCE]),
    variable=_TEXTS,
    segment=_TEXTS,
    reason=_TEXTS | st.none(),
    params=_PARAMS,
)
_BINS = st.builds(
    BinRecord,
    variable=_TEXTS,
    population=st.sampled_from([CURRENT, PERFORMANCE]),
    bin_index=st.integers(-1, 10_000),
    label=_TEXTS,
    n_total=st.integers(0, 2**62),
    total=st.floats(allow_nan=False),
    segment=_TEXTS,
    lower=_FLOATS,
    upper=_FLOATS,
    n_bads=st.integers(0, 2**40) | st.none(),
    bads=_FLOATS,
    woe=_FLOATS,
    smoothed=st.booleans(),
    extra=_PARAMS,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_FIGURES, max_size=30), st.lists(_BINS, max_size=30))
def test_records_read_back_as_given_with_their_types(
    figures: list[FigureRecord], bins: list[BinRecord]
) -> None:
    held_figures, held_bins = Held(FigureRecord, figures), Held(BinRecord, bins)
    assert len(held_figures) == len(figures)
    assert len(held_bins) == len(bins)
    # repr: an int stays an int, a bool a bool, None None (equality alone would not tell)
    assert [repr(f) for f in held_figures] == [repr(f) for f in figures]
    assert [repr(b) for b in held_bins] == [repr(b) for b in bins]
    assert held_figures == figures
    assert list(held_bins[::-1]) == bins[::-1]
    if figures:
        assert held_figures[-1] == figures[-1]


@settings(max_examples=200, deadline=None)
@given(st.lists(_FIGURES, max_size=40), st.lists(_FIGURES, max_size=10))
def test_a_figure_is_found_as_a_dictionary_of_the_records_finds_it(
    first: list[FigureRecord], then: list[FigureRecord]
) -> None:
    figures = Figures(first)
    keys = [(f.name, f.population, f.variable, f.segment) for f in first + then]
    before = _index(first)
    assert all(figures.get(*k) == before.get(k) for k in keys)
    figures.extend(then)  # the index made by the look-ups above is made again
    index = _index(first + then)
    for key in [*keys, ("ks", CURRENT, "no such variable", ALL)]:
        assert figures.get(*key) == index.get(key)  # the last of equal keys, as a dict holds
    assert figures.names() == {f.name for f in first + then}
    assert list(figures.named("ks")) == [f for f in first + then if f.name == "ks"]
    assert list(figures.named("psi", population=CURRENT, segment="a")) == [
        f for f in first + then if (f.name, f.population, f.segment) == ("psi", CURRENT, "a")
    ]
    assert figures.segments() == sorted(
        {f.segment for f in first + then}, key=lambda s: (s != ALL, s)
    )


def _index(records: list[FigureRecord]) -> dict[tuple[str, str, str, str], FigureRecord]:
    return {(f.name, f.population, f.variable, f.segment): f for f in records}


def test_a_record_read_is_a_copy_changing_it_changes_nothing_held() -> None:
    held = Held(FigureRecord, [FigureRecord("ks", 0.4, CURRENT, params={"n": 3})])
    held[0].params["n"] = 99
    assert held[0].params == {"n": 3}
    assert held[0].params is not held[0].params


def test_empty_documents_and_no_records() -> None:
    held = Held(FigureRecord, [FigureRecord("ks", None, CURRENT)])
    assert held[0] == FigureRecord("ks", None, CURRENT, params={})
    assert list(Held(BinRecord)) == []
    assert Figures().get("ks", CURRENT) is None
    assert Figures().variables("ks") == []
    assert Figures().segments() == []
    with pytest.raises(IndexError):
        held[1]


def test_a_field_it_cannot_hold_is_named() -> None:
    @dataclass(frozen=True)
    class Odd:
        name: str
        when: list[int]

    with pytest.raises(TypeError, match=r"Odd\.when: a field of type 'list\[int\]'"):
        Held(Odd)


def test_many_records_read_back_in_batches_and_as_rows() -> None:
    bins = [
        BinRecord(
            f"v{i % 7}",
            CURRENT,
            i,
            f"({i}, {i + 1}]",
            i,
            i / 3,
            woe=None if i % 5 else i / 7,
            smoothed=i % 2 == 0,
            extra={"grade": i} if i % 3 else {},
        )
        for i in range(25_001)  # more than two batches
    ]
    held = Held(BinRecord, iter(bins))
    assert list(held) == bins
    assert list(held.rows(skip={"extra"})) == [
        {name: getattr(b, name) for name in BinRecord.__slots__ if name != "extra"} for b in bins
    ]


def test_a_record_it_cannot_hold_leaves_what_it_held_as_it_was() -> None:
    good = [FigureRecord("ks", 0.3, CURRENT, segment=f"s{i}", params={"n": i}) for i in range(5)]
    held = Figures(good)
    assert held.get("ks", CURRENT, segment="s4") == good[4]
    bad = [FigureRecord("psi", 0.1, CURRENT, segment="new"), FigureRecord("psi", "x", CURRENT)]  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        held.extend(bad)
    assert list(held) == good
    assert held.get("ks", CURRENT, segment="s4") == good[4]
    assert held.get("psi", CURRENT, segment="new") is None
    held.extend(good[:1])
    assert list(held) == [*good, good[0]]


def test_parameters_of_a_failed_extend_are_dropped_in_every_column_of_their_keys() -> None:
    """A record that fails in a later batch drops the batches before it, their parameters
    included (floats held in arrays, and a key whose values stopped being all floats)."""
    good = [
        FigureRecord("ks", 0.3, CURRENT, segment=f"s{i}", params={"mean_pd": i / 7, "n": i})
        for i in range(5)
    ]
    held = Figures(good)
    more = [
        FigureRecord("ks", 0.1, CURRENT, params={"mean_pd": i / 3, "n": None if i % 2 else 1.5})
        for i in range(12_000)
    ]
    more.append(FigureRecord("psi", "x", CURRENT))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        held.extend(more)
    assert list(held) == good
    again = [FigureRecord("gini", 0.2, CURRENT, params={"mean_pd": 0.25, "n": 2.5})]
    held.extend(again)
    assert list(held) == [*good, *again]
    assert [f.params for f in held] == [*(f.params for f in good), {"mean_pd": 0.25, "n": 2.5}]


def test_a_key_too_large_for_numpys_integers_is_found_all_the_same() -> None:
    # 70,000 texts in each of the four fields: 70,001⁴ keys, beyond 2⁶², indexed in Python
    figures = [FigureRecord(f"n{i}", i, f"p{i}", f"v{i}", f"s{i}") for i in range(70_000)]
    held = Figures(figures)
    for i in (0, 1, 4_097, 69_999):
        assert held.get(f"n{i}", f"p{i}", f"v{i}", f"s{i}") == figures[i]
        assert held.value(f"n{i}", f"p{i}", f"v{i}", f"s{i}") == i
    assert held.get("n1", "p2", "v1", "s1") is None


def test_records_added_while_it_is_read_or_looked_up_are_neither_lost_nor_read_twice() -> None:
    figures = Figures(FigureRecord("ks", i, CURRENT, segment=f"s{i}") for i in range(15_000))

    def looking_up() -> Iterator[FigureRecord]:
        for i in range(3):
            assert figures.get("ks", CURRENT, segment="s1") is not None  # an index made midway
            yield FigureRecord("psi", i, CURRENT, segment=f"new{i}")

    figures.extend(looking_up())
    assert [figures.value("psi", CURRENT, segment=f"new{i}") for i in range(3)] == [0, 1, 2]
    figures.extend(figures)  # itself: the 15,003 records it held when asked, once
    assert len(figures) == 30_006
    assert list(figures)[15_003:] == list(figures)[:15_003]


def test_a_record_it_cannot_hold_in_a_later_batch_leaves_nothing_of_the_earlier_ones() -> None:
    held = Held(FigureRecord, [FigureRecord("ks", 0.3, CURRENT)])
    many = [FigureRecord("psi", 0.1, CURRENT, segment=f"s{i}") for i in range(12_000)]
    with pytest.raises(TypeError):
        held.extend([*many, FigureRecord("psi", "x", CURRENT)])  # type: ignore[arg-type]
    assert list(held) == [FigureRecord("ks", 0.3, CURRENT)]


def test_a_float_field_reads_back_a_python_float() -> None:
    (back,) = Held(FigureRecord, [FigureRecord("n_rows", 3, CURRENT)])
    assert back.value == 3
    assert type(back.value) is float


def test_a_parameter_column_keeps_each_values_type_when_a_later_value_has_another() -> None:
    """A key's column is typed by its first value (integers, texts) and becomes a list when a
    value of another type comes: a bool after integers, an integer beyond 64 bits, a float, a
    text of a ``str`` subclass, None; each value reads back as given."""
    firsts: list[dict[str, object]] = [{"n": i, "method": "exact", "x": 0.5} for i in range(3)]
    odd: list[object] = [2**40, True, 2**70, -(2**63) - 1, 1.0, Status.GREEN, None, np.int64(4)]
    records = [
        FigureRecord("ks", 0.1, CURRENT, params=params)
        for params in (
            *firsts,
            *({"n": v, "method": "exact", "x": 0.5} for v in odd),
            *({"n": 1, "method": v, "x": 0.5} for v in odd),
            *({"n": 1, "method": "exact", "x": v} for v in odd),
            {"n": 2**63 - 1, "method": "", "x": -0.0},
        )
    ]
    held = Held(FigureRecord, records)
    assert [repr(f) for f in held] == [repr(f) for f in records]
    # a column typed from the start again after its records were dropped
    held = Held(FigureRecord, records[:3])
    with pytest.raises(TypeError):
        held.extend([*records[3:], FigureRecord("psi", "x", CURRENT)])  # type: ignore[arg-type]
    assert [repr(f) for f in held] == [repr(f) for f in records[:3]]


def test_integer_and_text_parameters_are_held_in_arrays_and_codes() -> None:
    def figures() -> Iterator[FigureRecord]:
        for i in range(100_000):
            params = {"n_bads": 1000 + i, "n_goods": 50_000 + i, "method": ("exact", "mid")[i % 2]}
            yield FigureRecord("ks", 0.25, CURRENT, segment=f"s{i % 5000}", params=params)

    tracemalloc.start()
    try:  # the records made while traced and dropped once held: what is held stays
        held = Held(FigureRecord, figures())
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held == list(figures())
    # a record: 5 text codes (4 bytes each), a value (8) and its None byte, its parameters'
    # row (4), two integers (8 each) and a text's code (4), and the 5,000 segments' texts:
    # about 63 bytes (the parameters' integers boxed in lists took about 120)
    assert size / 100_000 < 70, size / 100_000


def test_more_texts_than_two_bytes_code_read_back_as_given() -> None:
    """Texts are coded in 2 bytes until a field or a parameter has more than 32,767 of them,
    then in 4; an integer field in 4 bytes until a value needs 8."""
    figures = [
        FigureRecord("ks", 0.5, CURRENT, segment=f"s{i}", params={"note": f"n{i}", "n": i})
        for i in range(40_000)
    ]
    bins = [
        BinRecord("score", CURRENT, i, f"b{i}", 2**31 if i == 39_999 else i, 1.0)
        for i in range(40_000)
    ]
    held_figures, held_bins = Figures(figures), Held(BinRecord, bins)
    assert list(held_figures) == figures
    assert list(held_bins) == bins
    assert held_figures.get("ks", CURRENT, segment="s39999") == figures[-1]
    assert held_figures.get("ks", CURRENT, segment="s40000") is None
