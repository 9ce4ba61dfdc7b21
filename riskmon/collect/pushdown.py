"""Count tables computed by the database: ``GROUP BY`` queries built with SQLAlchemy Core.

Identifiers are quoted by the dialect and every value (dates, bin edges) is a bound parameter.
Each query filters the loans to the populations' windows, tags each row with its population,
computes every variable's bin (see :mod:`riskmon.collect.binsql`) and groups by population,
segment columns, label and bin. Four query shapes; each engine's profile (:mod:`.engines`)
names its default (see ``benchmarks/collect.md`` for the measurements behind them):

- ``packed``: one statement per *pack* of variables, grouping the loans on all of the pack's
  keys at once, so that 22 variables take 8 scans instead of 22 (variables join a pack while
  the product of their bin counts stays within :data:`PACK_CELLS`). The combinations are
  summed into one table per variable in Python, as arrays (a pack of one as well, such as the
  score's distinct values; but a pass by day keeps a raw variable's cells in columns, row by
  row, so its statement is a tagged one), or where the engine's profile says
  ``marginals_in_sql`` (DuckDB) by an outer ``GROUP BY GROUPING SETS`` over the grouped rows
  (PostgreSQL plans that outer aggregate with a sort of every loan once the table is large:
  218 s instead of 33 s at 10M loans). Where the profile says ``categories_by_text`` a
  categorical column with one level a bin is grouped on its text, which is put in its bin
  afterwards (a ``CASE`` of ``IN`` lists costs more per loan than grouping on text);
- ``grouping_sets``: one statement and one scan for every variable, ``GROUP BY GROUPING SETS``
  (where the profile says ``grouping_sets``: PostgreSQL, DuckDB);
- ``union_all``: one statement, a ``UNION ALL`` of one ``GROUP BY`` per variable (any engine;
  most scan once per variable; where the profile says ``keys_once`` (DuckDB) each ``GROUP BY``
  reads a CTE that computes every variable's key in one scan);
- ``per_variable``: one statement per variable.

The statements run after the profile's :meth:`~riskmon.collect.engines.EngineProfile.tune`
(PostgreSQL: planner settings local to the read-only transaction); :mod:`.grouped` adds up
their rows.

Windows that overlap (a backtest whose baseline overlaps the current window) are read by
separate statements, so that a loan counts in every population whose window holds it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    FromClause,
    Integer,
    Select,
    case,
    func,
    literal,
    or_,
    select,
    tuple_,
    union_all,
)

from riskmon.collect.binsql import bin_expression, category_text
from riskmon.collect.engines import EngineProfile
from riskmon.collect.request import CollectRequest, Variable
from riskmon.collect.selection import CellSums, QueryColumns, statement_groups

Shape = Literal["packed", "grouping_sets", "union_all", "per_variable"]
SHAPES: tuple[Shape, ...] = ("packed", "grouping_sets", "union_all", "per_variable")

#: the most bin combinations one ``GROUP BY`` of the ``packed`` shape may group on: the product
#: of its variables' bin counts. Three variables of ten bins (12 cells each with the missing and
#: unseen bins) make 1,728; four would make 20,736, and their larger hash tables cost more
#: than the scan they save (benchmarks/collect.md)
PACK_CELLS = 2_000


def packs(variables: Sequence[Variable], max_cells: int | None = None) -> list[list[Variable]]:
    """The variables split into the packs of the ``packed`` shape: binned variables, in order,
    while the product of their bin counts stays within ``max_cells`` (default
    :data:`PACK_CELLS`); a variable on raw values, or with more bins than that, in a pack of
    its own (which leaves the open pack open)."""
    max_cells = PACK_CELLS if max_cells is None else max_cells
    out: list[list[Variable]] = []
    open_pack: list[Variable] | None = None
    cells = 1
    for variable in variables:
        n_keys = variable.n_keys
        size = n_keys if n_keys is not None else max_cells + 1
        if size > max_cells:
            out.append([variable])
        elif open_pack is not None and cells * size <= max_cells:
            open_pack.append(variable)
            cells *= size
        else:
            open_pack, cells = [variable], size
            out.append(open_pack)
    return out


def _key(
    cols: QueryColumns, variable: Variable, *, raw_categories: bool = False
) -> ColumnElement[Any]:
    """What a variable is grouped on: its bin, or its raw value (no binning), or with
    ``raw_categories`` a categorical column's text (binned later; see :func:`by_text`)."""
    column = cols.column(variable)
    if variable.binning is None:
        return column
    if by_text(variable, raw_categories):
        return category_text(column)
    key = bin_expression(column, variable.binning)
    crossed = variable.crossed
    if crossed is None:
        return key
    assert crossed.binning is not None
    n_crossed = literal(crossed.binning.n_bins, Integer)
    return key * n_crossed + bin_expression(cols.column(crossed), crossed.binning)


def _grouped(cols: QueryColumns, variable: Variable, tag: bool, *, sums: CellSums) -> Select[Any]:
    key = _key(cols, variable).label("k")
    head: list[ColumnElement[Any]] = [cols.population]
    if tag:
        head.append(literal(variable.name).label("variable"))
    first = variable.name == cols.request.variables[0].name
    columns = [*head, *cols.segments, cols.label, key, *cols.measures(check_weights=first)]
    columns += cols.extra_measures(sums, of=variable)
    return (
        select(*columns)
        .select_from(cols.loans)
        .where(cols.where)
        .group_by(*cols.grouped_population, *cols.segments, *cols.grouped_label, key)
    )


@dataclass(frozen=True)
class Statement:
    """One statement of a collect pass and how to read its rows.

    ``layout`` ``"tagged"``: population, variable name, segments..., label, key, measures;
    ``"grouping_sets"``: population, segments..., label, one key and then one ``GROUPING`` flag
    per variable of ``variables``, measures; ``"packed"``: population, segments..., label, one
    key per variable of ``variables``, measures. ``cols`` decodes the population codes.
    """

    select: Select[Any]
    cols: QueryColumns
    layout: Literal["tagged", "grouping_sets", "packed"]
    variables: tuple[Variable, ...] = ()
    raw_categories: bool = False  # "packed": categorical keys are text, binned when read
    #: the sums its rows end with (:meth:`QueryColumns.extra_measures`)
    sums: CellSums = field(default_factory=CellSums)


def statements(
    loans: FromClause, request: CollectRequest, shape: Shape, engine: EngineProfile
) -> Iterator[Statement]:
    """The statements of one collect pass in ``shape``, as written for ``engine``."""
    for group in statement_groups(request):
        cols = QueryColumns(loans, request, group)
        if shape == "packed":
            raw = engine.categories_by_text
            for pack in packs(request.variables):
                sums = cols.cell_sums(pack)
                if len(pack) == 1 and pack[0].name in request.columnar:
                    select_ = _grouped(cols, pack[0], tag=True, sums=sums)
                    yield Statement(select_, cols, "tagged", sums=sums)
                elif len(pack) == 1:  # its rows added as arrays; its SQL as a tagged one's
                    select_ = _packed(cols, pack, sums=sums)
                    yield Statement(select_, cols, "packed", (*pack,), sums=sums)
                elif engine.marginals_in_sql:
                    select_ = _pack_marginals(cols, pack, sums=sums)
                    yield Statement(select_, cols, "grouping_sets", (*pack,), sums=sums)
                else:
                    select_ = _packed(cols, pack, raw_categories=raw, sums=sums)
                    yield Statement(select_, cols, "packed", (*pack,), raw, sums=sums)
        elif shape == "per_variable":
            for variable in request.variables:
                sums = cols.cell_sums([variable])
                select_ = _grouped(cols, variable, tag=True, sums=sums)
                yield Statement(select_, cols, "tagged", sums=sums)
        elif shape == "union_all":
            for unioned in _unions(request):
                sums = cols.cell_sums(unioned)
                if engine.keys_once and len(unioned) > 1:
                    select_ = _union_over_keys(cols, unioned, sums=sums)
                else:
                    parts = [_grouped(cols, v, tag=True, sums=sums) for v in unioned]
                    select_ = select(union_all(*parts).subquery()) if len(parts) > 1 else parts[0]
                yield Statement(select_, cols, "tagged", sums=sums)
        else:
            summed = cols.cell_sums(request.variables)
            select_ = _grouping_sets(cols, request.variables, sums=summed)
            yield Statement(select_, cols, "grouping_sets", (*request.variables,), sums=summed)


def _unions(request: CollectRequest) -> list[list[Variable]]:
    """``request``'s variables as ``union_all`` reads them, each list in one statement: all
    together, but by day the variables on raw values apart from the binned ones (one column
    holds every variable's key, and the bins' integer keys would take the score's type: read
    back as floats or decimals)."""
    if not request.by_day:
        return [list(request.variables)]
    binned = [v for v in request.variables if v.binning is not None]
    raw = [v for v in request.variables if v.binning is None]
    return [unioned for unioned in (binned, raw) if unioned]


def _packed(
    cols: QueryColumns, pack: Sequence[Variable], *, raw_categories: bool = False, sums: CellSums
) -> Select[Any]:
    """The loans grouped on every key of ``pack`` at once: one row per combination."""
    keys = [
        _key(cols, v, raw_categories=raw_categories).label(f"k_{i}") for i, v in enumerate(pack)
    ]
    first = any(v.name == cols.request.variables[0].name for v in pack)
    columns = [cols.population, *cols.segments, cols.label, *keys]
    measures = [*cols.measures(check_weights=first), *cols.extra_measures(sums)]
    return (
        select(*columns, *measures)
        .select_from(cols.loans)
        .where(cols.where)
        .group_by(*cols.grouped_population, *cols.segments, *cols.grouped_label, *keys)
    )


def _pack_marginals(cols: QueryColumns, pack: Sequence[Variable], *, sums: CellSums) -> Select[Any]:
    """:func:`_packed` (categorical columns on their text where :func:`by_text`) summed into
    one table per variable by ``GROUPING SETS``; rows laid out as :func:`_grouping_sets`'s."""
    packed = _packed(cols, pack, raw_categories=True, sums=sums)
    combinations = packed.subquery("combinations")
    c = combinations.c
    common = [c.population, *(c[f"segment_{i}"] for i in range(len(cols.segments))), c.label]
    keys: list[ColumnElement[Any]] = []
    for i, variable in enumerate(pack):
        key: ColumnElement[Any] = c[f"k_{i}"]
        if variable.binning is not None and by_text(variable, raw_categories=True):
            key = bin_expression(key, variable.binning)
        keys.append(key.label(f"k_{i}"))
    flags = [func.grouping(k).label(f"g_{i}") for i, k in enumerate(keys)]
    measures = [func.sum(c.n).label("n")]
    if cols.weight is not None:
        measures += [func.sum(c.w).label("w"), func.sum(c.bad_weights).label("bad_weights")]
    measures += [func.sum(c[m.name]).label(m.name) for m in cols.extra_measures(sums)]
    return select(*common, *keys, *flags, *measures).group_by(
        func.grouping_sets(*(tuple_(*common, key) for key in keys))
    )


def _union_over_keys(
    cols: QueryColumns, variables: Sequence[Variable], *, sums: CellSums
) -> Select[Any]:
    """One scan computing every variable's key into a CTE, then a UNION ALL of one GROUP BY
    per variable over it; the rows have the layout of :func:`_grouped`'s."""
    weight = [] if cols.weight is None else [cols.weight.label("weight")]
    # the values summed per cell: the PD, the target and its prediction
    summed = [] if not sums.pd or cols.pd is None else [cols.pd.label("pd")]
    if sums.moments and cols.target is not None and cols.prediction is not None:
        summed += [cols.target.label("target"), cols.prediction.label("prediction")]
        if cols.downturn is not None:
            summed.append(cols.downturn.label("downturn"))
    keys = [_key(cols, v).label(f"k_{i}") for i, v in enumerate(variables)]
    binned = (
        select(cols.population, *cols.segments, cols.label, *weight, *summed, *keys)
        .select_from(cols.loans)
        .where(cols.where)
        .cte("binned")
    )
    b = binned.c
    segments = [b[f"segment_{i}"] for i in range(len(cols.segments))]
    parts = []
    for i, variable in enumerate(variables):
        key = b[f"k_{i}"]
        measures: list[ColumnElement[Any]] = [func.count().label("n")]
        if cols.weight is not None:
            w = b.weight
            invalid: ColumnElement[Any] = (
                func.sum(case((or_(w.is_(None), w < 0), 1), else_=0)) if i == 0 else literal(0)
            )
            measures += [func.sum(w).label("w"), invalid.label("bad_weights")]
        measures += cols.extra_measures(
            sums,
            of=variable,
            pd=b.pd if sums.pd else None,
            target=b.target if sums.moments else None,
            prediction=b.prediction if sums.moments else None,
            weight=b.weight if cols.weight is not None else None,
            downturn=b.downturn if sums.moments and cols.downturn is not None else None,
        )
        head = [b.population, literal(variable.name).label("variable"), *segments, b.label]
        parts.append(
            select(*head, key.label("k"), *measures).group_by(b.population, *segments, b.label, key)
        )
    return select(union_all(*parts).subquery())


def _grouping_sets(
    cols: QueryColumns, variables: Sequence[Variable], *, sums: CellSums
) -> Select[Any]:
    keys = [_key(cols, v).label(f"k_{i}") for i, v in enumerate(variables)]
    flags = [func.grouping(k).label(f"g_{i}") for i, k in enumerate(keys)]
    common = [*cols.grouped_population, *cols.segments, *cols.grouped_label]
    sets = [tuple_(*common, key) for key in keys]
    sum_columns = cols.extra_measures(sums)
    return (
        select(cols.population, *cols.segments, cols.label, *keys, *flags, *cols.measures())
        .select_from(cols.loans)
        .where(cols.where)
        .add_columns(*sum_columns)
        .group_by(func.grouping_sets(*sets))
    )


def by_text(variable: Variable, raw_categories: bool) -> bool:
    """Whether ``packed`` groups this variable on its text: a categorical binning with one
    level a bin, so that the texts are about as many as the bins (merged rare levels would
    multiply a pack's combinations by their number)."""
    binning = variable.binning
    return (
        raw_categories
        and binning is not None
        and variable.crossed is None
        and binning.kind == "categorical"
        and all(len(group) == 1 for group in binning.levels)
    )
