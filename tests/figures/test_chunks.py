"""A family's records given segment by segment are held in columns as they come: the run
holds what all families gave, in order, and never a family's records for every segment."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from riskmon.figures import Chunk, chunks, hold_computed
from riskmon.figures import _chunks as chunks_module
from riskmon.figures._chunks import ROWS_NOT_WEIGHTS
from riskmon.records import CURRENT, PERFORMANCE, BinRecord, FigureRecord


def _segment(segment: int) -> Chunk:
    name = f"s{segment:04d}"
    figures = [
        FigureRecord("ks", 0.25 + segment / 10_000, PERFORMANCE, segment=name),
        FigureRecord("psi", None, CURRENT, "score", name, reason="segment not in the baseline"),
    ]
    bins = [BinRecord("score", CURRENT, i, f"bin {i}", 10 + i, 10.0 + i, name) for i in range(3)]
    return figures, bins


def _by_segment(n: int, start: int = 0) -> Iterator[Chunk]:
    for segment in range(start, start + n):
        yield _segment(segment)


def _expected(n_first: int, n_rest: int) -> Chunk:
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    for found, rows in [*(_segment(s) for s in range(n_first)), *_by_segment(n_rest, n_first)]:
        figures += found
        bins += rows
    return figures, bins


def test_records_given_at_once_or_by_segment_are_held_in_the_order_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chunks_module, "HOLD_EVERY", 7)  # many holds, mid-family too
    at_once = _expected(3, 0)
    figures, bins = hold_computed([at_once, _by_segment(40, 3)], row_tests=())
    assert list(figures) == _expected(3, 40)[0]
    assert list(bins) == _expected(3, 40)[1]
    assert figures.get("ks", PERFORMANCE, segment="s0042") is not None


def test_the_figures_of_row_tests_are_marked_in_every_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks_module, "HOLD_EVERY", 5)
    figures, _ = hold_computed([_by_segment(12)], row_tests={"ks", "psi"})
    ks = [f for f in figures if f.name == "ks"]
    assert len(ks) == 12
    assert all(f.params == {"approximate": ROWS_NOT_WEIGHTS} for f in ks)
    # a figure without a value has no test to call approximate
    assert all(f.params == {} for f in figures if f.name == "psi")


def test_a_family_by_segment_is_not_held_as_records_for_all_its_segments() -> None:
    """The records of the segments given first are no longer alive (only their columns are)
    while the family still gives more."""
    alive_while_giving: list[int] = []

    def family() -> Iterator[Chunk]:
        for segment in range(3_000):  # 15,000 records: three holds of HOLD_EVERY
            yield _segment(segment)
        gc.collect()
        alive_while_giving.append(sum(isinstance(o, FigureRecord) for o in gc.get_objects()))

    figures, bins = hold_computed([family()], row_tests=())
    assert len(figures) == 6_000
    assert len(bins) == 9_000
    # at most one hold's worth of records (HOLD_EVERY, figures and bins together) waits
    assert 0 < alive_while_giving[0] <= chunks_module.HOLD_EVERY


def test_a_family_that_fails_midway_raises_its_error() -> None:
    def family() -> Iterator[Chunk]:
        yield from _by_segment(2_000)
        raise ValueError("segment s2000: no table")

    with pytest.raises(ValueError, match="s2000"):
        hold_computed([family()], row_tests=())


def test_one_chunk_or_many_read_alike() -> None:
    one = _segment(1)
    assert list(chunks(one)) == [one]
    assert list(chunks(_by_segment(2))) == [_segment(0), _segment(1)]
