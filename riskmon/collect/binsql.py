"""A :class:`~riskmon.metrics.Binning` compiled into a SQL expression giving each row's bin.

Numeric bins become a balanced tree of ``CASE WHEN x <= edge`` tests, so a row costs
⌈log₂(bins)⌉ comparisons however fine the binning (a 4,000-cell score grid costs 12); the edges
are bound parameters. On PostgreSQL the same index is ``width_bucket`` over the edges bound as
one array (a binary search in C: 0.28 s against 0.67 s for the tree of a 4,000-cell grid over
1M rows, the same counts, about the same for ten bins: ``benchmarks/bench_binsql.py``), given
the next double above each edge so that ``width_bucket``'s lower-closed buckets are the
right-closed bins.

Categorical bins compare the column's text (``CAST(x AS VARCHAR)``, the database's own
rendering, which the streaming reader selects too) with each bin's levels. NULL
goes to the missing bin, a level unseen when the binning was frozen to the unseen bin, and a
special value to its own bin, tested before any ordinary bin — the same rules as
:meth:`Binning.assign`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, Double, Integer, String, case, cast, literal
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.selectable import FromClause
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import ARRAY

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


class NumericBin(ColumnElement[int]):
    """The bin of a non-NULL ``x`` among right-closed bins: how many edges are below ``x``.

    Rendered as :func:`_numeric_tree` everywhere but on PostgreSQL. Both forms are built when
    the statement is, so that every rendering of one expression (in the select list and in
    ``GROUP BY``) binds the same parameters.
    """

    type = Integer()
    inherit_cache = True
    # a list, as SQLAlchemy's own elements declare it
    _traverse_internals = [  # noqa: RUF012
        ("x", InternalTraversal.dp_clauseelement),
        ("tree", InternalTraversal.dp_clauseelement),
        ("above", InternalTraversal.dp_clauseelement),
    ]

    def __init__(self, x: ColumnElement[Any], edges: Sequence[float]) -> None:
        self.x = x
        self.tree = _numeric_tree(x, edges, 0, len(edges))
        # width_bucket(x, t) counts the thresholds t <= x; the next double above an edge is
        # <= x exactly when the edge is < x (a NaN, above every number, in the last bin, as
        # in the tree)
        above = np.nextafter(np.asarray(edges, dtype=np.float64), np.inf).tolist()
        self.above = literal(above, ARRAY(Double))

    @property
    def _from_objects(self) -> list[FromClause]:
        # the tables the expression reads (a SELECT of it alone reads them too)
        return self.x._from_objects


@compiles(NumericBin)
def _numeric_bin(element: NumericBin, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.tree, **kw)


@compiles(NumericBin, "postgresql")
def _numeric_bin_postgresql(element: NumericBin, compiler: SQLCompiler, **kw: Any) -> str:
    x, above = compiler.process(element.x, **kw), compiler.process(element.above, **kw)
    return f"width_bucket({x}, {above})"


def bin_expression(column: ColumnElement[Any], binning: Binning) -> ColumnElement[int]:
    """The bin index of ``column`` under ``binning``, as SQL."""
    special = zip(binning.special, binning.special_indices, strict=True)
    if binning.kind == "numeric":
        edges = [float(e) for e in binning.edges]
        value_bins = NumericBin(column, edges)
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
