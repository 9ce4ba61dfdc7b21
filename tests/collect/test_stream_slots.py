"""The streaming reader counts a chunk's cells in an array of every possible cell, or, where
those are many more than the chunk's rows, in an array of the cells the chunk holds
(:func:`riskmon.collect.stream._slots`): both ways give the same tables, to the last bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskmon.collect import Source, collect, stream

from .loans import load, loan_frame, model_config
from .test_collect import fitted_on, request


@settings(max_examples=60, deadline=None)
@given(
    cells=st.lists(st.integers(0, 5_000), min_size=1, max_size=300),
    seed=st.integers(0, 2**31 - 1),
)
def test_a_chunks_own_cells_count_what_every_cell_counts(cells: list[int], seed: int) -> None:
    cell = np.asarray(cells, dtype=np.intp)
    weights = np.random.default_rng(seed).lognormal(0.0, 2.0, cell.size)
    n_cells = 5_001
    slot, filled, size = stream._slots(cell, n_cells)
    assert filled is not None  # 5,001 possible cells, at most 300 rows: the chunk's own
    assert size == len(filled)
    dense_rows = np.bincount(cell, minlength=n_cells)
    dense_weights = np.bincount(cell, weights=weights, minlength=n_cells)
    assert filled.tolist() == np.flatnonzero(dense_rows).tolist()
    assert np.array_equal(np.bincount(slot, minlength=size), dense_rows[filled])
    # the same additions in the same order: equal bit for bit, not merely close
    assert np.bincount(slot, weights=weights, minlength=size).tobytes() == (
        dense_weights[filled].tobytes()
    )
    every, none, n = stream._slots(cell, 4 * cell.size)
    assert every is cell
    assert none is None
    assert n == 4 * cell.size


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**31 - 1),
    weighted=st.booleans(),
    n_bins=st.integers(2, 12),
)
def test_the_chunks_own_cells_give_the_tables_every_cell_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, weighted: bool, n_bins: int
) -> None:
    """Small chunks of a segmented book, read once with every chunk counted in an array of
    every cell and once in arrays of its own cells: the same tables, bit for bit."""
    url = f"sqlite:///{tmp_path / f'loans-{seed}-{weighted}-{n_bins}.db'}"
    frame = loan_frame(seed=seed, n=700, weighted=weighted)
    load(url, frame)
    req = fitted_on(frame, request(weighted=weighted, segments=("channel",)), n_bins)
    collected = {}
    for label, dense in (("every cell", 10**9), ("own cells", 0)):
        monkeypatch.setattr(stream, "DENSE_CELLS_PER_ROW", dense)
        monkeypatch.setitem(stream.run.__kwdefaults__, "chunk_rows", 97)
        with Source(model_config(url, weighted=weighted)) as source:
            collected[label] = collect(source, req, strategy="stream")
    every, own = collected["every cell"], collected["own cells"]
    assert list(every.tables) == list(own.tables)
    for key, table in every.tables.items():
        assert own.tables[key].equals(table, rtol=0.0), key
    assert every.counts == own.counts
