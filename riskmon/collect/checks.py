"""What the aggregate rows of a collect pass must satisfy before they become count tables:
labels 0, 1 or NULL, numeric raw scores, no score in a missing bin."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from riskmon.collect.tables import Aggregate, CollectRequest


def check_labels(aggregate: Aggregate) -> list[Any]:
    """Label values other than 0, 1 and NULL that the aggregate rows contain."""
    bad = {
        label
        for (_, _, _, label, _) in aggregate.cells
        if label is not None and not (_is_number(label) and label in (0, 1))
    }
    return sorted(bad, key=repr)


def check_raw_keys(request: CollectRequest, aggregate: Aggregate) -> tuple[int, list[Any]]:
    """Rows whose raw (unbinned) value is NULL, and values that are not numbers."""
    raw = {v.name for v in request.variables if v.binning is None}
    nulls, bad = 0, set()
    for (_, variable, _, _, key), (n, _) in aggregate.cells.items():
        if variable not in raw:
            continue
        if key is None:
            nulls += int(n)
        elif not _is_number(key):
            bad.add(key)
    return nulls, sorted(bad, key=repr)


def missing_in_bins(request: CollectRequest, aggregate: Aggregate, column: str) -> int:
    """Rows in the missing bin of any binned variable read from ``column`` (one variable's
    count: every variable of a column sees the same rows)."""
    binned = [
        v
        for v in request.variables
        if v.column == column and v.binning is not None and v.crossed is None
    ]
    if not binned:
        return 0
    first = binned[0]
    assert first.binning is not None
    missing = first.binning.missing_index
    return sum(
        int(n)
        for (_, variable, _, _, key), (n, _) in aggregate.cells.items()
        if variable == first.name and key == missing
    )


def _is_number(value: Any) -> bool:
    if type(value) in (int, float):  # nearly every value; the ABC check below is slow
        return True
    return isinstance(value, (numbers.Number, np.number)) and not isinstance(value, complex)
