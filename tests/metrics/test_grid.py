"""A score grid's figures stay within the error bounds computed from the grid itself."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.metrics import (
    CountTable,
    InvalidDataError,
    _grid,
    fit_binning,
    grid_auc_error_bound,
    grid_ks_error_bound,
    ks_statistic,
    ks_statistic_from_counts,
    roc_auc,
    roc_auc_from_counts,
    score_grid_table,
)


def test_docstring_examples() -> None:
    assert doctest.testmod(_grid, raise_on_error=True).failed == 0


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(50, 3000),
    cells=st.integers(2, 200),
    weighted=st.booleans(),
)
def test_grid_figures_are_within_their_bounds(
    seed: int, n: int, cells: int, weighted: bool
) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    y[:2] = [0, 1]
    score = rng.normal(y * 0.8, 1.0)  # continuous: every score distinct
    weight = rng.gamma(2.0, 1.0, n) if weighted else None
    grid = fit_binning(score, kind="numeric", n_bins=cells)
    table = CountTable.from_bins(grid.assign(score), grid, y, sample_weight=weight)
    scores = score_grid_table(table, top=float(score.max()))
    exact_auc = float(roc_auc(y, score, sample_weight=weight))
    grid_auc = float(roc_auc_from_counts(scores))
    assert abs(grid_auc - exact_auc) <= grid_auc_error_bound(table) + 1e-12
    exact_ks = float(ks_statistic(y, score, sample_weight=weight))
    grid_ks = float(ks_statistic_from_counts(scores))
    assert -1e-12 <= exact_ks - grid_ks <= grid_ks_error_bound(table) + 1e-12


def test_a_fine_grid_is_close_and_says_how_close() -> None:
    rng = np.random.default_rng(0)
    n = 200_000
    y = (rng.random(n) < 0.1).astype(int)
    score = 1 / (1 + np.exp(-rng.normal(-2.5 + 1.2 * y, 1.0)))  # PD-like, all distinct
    grid = fit_binning(score, kind="numeric", n_bins=2000)
    table = CountTable.from_bins(grid.assign(score), grid, y)
    bound = grid_auc_error_bound(table)
    assert bound < 5e-4
    grid_auc = float(roc_auc_from_counts(score_grid_table(table, top=float(score.max()))))
    assert abs(grid_auc - float(roc_auc(y, score))) <= bound


def test_the_grid_table_keeps_scores_increasing_and_counts_whole() -> None:
    grid = fit_binning(np.arange(100.0), kind="numeric", n_bins=10)
    y = np.arange(100) % 3 == 0
    table = CountTable.from_bins(grid.assign(np.arange(100.0)), grid, y)
    scores = score_grid_table(table, top=99.0)
    assert scores.values is not None
    assert np.all(np.diff(scores.values) > 0)
    assert scores.n_total.sum() == 100
    assert scores.n_bads is not None
    assert scores.n_bads.sum() == int(y.sum())


def test_missing_scores_are_refused_on_a_grid() -> None:
    grid = fit_binning([0.1, 0.5, 0.9], kind="numeric", n_bins=2)
    table = CountTable.from_bins(grid.assign([0.1, None]), grid, [0, 1])
    with pytest.raises(InvalidDataError, match="no missing scores on a score grid, got 1"):
        score_grid_table(table, top=1.0)
