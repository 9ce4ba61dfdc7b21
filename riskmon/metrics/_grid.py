"""Continuous scores on a fine grid, and the largest error the grid can cause.

A score with millions of distinct values (a raw PD) is grouped on a fine grid of cells — the
baseline's quantiles — instead of on its distinct values. Every figure is then computed from
the grid's count table as if the scores in a cell were tied, and the error that can cause is
bounded from the same table:

- AUC: a pair of a bad and a good in the same cell counts ½; its true contribution is 0, ½ or 1.
  So ``|AUC_grid − AUC| ≤ Σ_c b_c·g_c / (2·B·G)``.
- KS: inside cell c the two CDFs move by at most b_c/B and g_c/G, so a threshold inside the
  cell can add at most ``min(b_c/B, g_c/G)`` to the gap seen at the cell's edges:
  ``0 ≤ KS − KS_grid ≤ max_c min(b_c/B, g_c/G)``.
"""

from __future__ import annotations

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._validation import not_available


def _grid_cells(table: CountTable) -> tuple[np.ndarray, np.ndarray]:
    binning = table.binning
    if binning is None or binning.kind != "numeric":
        raise InvalidDataError("Expected a count table on a numeric grid binning")
    if table.n_total[binning.missing_index] != 0:
        raise InvalidDataError(
            f"Expected no missing scores on a score grid, got "
            f"{int(table.n_total[binning.missing_index])}"
        )
    value_bins = slice(0, binning.missing_index)
    goods = table.goods[value_bins] if table.labeled else table.total[value_bins]
    bads = table.bads[value_bins] if table.bads is not None else np.zeros_like(goods)
    return goods, bads


def score_grid_table(table: CountTable, *, top: float) -> CountTable:
    """The score table of a grid: one row per non-empty cell, valued at the cell's upper edge.

    ``top`` values the last, open-ended cell (the baseline's largest score, say).

    Examples
    --------
    >>> from riskmon.metrics import Binning
    >>> grid = Binning("numeric", edges=(0.1, 0.2))
    >>> cells = CountTable.from_bins(grid.assign([0.05, 0.15, 0.18, 0.5]), grid, [0, 0, 1, 1])
    >>> t = score_grid_table(cells, top=0.9)
    >>> t.values.tolist(), t.bads.tolist()
    ([0.1, 0.2, 0.9], [0.0, 1.0, 1.0])
    """
    binning = table.binning
    _grid_cells(table)
    assert binning is not None
    edges = np.asarray(binning.edges, dtype=np.float64)
    last = float(edges[-1]) if edges.size else -np.inf
    if not top > last:
        top = float(np.nextafter(last, np.inf))
    values = np.r_[edges, top]
    k = values.size
    keep = np.flatnonzero(table.n_total[:k] > 0)
    return CountTable(
        labels=tuple(f"<= {v:.10g}" for v in values[keep].tolist()),
        total=table.total[keep],
        n_total=table.n_total[keep],
        bads=None if table.bads is None else table.bads[keep],
        n_bads=None if table.n_bads is None else table.n_bads[keep],
        values=values[keep],
    )


def grid_auc_error_bound(table: CountTable) -> float:
    """The largest amount by which the AUC of a grid table can differ from the exact AUC.

    ``Σ_c b_c·g_c / (2·B·G)`` over the grid's cells (see the module docstring).

    Examples
    --------
    >>> from riskmon.metrics import Binning
    >>> grid = Binning("numeric", edges=(0.5,))
    >>> cells = CountTable.from_bins(grid.assign([0.1, 0.2, 0.3, 0.9]), grid, [0, 1, 0, 1])
    >>> grid_auc_error_bound(cells)  # cell 1 holds 1 bad and 2 goods: 1*2 / (2*2*2)
    0.25
    """
    goods, bads = _grid_cells(table)
    b, g = bads.sum(), goods.sum()
    if b <= 0 or g <= 0:
        return not_available("The grid's AUC error bound needs both goods and bads")
    return float((bads * goods).sum() / (2.0 * b * g))


def grid_ks_error_bound(table: CountTable) -> float:
    """The largest amount by which KS can exceed the KS of a grid table.

    ``max_c min(b_c/B, g_c/G)`` over the grid's cells (see the module docstring).

    Examples
    --------
    >>> from riskmon.metrics import Binning
    >>> grid = Binning("numeric", edges=(0.5,))
    >>> cells = CountTable.from_bins(grid.assign([0.1, 0.2, 0.3, 0.9]), grid, [0, 1, 0, 1])
    >>> grid_ks_error_bound(cells)  # cell 0: min(1/2, 2/2)
    0.5
    """
    goods, bads = _grid_cells(table)
    b, g = bads.sum(), goods.sum()
    if b <= 0 or g <= 0:
        return not_available("The grid's KS error bound needs both goods and bads")
    return float(np.minimum(bads / b, goods / g).max())
