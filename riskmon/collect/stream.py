"""Count tables from a chunked read: the fallback when the database cannot do the grouping.

Reads only the needed columns of the loans in the windows, ``chunk_rows`` at a time through a
server-side cursor where the driver has one, and adds each chunk into the aggregate with numpy
(``bincount`` over integer-coded groups), so memory depends on the chunk size and the number of
table cells, not on the number of loans. Bins are assigned by :meth:`Binning.assign`, whose rules
the SQL of :mod:`riskmon.collect.binsql` mirrors; categorical columns are read as the database's
own text (the same ``CAST`` the SQL compares), so both ways put every row in the same bin.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import ColumnElement, Connection, FromClause, select

from riskmon.collect.aggregate import Aggregate
from riskmon.collect.binsql import category_text
from riskmon.collect.deadline import progressed
from riskmon.collect.moments import as_doubles, moment_terms, numeric_target
from riskmon.collect.request import CollectRequest, ColumnDataError, Variable
from riskmon.collect.selection import QueryColumns, statement_groups
from riskmon.errors import InvalidDataError

#: rows per chunk; a chunk arrives as Python objects, far more than 8 bytes a value (peak RSS
#: on 25 columns, benchmarks/collect.md: about 970 MB at 200,000 rows a chunk, 320 MB at 50,000,
#: 230 MB at 20,000)
DEFAULT_CHUNK_ROWS = 20_000


def _source_expression(cols: QueryColumns, variable: Variable) -> ColumnElement[Any]:
    column = cols.loans.c[variable.column]  # a variable on the PD is mapped in Python
    if variable.binning is not None and variable.binning.kind == "categorical":
        return category_text(column)
    return column


def _crossed(variable: Variable) -> str:
    return f"{variable.name}\x00crossed"


def _codes(values: npt.NDArray[Any]) -> tuple[npt.NDArray[np.intp], npt.NDArray[Any]]:
    """Integer codes of the distinct values, in the order each first comes; NULL (None or NaN)
    keeps a code of its own, as None. What ``pandas.factorize(use_na_sentinel=False)`` gives
    (values equal in Python, 1, 1.0 and True, share the first one's code), without pandas."""
    index: dict[Any, int] = {}
    codes = np.fromiter(  # v != v: NaN, read as None
        (index.setdefault(None if v != v else v, len(index)) for v in values.tolist()),
        dtype=np.intp,
        count=len(values),
    )
    distinct = np.empty(len(index), dtype=object)
    distinct[:] = list(index)
    return codes, distinct


def run(
    connection: Connection,
    loans: FromClause,
    request: CollectRequest,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> tuple[Aggregate, int]:
    """Read the loans in chunks; the aggregate rows, and how many rows had an invalid weight."""
    aggregate = Aggregate()
    invalid_weights = 0
    for group in statement_groups(request):
        cols = QueryColumns(loans, request, group)
        sources = {v.name: _source_expression(cols, v) for v in request.variables}
        # a joint table's second column, under a name no variable has
        sources |= {
            _crossed(v): _source_expression(cols, v.crossed)
            for v in request.variables
            if v.crossed is not None
        }
        distinct = list({str(expr): expr for expr in sources.values()}.items())
        position = {
            name: [k for k, _ in distinct].index(str(expr)) for name, expr in sources.items()
        }
        head: list[ColumnElement[Any]] = [cols.population, *cols.segments, cols.label]
        if cols.weight is not None:
            head.append(cols.weight)
        extras = _extras(cols, request)
        statement = (
            select(*head, *extras.values(), *(expr for _, expr in distinct))
            .select_from(loans)
            .where(cols.where)
        )
        # the statement's options: the connection's would stream every statement after it
        streamed = {"stream_results": True, "yield_per": chunk_rows}
        result = connection.execute(statement, execution_options=streamed)
        n_head, n_extras = len(head), len(extras)
        for chunk in result.partitions(chunk_rows):
            progressed()  # each chunk has the whole read deadline
            columns = [np.asarray(c, dtype=object) for c in zip(*chunk, strict=True)]
            invalid_weights += _add_chunk(
                aggregate,
                request,
                cols,
                columns[:n_head],
                columns[n_head + n_extras :],
                position,
                dict(zip(extras, columns[n_head : n_head + n_extras], strict=True)),
            )
    return aggregate, invalid_weights


def _extras(cols: QueryColumns, request: CollectRequest) -> dict[str, ColumnElement[Any]]:
    """The columns read for the sums: the PD's (mapped in Python) when a variable sums PDs,
    the target and the score when one sums the target's moments."""
    sums = cols.cell_sums(request.variables)
    out: dict[str, ColumnElement[Any]] = {}
    if sums.pd and request.pd is not None:
        out["pd"] = cols.loans.c[request.pd.column]
    if sums.moments and request.target is not None and request.score is not None:
        out["target"] = cols.loans.c[request.target]
        out["prediction"] = cols.loans.c[request.score]
        if request.downturn is not None:
            out["downturn"] = cols.loans.c[request.downturn]
    return out


def _add_chunk(
    aggregate: Aggregate,
    request: CollectRequest,
    cols: QueryColumns,
    head: list[npt.NDArray[Any]],
    values: list[npt.NDArray[Any]],
    position: dict[str, int],
    extras: dict[str, npt.NDArray[Any]],
) -> int:
    n_segments = len(request.segments)
    weights: npt.NDArray[np.float64] | None = None
    invalid = 0
    if request.weight is not None:
        raw = as_doubles(head[-1])
        invalid = int((np.isnan(raw) | (raw < 0)).sum())
        weights = np.nan_to_num(raw, nan=0.0)
        head = head[:-1]
    pds = extras.get("pd")
    powers = None if pds is None else _pd_powers(request, pds, weights)
    targets = _moments(request, extras, weights)
    moments = None if targets is None else targets[1]
    group_index, decoded = _groups(head)
    n_groups = len(decoded)
    groups = aggregate.groups(_group_keys(cols, decoded, n_segments))
    for variable in request.variables:
        raw = values[position[variable.name]]
        if variable.on_pd and request.pd is not None:
            raw = request.pd.of(as_doubles(raw))
        if variable.binning is not None:
            try:
                keys = variable.binning.assign(raw)
            except InvalidDataError as exc:
                raise ColumnDataError(variable.column, str(exc)) from None
            other = variable.crossed
            if other is not None:  # a joint table: the crossed variable's bin within each bin
                assert other.binning is not None
                try:
                    second = other.binning.assign(values[position[_crossed(variable)]])
                except InvalidDataError as exc:
                    raise ColumnDataError(other.column, str(exc)) from None
                keys = keys * other.binning.n_bins + second
            n_keys = variable.n_keys or 0
            key_values: Any = range(n_keys)
        else:
            keys, key_values = _codes(raw)
            n_keys = len(key_values)
        slot, filled, size = _slots(group_index * n_keys + keys, n_groups * n_keys)
        rows = np.bincount(slot, minlength=size)
        summed = None if weights is None else np.bincount(slot, weights=weights, minlength=size)
        sums = None
        if variable.sums and powers is not None:
            bad_pd, terms = powers
            aggregate.count_invalid_pd(variable.name, bad_pd)
            sums = np.stack([np.bincount(slot, weights=t, minlength=size) for t in terms], axis=1)
        cell_moments = None
        if variable.moments and targets is not None and moments is not None:
            aggregate.count_invalid_target(variable.name, targets[0])
            cell_moments = np.stack(
                [np.bincount(slot, weights=t, minlength=size) for t in moments], axis=1
            )
        # the slots of the cells with rows: all of them where they are the chunk's own cells
        taken: npt.NDArray[np.intp] | slice = slice(None)
        if filled is None:
            taken = filled = np.flatnonzero(rows)
        in_group, in_keys = np.divmod(filled, n_keys)
        aggregate.add_grouped(
            variable.name,
            groups,
            key_values,
            (in_group, in_keys),
            rows[taken],
            None if summed is None else summed[taken],
            None if sums is None else sums[taken],
            None if cell_moments is None else cell_moments[taken],
        )
    return invalid


#: a chunk's cells are counted in an array of every possible cell (group × key) up to this
#: many of them a row; beyond, in an array of the cells the chunk holds
DENSE_CELLS_PER_ROW = 4


def _slots(
    cell: npt.NDArray[np.intp], n_cells: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp] | None, int]:
    """Where each row's cell (an index below ``n_cells``) is counted: ``(slot, filled, size)``,
    each row's slot in arrays of ``size`` slots, and which cell each slot is (None: slot i is
    cell i).

    A chunk of many groups on a fine binning (thousands of segments by the score's ranking
    grid) has tens of millions of possible cells, few of which it fills: counting those in an
    array of every cell took 80 MB an array. Its own cells, sorted, are the same cells in the
    same order, and each cell's sums add the same rows in the same order (``np.bincount``
    adds them in the order they come), so the figures are the same to the last bit."""
    if n_cells <= DENSE_CELLS_PER_ROW * len(cell):
        return cell, None, n_cells
    filled, slot = np.unique(cell, return_inverse=True)
    return slot.reshape(-1), filled, len(filled)


def _group_keys(
    cols: QueryColumns, decoded: list[tuple[Any, ...]], n_segments: int
) -> list[tuple[str, tuple[Any, ...], Any]]:
    """Each group's (population, segment values, label)."""
    return [
        (cols.population_name(code), tuple(rest[:n_segments]), rest[n_segments])
        for code, *rest in decoded
    ]


def _groups(head: list[npt.NDArray[Any]]) -> tuple[npt.NDArray[np.intp], list[tuple[Any, ...]]]:
    """Each row's (population, segments..., label) group, as an index into the groups of the
    chunk, and each group's column values."""
    # one integer per group: the columns' codes, mixed radix
    group_codes = np.zeros(len(head[0]), dtype=np.int64)
    group_uniques: list[npt.NDArray[Any]] = []
    for column in head:
        codes, uniques = _codes(column)
        group_codes = group_codes * len(uniques) + codes
        group_uniques.append(uniques)
    group_ids, group_index = np.unique(group_codes, return_inverse=True)
    # decode each group id back into its column values
    decoded: list[tuple[Any, ...]] = []
    for gid in group_ids.tolist():
        parts = []
        for uniques in reversed(group_uniques):
            gid, code = divmod(gid, len(uniques))
            parts.append(uniques[code])
        decoded.append(tuple(reversed(parts)))
    return np.asarray(group_index, dtype=np.intp).reshape(-1), decoded


def _moments(
    request: CollectRequest,
    extras: dict[str, npt.NDArray[Any]],
    weights: npt.NDArray[np.float64] | None,
) -> tuple[int, list[npt.NDArray[np.float64]]] | None:
    """The rows whose target is NaN or infinite, and the terms each loan adds to the target's
    moments (:mod:`.moments`), when read."""
    if "target" not in extras or request.target is None:
        return None
    invalid, target = numeric_target(extras["target"], request.target)
    prediction, downturn = (
        as_doubles(extras[name]) if name in extras else None for name in ("prediction", "downturn")
    )
    assert prediction is not None
    return invalid, moment_terms(target, prediction, weights, downturn)


def _pd_powers(
    request: CollectRequest, values: npt.NDArray[Any], weights: npt.NDArray[np.float64] | None
) -> tuple[int, list[npt.NDArray[np.float64]]]:
    """The rows whose PD is NULL or outside [0, 1], and the terms each loan adds to the PD
    sums (:data:`~riskmon.metrics.PD_SUMS`; a NULL PD adds nothing, as SQL's ``SUM``)."""
    assert request.pd is not None
    raw = as_doubles(values)
    p = np.asarray(request.pd.of(raw), dtype=np.float64)
    bad = int((~((p >= 0) & (p <= 1))).sum())
    p = np.nan_to_num(p, nan=0.0)
    terms = [p, p * p, p * p * p, p * p * p * p]
    if weights is not None:
        # a weight too large to square becomes inf, refused naming its column once summed
        with np.errstate(over="ignore"):
            terms += [weights * weights, weights * p, weights * p * p]
    return bad, terms
