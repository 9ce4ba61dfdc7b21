"""A sparse table on a fine binning is held as its non-empty bins and read back as the dense
table, bit for bit; a collect over many small segments on a fine grid gives the tables the
loans give on every engine and strategy, and holds the segments' tables compactly."""

from __future__ import annotations

import numpy as np
import pytest

from riskmon.collect import Source, collect
from riskmon.collect.compact import MIN_COMPACT_BINS, CountTables
from riskmon.metrics import Binning, CountTable
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
        (MIN_COMPACT_BINS - 1, 3),  # coarse: held as it is however empty
        (200, 50_000),  # every bin filled: the compact form would be larger
    ],
)
def test_a_coarse_or_full_table_is_held_as_it_is(n_bins: int, n_rows: int) -> None:
    table = _grid_table(n_bins, n_rows, labeled=True, weighted=False)
    tables = CountTables()
    tables[KEY] = table
    assert tables.n_compact == 0
    assert tables[KEY] is table


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
