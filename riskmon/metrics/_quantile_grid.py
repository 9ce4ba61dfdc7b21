"""Quantiles of a value known only through its counts on a fixed grid, with their error bound.

A realised CCF is counted per cell of a fixed grid (:func:`ccf_grid_binning`) where the
facilities live, in the same statements as the back-test's sums; its quantiles are then read
from the counts. The lower empirical quantile at probability q (numpy's ``inverted_cdf``: the
smallest value x with F(x) ≥ q; q = 0 the minimum, q = 1 the maximum) lies in the first cell
whose cumulative count reaches q·N, so it is known to the cell: (low, high]. The value given
is the cell's midpoint, ``error_bound`` half its width; a cell that holds a single double (the
grid's cells of exactly 0 % and exactly 100 %) gives the quantile exactly. A quantile in one of
the grid's open ends (at or below −100 %, above 200 %) is not available, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._binning import Binning

#: the grid's step (1 percentage point) and its range: [−100 %, 200 %]
CCF_GRID_STEP = 0.01
CCF_GRID_RANGE = (-1.0, 2.0)
#: the quantiles a CCF back-test reports (ECB instructions, 2019, §2.9): min, 5 %, …, max
CCF_QUANTILES: tuple[tuple[str, float], ...] = (
    ("realised_min", 0.0),
    ("realised_p05", 0.05),
    ("realised_p10", 0.10),
    ("realised_p25", 0.25),
    ("realised_p50", 0.50),
    ("realised_p75", 0.75),
    ("realised_p90", 0.90),
    ("realised_p95", 0.95),
    ("realised_max", 1.0),
)


def ccf_grid_binning() -> Binning:
    """A realised CCF's grid: cells of one percentage point from −100 % to 200 %, the values
    below 0 apart from 0 itself (the floored ones: an edge one step below 0), and 0 and 100 %
    each a cell of their own (a CCF is often exactly either); NULL (still open) in the missing
    bin. Bins are right-closed: x ≤ edge.

    Examples
    --------
    >>> grid = ccf_grid_binning()
    >>> bins = grid.assign([-0.004, 0.0, 0.004, 1.0, -3.0, 5.0, None]).tolist()
    >>> bins[1] - bins[0], bins[2] - bins[1], grid.edges[bins[1]], grid.edges[bins[3]]
    (1, 1, 0.0, 1.0)
    >>> bins[4:] == [0, len(grid.edges), grid.missing_index]
    True
    """
    low, high = CCF_GRID_RANGE
    steps = round((high - low) / CCF_GRID_STEP)
    edges: list[float] = []
    for k in range(steps + 1):
        value = round(low + k * CCF_GRID_STEP, 10)
        if value in (0.0, 1.0):
            edges.append(float(np.nextafter(value, -np.inf)))
        edges.append(value)
    return Binning("numeric", edges=tuple(edges))


@dataclass(frozen=True)
class GridQuantile:
    """The quantile at ``probability``: ``value`` (NaN where not available, ``reason`` says
    why), known to lie in (``low``, ``high``]; ``error_bound`` = the largest |value − true|."""

    probability: float
    value: float
    low: float
    high: float
    error_bound: float
    reason: str | None = None


def grid_quantiles(
    counts: Any, edges: Sequence[float], probabilities: Sequence[float]
) -> list[GridQuantile]:
    """The lower empirical quantiles of values counted on a grid (``counts`` per cell, cell i
    = (edges[i − 1], edges[i]], the first open below and the last, len(edges), open above).

    Examples
    --------
    Ten values, 0.05 0.05 0.12 0.12 0.12 0.3 0.3 0.3 0.3 0.9, counted on cells of 0.1:

    >>> edges = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    >>> counts = [0, 2, 3, 4, 0, 0, 0, 0, 0, 1, 0, 0]
    >>> [round(q.value, 6) for q in grid_quantiles(counts, edges, [0.0, 0.5, 1.0])]
    [0.05, 0.15, 0.85]
    >>> [round(q.error_bound, 6) for q in grid_quantiles(counts, edges, [0.5])]
    [0.05]

    numpy's ``inverted_cdf`` median of the values, 0.12, lies in that cell, (0.1, 0.2].
    """
    n = np.asarray(counts, dtype=np.float64)
    if n.shape != (len(edges) + 1,) or (n < 0).any():
        raise InvalidDataError(
            f"Expected {len(edges) + 1} non-negative counts (one per cell), got {n.tolist()[:5]}…"
        )
    total = float(n.sum())
    out = []
    for q in probabilities:
        if not 0 <= q <= 1:
            raise InvalidDataError(f"Expected a probability in [0, 1], got {q!r}")
        if total <= 0:
            out.append(GridQuantile(q, math.nan, math.nan, math.nan, math.nan, "no value"))
            continue
        cumulative = np.cumsum(n)
        cell = int(np.argmax(n > 0)) if q == 0 else int(np.argmax(cumulative >= q * total))
        out.append(_in_cell(q, cell, edges))
    return out


def _in_cell(q: float, cell: int, edges: Sequence[float]) -> GridQuantile:
    low = -math.inf if cell == 0 else float(edges[cell - 1])
    high = math.inf if cell == len(edges) else float(edges[cell])
    if math.isinf(low) or math.isinf(high):
        side = f"at or below {high:g}" if math.isinf(low) else f"above {low:g}"
        why = f"the quantile lies {side}, outside the grid"
        return GridQuantile(q, math.nan, low, high, math.inf, why)
    if np.nextafter(low, math.inf) == high:  # a cell of one double
        return GridQuantile(q, high, low, high, 0.0)
    return GridQuantile(q, (low + high) / 2, low, high, (high - low) / 2)
