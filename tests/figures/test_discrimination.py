"""Discrimination figures on a score grid: where KS is reached, in both score directions."""

from __future__ import annotations

import numpy as np
import pytest

from riskmon.figures._ranking import ranking_figures
from riskmon.metrics import CountTable, fit_binning, score_grid_table


def _gap(y: np.ndarray, safe: np.ndarray) -> float:
    """|share of goods − share of bads| on the safe side of a threshold."""
    return abs(float(safe[y == 0].mean()) - float(safe[y == 1].mean()))


@pytest.mark.parametrize("higher_is_riskier", [True, False])
def test_grid_ks_is_reached_at_a_cell_boundary_that_splits_the_loans_as_reported(
    higher_is_riskier: bool,
) -> None:
    rng = np.random.default_rng(7)
    y = (rng.random(4000) < 0.3).astype(int)
    risk = rng.normal(size=y.size) + 1.1 * y
    score = risk if higher_is_riskier else 600 - 50 * risk  # PDs rise, points fall with risk
    grid = fit_binning(score, kind="numeric", n_bins=40)
    cells = CountTable.from_bins(grid.assign(score), grid, y)
    table = score_grid_table(cells, top=float(score.max()))
    figures = {
        f.name: f
        for f in ranking_figures(
            table, higher_is_riskier=higher_is_riskier, population="performance", grid=cells
        )
    }
    ks = figures["ks"]
    at = ks.params["score_at"]
    assert at in grid.edges  # a boundary between two cells, not a cell's far edge
    # the safe side of the reported score, on the raw scores, gives the grid's KS exactly
    safe = score <= at if higher_is_riskier else score > at
    assert ks.value == pytest.approx(_gap(y, safe), abs=1e-12)
