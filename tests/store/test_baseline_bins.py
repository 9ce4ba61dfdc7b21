"""A baseline's bins held in columns (``BaselineBins``) read back as the records they were made
of; a run's figures, bins and alerts read back with their repeated texts and documents shared."""

from __future__ import annotations

import datetime as dt
import random
import tracemalloc
from dataclasses import replace

import pytest

from riskmon.figure_table import Figures
from riskmon.records import ALL, AlertRecord, BinRecord, FigureRecord, RunCounts, Status
from riskmon.store import BaselineBinRecord, BaselineBins, BaselineVariableRecord, MetricStore

AS_OF = dt.date(2025, 3, 31)
COUNTS = RunCounts(n_current=10, n_matured=10, n_unmatured=0)


def _records(seed: int, n: int) -> list[BaselineBinRecord]:
    """Bins of a few segments, numbers of every size, each optional field None here and there."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        labeled = rng.random() < 0.8
        out.append(
            BaselineBinRecord(
                bin_index=i % 7,
                label=rng.choice(["(-inf, 1]", "(1, 2.5]", "missing", "é\x00x", ""]),
                n_total=rng.choice([0, 1, 2**40, rng.randrange(10**6)]),
                total=rng.choice([0.0, 1e-300, 1.5, rng.random() * 1e9]),
                segment=rng.choice(["", "channel=web", "channel=branch", "s" * 300]),
                n_goods=rng.randrange(1000) if labeled else None,
                goods=rng.random() if labeled else None,
                n_bads=rng.randrange(1000) if labeled else None,
                bads=rng.random() if labeled else None,
                share=None if rng.random() < 0.1 else rng.random(),
            )
        )
    return out


@pytest.mark.parametrize("n", [0, 1, 9_999, 10_000, 25_001])
def test_the_columns_give_back_every_record_as_it_was(n: int) -> None:
    records = _records(n, n)
    bins = BaselineBins.of(records)
    assert len(bins) == n
    assert list(bins) == records
    assert bins == records
    assert bins == tuple(records)
    assert records == list(bins)
    if n:
        assert bins[0] == records[0]
        assert bins[-1] == records[-1]
        assert bins[n // 2 : n // 2 + 3] == records[n // 2 : n // 2 + 3]
        with pytest.raises(IndexError):
            bins[n]
    # each segment's bins by position, in order, and their fields column by column
    segments = bins.segments()
    assert sorted(segments) == sorted({r.segment for r in records})
    for segment, positions in segments.items():
        mine = [r for r in records if r.segment == segment]
        assert [records[p] for p in positions] == mine
        for name in ("bin_index", "label", "n_total", "total", "n_goods", "goods", "share"):
            assert bins.column(name, positions) == [getattr(r, name) for r in mine]
    # the same records give equal columns; a changed field does not
    assert BaselineBins.of(records) == bins
    if n:
        changed = [*records[:-1], BaselineBinRecord(99, "x", 1, 1.0)]
        assert BaselineBins.of(changed) != bins


def _unweighted(seed: int, n: int) -> list[BaselineBinRecord]:
    """Bins without a weight column: each weight its count as a float, None with it."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        labeled = rng.random() < 0.8
        n_total, n_bads = rng.randrange(10**5), rng.randrange(100)
        out.append(
            BaselineBinRecord(
                bin_index=i % 9,
                label=f"({i % 9}, {i % 9 + 1}]",
                n_total=n_total,
                total=float(n_total),
                segment=f"s{i // 50}",
                n_goods=n_total - n_bads if labeled else None,
                goods=float(n_total - n_bads) if labeled else None,
                n_bads=n_bads if labeled else None,
                bads=float(n_bads) if labeled else None,
                share=rng.random(),
            )
        )
    return out


@pytest.mark.parametrize(
    "late",
    [
        {},
        {"total": 2.5},  # a weight that is not its count
        {"total": -0.0, "n_total": 0},  # equal to its count, but not as a float reads back
        {"goods": 3.0, "n_goods": None},  # a weight where its count is None
        {"bads": None, "n_bads": 4},  # no weight where its count is given
        {"n_total": 2**40, "total": 2.0**40},  # a count beyond 4 bytes
        {"n_bads": -(2**31) - 1, "bads": -(2.0**31) - 1},
    ],
)
def test_unweighted_bins_read_back_bit_for_bit_whatever_comes_in_a_later_batch(
    late: dict[str, object],
) -> None:
    """Weights equal to their counts are read back from the counts, and counts held in 4 bytes,
    until a bin in a later batch needs more; every bin, before it and after, reads back with
    the same types and values (a ``repr`` each)."""
    records = _unweighted(5, 25_003)
    records[21_000] = replace(records[21_000], **late)  # type: ignore[arg-type]
    bins = BaselineBins.of(records)
    assert [repr(b) for b in bins] == [repr(r) for r in records]
    for segment, positions in list(bins.segments().items())[::37]:
        mine = [r for r in records if r.segment == segment]
        for name in ("n_total", "total", "n_goods", "goods", "n_bads", "bads"):
            assert repr(bins.column(name, positions)) == repr([getattr(r, name) for r in mine])


def test_unweighted_bins_take_four_bytes_a_count_and_no_weight_column() -> None:
    """100,000 bins without weights: three 4-byte counts, a 4-byte bin index, an 8-byte share
    and two 4-byte text codes, 32 bytes a bin (64 more held each count and weight in 8)."""
    records = _unweighted(6, 100_000)
    tracemalloc.start()
    try:
        bins = BaselineBins.of(records)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(bins) == 100_000
    assert held < 100_000 * 40  # 32 a bin, arrays grown ahead, the 2,000 segments' names


def test_a_segments_bins_together_are_a_range_and_read_as_the_records_say() -> None:
    """As the store reads a baseline back, each segment's bins together: their positions are a
    range (read a column at a time), one segment apart from the others an array."""
    records = sorted(_records(7, 12_000), key=lambda r: r.segment)
    records.append(records[0])  # the first segment's bins no longer together
    bins = BaselineBins.of(records)
    segments = bins.segments()
    first = records[0].segment
    assert all(isinstance(p, range) for s, p in segments.items() if s != first)
    assert not isinstance(segments[first], range)
    for segment, positions in segments.items():
        mine = [r for r in records if r.segment == segment]
        assert [records[p] for p in positions] == mine
        for name in ("bin_index", "label", "n_total", "total", "n_bads", "bads", "share"):
            assert bins.column(name, positions) == [getattr(r, name) for r in mine]


def test_a_variable_record_holds_its_bins_in_columns() -> None:
    records = _records(3, 50)
    variable = BaselineVariableRecord("income", "numeric", {"kind": "numeric"}, bins=records)
    assert isinstance(variable.bins, BaselineBins)
    assert list(variable.bins) == records
    assert variable == BaselineVariableRecord(
        "income", "numeric", {"kind": "numeric"}, bins=BaselineBins.of(records)
    )
    assert len(BaselineVariableRecord("grid", "numeric", {}).bins) == 0


def test_a_run_read_back_shares_its_repeated_texts_and_documents(store: MetricStore) -> None:
    """Bins and alerts whose documents (extra fields, thresholds) are equal share one parsed
    object when read back, and figures are held in columns, each distinct text once, on every
    backend; every value is read back as it was written, a NUL in a text included."""
    run_id = store.claim_run("m", AS_OF, score_direction="higher_is_riskier", config_hash="c")
    params = {"n_bins": 10, "method": "quantile", "nested": {"a": [1, 2.5, None, "é"]}}
    figures = [
        FigureRecord("psi", 0.1 * i, "current", f"x\x00{i // 3}", f"c={i % 3}", params=dict(params))
        for i in range(30)
    ]
    figures += [
        FigureRecord("ks", None, "performance", reason="no loans"),
        FigureRecord("auc", 0.7, "performance", params={"n": 1}),
    ]
    bins = [
        BinRecord("x", "current", i, f"({i}, {i + 1}]", 1, 1.0, extra={"p": 0.5} if i else {})
        for i in range(4)
    ]
    alerts = [
        AlertRecord("psi", Status.GREEN, 0.1, {"amber": 0.1, "red": 0.25}, "fine", "x", s)
        for s in ("a", "b", "c")
    ]
    store.complete_run(run_id, counts=COUNTS, figures=figures, bins=bins, alerts=alerts)
    read = store.figures(run_id)
    assert isinstance(read, Figures)
    assert read == figures
    assert [repr(f) for f in read] == [repr(f) for f in figures]
    assert read.records.texts("segment") == ["c=0", "c=1", "c=2", ALL]
    assert read.records.texts("variable") == [f"x\x00{i}" for i in range(10)] + [""]
    assert read.get("psi", "current", "x\x004", "c=2") == figures[14]
    assert store.figures(run_id, segment=ALL) == figures[30:]
    assert store.bins(run_id) == bins
    assert len({id(b.extra) for b in store.bins(run_id)[1:]}) == 1
    stored = store.alerts(run_id)
    assert [(a.rule, a.status, a.value, a.thresholds, a.message, a.segment) for a in stored] == [
        (a.rule, a.status, a.value, a.thresholds, a.message, a.segment) for a in alerts
    ]
    assert len({id(a.thresholds) for a in stored}) == 1
