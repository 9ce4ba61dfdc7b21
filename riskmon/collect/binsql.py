"""A :class:`~riskmon.metrics.Binning` compiled into a SQL expression giving each row's bin.

Numeric bins become a balanced tree of ``CASE WHEN x <= edge`` tests, so a row costs
⌈log₂(bins)⌉ comparisons however fine the binning (a 4,000-cell score grid costs 12); the edges
are bound parameters. Categorical bins compare the column's text (``CAST(x AS VARCHAR)``, the
database's own rendering, which the streaming reader selects too) with each bin's levels. NULL
goes to the missing bin, a level unseen when the binning was frozen to the unseen bin, and a
special value to its own bin, tested before any ordinary bin — the same rules as
:meth:`Binning.assign`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Double, Integer, String, case, cast, literal

from riskmon.metrics import Binning


def category_text(column: ColumnElement[Any]) -> ColumnElement[str]:
    """The text a categorical column is compared by, in SQL and in the streaming reader."""
    return cast(column, String)


def _numeric_tree(
    x: ColumnElement[Any], edges: Sequence[float], low: int, high: int
) -> ColumnElement[int]:
    """Bin index in [low, high] for a non-NULL x; bin i holds (edges[i-1], edges[i]]."""
    if low == high:
        return literal(low, Integer)
    middle = (low + high) // 2
    return case(
        (x <= literal(float(edges[middle]), Double), _numeric_tree(x, edges, low, middle)),
        else_=_numeric_tree(x, edges, middle + 1, high),
    )


def bin_expression(column: ColumnElement[Any], binning: Binning) -> ColumnElement[int]:
    """The bin index of ``column`` under ``binning``, as SQL."""
    special = zip(binning.special, binning.special_indices, strict=True)
    if binning.kind == "numeric":
        edges = [float(e) for e in binning.edges]
        value_bins = _numeric_tree(column, edges, 0, len(edges))
        numbers = [(column == literal(float(v), Double), i) for v, i in special]
        return case((column.is_(None), binning.missing_index), *numbers, else_=value_bins)
    unseen = binning.unseen_index
    assert unseen is not None
    text_value = category_text(column)
    whens: list[tuple[ColumnElement[bool], int]] = [(column.is_(None), binning.missing_index)]
    whens += [(text_value == literal(str(v), String), i) for v, i in special]
    whens += [
        (text_value.in_([str(level) for level in group]), index)
        for index, group in enumerate(binning.levels)
        if group
    ]
    return case(*whens, else_=unseen)
