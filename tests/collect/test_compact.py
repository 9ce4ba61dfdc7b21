"""Count tables and sums held in shared blocks read back as they were put, bit for bit; a
sparse table on a fine binning is held as its non-empty bins and read back as the dense table;
a collect over many small segments on a fine grid gives the tables the loans give on every
engine and strategy, and holds the segments' tables compactly."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from riskmon.collect import Source, collect
from riskmon.collect.compact import BLOCK, MIN_COMPACT_BINS, CountTables, SumTables
from riskmon.metrics import Binning, CountTable, PdTable, ScoreLabels, TargetTable
from riskmon.provenance import window_counts

from .loans import load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, WEIGHT_RTOL, expected_tables, fitted_on, request

KEY = ("performance", "score_ranking", "channel=web")


def _grid_table(n_bins: int, n_rows: int, *, labeled: bool, weighted: bool) -> CountTable:
    rng = np.random.default_rng(n_bins + n_rows)
    grid = Binning("numeric", edges=tuple(np.linspace(0.0, 1.0, n_bins - 2).tolist()))
    scores = rng.random(n_rows) ** 3
    return CountTable.from_bins(
        grid.assign(scores),
        grid,
        (rng.random(n_rows) < 0.2).astype(int) if labeled else None,
        sample_weight=rng.gamma(2.0, size=n_rows) if weighted else None,
    )


def _same_arrays(got: CountTable, want: CountTable) -> None:
    for name in ("total", "n_total", "bads", "n_bads", "values"):
        a, b = getattr(got, name), getattr(want, name)
        if b is None:
            assert a is None, name
            continue
        assert a.dtype == b.dtype, name
        assert a.tobytes() == b.tobytes(), name  # bit for bit, zeros included
    assert got.labels == want.labels
    assert got.binning is want.binning


@pytest.mark.parametrize("labeled", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_a_sparse_fine_table_is_held_compactly_and_read_back_bit_for_bit(
    labeled: bool, weighted: bool
) -> None:
    table = _grid_table(2_001, 40, labeled=labeled, weighted=weighted)
    tables = CountTables()
    tables[KEY] = table
    assert tables.n_compact == 1
    assert KEY in tables
    assert list(tables) == [KEY]
    assert len(tables) == 1
    _same_arrays(tables[KEY], table)


@pytest.mark.parametrize(
    ("n_bins", "n_rows"),
    [
        (MIN_COMPACT_BINS - 1, 3),  # coarse: held dense however empty
        (200, 50_000),  # every bin filled: the compact form would be larger
    ],
)
def test_a_coarse_or_full_table_is_held_dense_and_read_back_bit_for_bit(
    n_bins: int, n_rows: int
) -> None:
    table = _grid_table(n_bins, n_rows, labeled=True, weighted=False)
    tables = CountTables()
    tables[KEY] = table
    assert tables.n_compact == 0
    _same_arrays(tables[KEY], table)


def _score_table(n_rows: int, *, labeled: bool, seed: int) -> CountTable:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 3 * n_rows + 1, n_rows) / 7.0
    if labeled:
        return CountTable.from_scores((rng.random(n_rows) < 0.3).astype(int), scores)
    return CountTable.from_values(scores, sample_weight=rng.gamma(2.0, size=n_rows))


def test_thousands_of_tables_across_blocks_read_back_as_they_were_put() -> None:
    """Tables of every kind, more than a block's numbers in all and one more than a block
    alone: each reads back bit for bit, score tables with their scores as labels, and what was
    read stays as it was while more is put."""
    put: dict[tuple[str, str, str], CountTable] = {}
    tables = CountTables()
    read_early = []
    for i in range(1_200):
        kind = i % 4
        if kind == 0:
            table = _grid_table(2_001, 30 + i % 50, labeled=i % 3 > 0, weighted=i % 2 > 0)
        elif kind == 1:
            table = _grid_table(12, 40, labeled=i % 3 > 0, weighted=i % 2 > 0)
        else:
            table = _score_table(5 + i % 300, labeled=kind == 2, seed=i)
        key = ("p", f"v{kind}", f"s{i}")
        put[key] = tables[key] = table
        if i % 100 == 0:
            read_early.append((tables[key], table))
    big = _score_table(BLOCK, labeled=True, seed=99)  # more numbers than a block holds
    put[KEY] = tables[KEY] = big
    assert tables[KEY] is big
    assert list(tables) == list(put)
    assert tables.n_compact == 300
    for key, table in put.items():
        got = tables[key]
        _same_arrays(got, table)
        assert got.equals(table)
        if table.values is not None:
            assert isinstance(got.labels, ScoreLabels)
            assert list(got.labels) == list(table.labels)
    for got, table in read_early:
        _same_arrays(got, table)


def test_what_is_read_cannot_change_what_others_read() -> None:
    tables = CountTables()
    tables[KEY] = _grid_table(12, 40, labeled=True, weighted=False)
    with pytest.raises(ValueError, match="read-only"):
        tables[KEY].total[0] = 1.0
    assert tables[KEY].n_total.flags.writeable is False


def test_a_table_of_other_types_is_held_as_it_is() -> None:
    tables = CountTables()
    table = CountTable(["a", "b"], total=np.array([1, 2]), n_total=np.array([1, 2]))
    tables[KEY] = table
    assert tables[KEY] is table


def _pd_table(n_bins: int, seed: int) -> PdTable:
    rng = np.random.default_rng(seed)
    grid = Binning("numeric", edges=tuple(np.linspace(0.0, 1.0, n_bins - 2).tolist()))
    pd_ = rng.random(200)
    return PdTable.from_arrays(
        (rng.random(200) < pd_).astype(int),
        pd_,
        grid.assign(pd_),
        n_bins=n_bins,
        sample_weight=rng.gamma(2.0, size=200),
        labels=grid.labels,
        binning=grid,
    )


def test_sum_tables_read_back_as_they_were_put() -> None:
    """PD sums and target moments in shared blocks read back with the same arrays bit for
    bit and the same labels (a list, as made); an empty table too."""
    sums = SumTables(PdTable)
    put = {("p", "grade", f"s{i}"): _pd_table(3 + i % 30, i) for i in range(2_000)}
    grid = Binning("numeric", edges=(0.5,))
    put[("p", "grade", "none")] = PdTable.from_cells([], n_bins=0, weighted=False, labels=[])
    put[("p", "grade", "ALL")] = PdTable.from_cells(
        [(1, 1, 2, 2.0, (0.5, 0.25, 0.125, 0.0625))],
        n_bins=grid.n_bins,
        weighted=False,
        labels=grid.labels,
        binning=grid,
    )
    for key, table in put.items():
        sums[key] = table
    moments = SumTables(TargetTable)
    target = TargetTable.from_arrays([0.2, None, 0.6], [0.3, 0.5, 0.4], [0, 0, 1], n_bins=2)
    moments[KEY] = target
    assert list(sums) == list(put)
    for key, table in [*put.items(), (KEY, target)]:
        got = (moments if key == KEY else sums)[key]
        assert type(got) is type(table)
        assert type(got.labels) is type(table.labels)
        assert list(got.labels) == list(table.labels)
        assert got.binning is table.binning
        for f in fields(table):
            if f.name not in ("labels", "binning"):
                assert getattr(got, f.name).tobytes() == getattr(table, f.name).tobytes(), f.name


def test_many_small_segments_on_a_fine_grid_collect_as_the_loans_say(
    database: tuple[str, str],
) -> None:
    dialect, url = database
    frame = loan_frame(seed=11, n=1_200, weighted=True)
    # forty segments of about thirty loans: a fine binning is mostly empty in each
    frame["channel"] = [f"c{i % 40:02d}" for i in range(len(frame))]
    # a characteristic of many distinct values, so that it is binned on 150 bins
    noise = np.random.default_rng(12).normal(0.0, 1.0, len(frame)).round(4)
    frame["income"] = frame["income"] + noise
    load(url, frame)
    req = fitted_on(frame, request(weighted=True, segments=("channel",)), 150)
    expected = expected_tables(frame, req)
    with Source(model_config(url, weighted=True)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            assert isinstance(collected.tables, CountTables)
            assert collected.tables.n_compact > 40, strategy
            assert set(collected.tables) == set(expected)
            rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
            for key, table in expected.items():
                assert collected.tables[key].equals(table, rtol=rtol), (strategy, key)
            # the provenance's digest reads the tables dense, as it always did
            dense = collected.__class__(
                tables={k: collected.tables[k] for k in collected.tables},
                counts=collected.counts,
                windows=collected.windows,
            )
            assert window_counts(dense) == window_counts(collected)
