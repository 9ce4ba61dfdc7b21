"""The rows of the SQL shapes' statements (:mod:`.pushdown`) added up into a collect pass's
:class:`~riskmon.collect.aggregate.Aggregate`, statement by statement, a batch of rows at a
time (a ``packed`` statement's as arrays: :mod:`.packed_rows`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from sqlalchemy import Connection, FromClause

from riskmon.collect.aggregate import Aggregate
from riskmon.collect.census import LevelTally
from riskmon.collect.chunked import CHUNKED_ROWS
from riskmon.collect.engines import EngineProfile
from riskmon.collect.packed_rows import PackedRows
from riskmon.collect.pushdown import Shape, by_text, statements
from riskmon.collect.request import CollectRequest, Variable

#: rows fetched from a statement's result at a time: one driver call a batch (psycopg's
#: ``fetchone`` cost about 5 us a row, a third of a nightly run's Python time)
FETCH_ROWS = 10_000


def _binner(variable: Variable, raw_categories: bool) -> Callable[[Any], Any]:
    """Turns a key as grouped into the aggregate's key: a categorical column's text (grouped
    on it, see :func:`~.pushdown.by_text`) into its bin by :meth:`Binning.text_bin`."""
    binning = variable.binning
    if binning is None or not by_text(variable, raw_categories):
        return lambda key: key
    return binning.text_bin


def run(
    connection: Connection,
    loans: FromClause,
    request: CollectRequest,
    shape: Shape,
    engine: EngineProfile,
) -> tuple[Aggregate, int]:
    """Execute the statements; the aggregate rows, and how many rows had an invalid weight."""
    aggregate = Aggregate.reading(request)
    s = len(request.segments)
    n_measures = 3 if request.weight else 1
    invalid_weights = 0
    first_variable = request.variables[0].name
    engine.tune(connection)
    add = aggregate.add
    weighted = request.weight is not None
    summed = {v.name for v in request.variables if v.sums}
    with_moments = {v.name for v in request.variables if v.moments}
    tally = LevelTally(request)
    for statement in statements(loans, request, shape, engine):
        cols, variables = statement.cols, statement.variables
        binners = [_binner(v, statement.raw_categories) for v in variables]
        texts = [(i, v) for i, v in enumerate(variables) if by_text(v, statement.raw_categories)]
        watched = tally.watch(texts, cols.population_names) if statement.layout == "packed" else []
        layout = statement.layout
        # where each row's segments start: after population (and the variable name if tagged)
        first = 2 if layout == "tagged" else 1
        # the row's tail: the measures, then (bad PD count, PD sums...) where it sums PDs,
        # then (bad target count, moments...) where it sums the target's moments
        n_sums = 1 + request.n_sums if statement.sums.pd else 0
        n_moments = 1 + request.n_moments if statement.sums.moments else 0
        n_tail = n_measures + n_sums + n_moments
        # a batch at a time, closed at the end; no server-side cursor (no parallel plan on
        # PostgreSQL, benchmarks/whole.md): in chunks where the driver can (.chunked, which
        # leaves an empty result without rows)
        chunked = statement.select.execution_options(**{CHUNKED_ROWS: FETCH_ROWS})
        with connection.execute(chunked) as result:
            batches = result.partitions(FETCH_ROWS) if result.returns_rows else iter(())
            if layout == "packed":  # added up as arrays, a batch at a time (binned: no columns)
                assert aggregate.columnar.isdisjoint(v.name for v in variables)
                packed_rows = PackedRows(
                    aggregate, cols, variables, binners, s, weighted, n_measures, n_sums,
                    n_moments, summed, with_moments, first_variable, tally, watched,
                )  # fmt: skip
                for batch in batches:
                    invalid_weights += packed_rows.add(batch)
                continue
            for row in chain.from_iterable(batches):
                measures = row[-n_tail:]
                n, w = measures[0], (measures[1] if weighted else None)
                end = len(row) - n_moments
                sums = row[end - n_sums + 1 : end] if n_sums else None
                moments = row[end + 1 :] if n_moments else None
                population = cols.population_name(row[0])
                segment_values, label = tuple(row[first : first + s]), row[first + s]
                cells: Iterable[tuple[str, Any]]  # (variable name, key) this row counts for
                if layout == "tagged":
                    cells = ((row[1], row[3 + s]),)
                else:
                    k = len(variables)
                    keys, flags = row[2 + s : 2 + s + k], row[2 + s + k : -n_tail]
                    (index,) = [i for i, flag in enumerate(flags) if int(flag) == 0]
                    cells = ((variables[index].name, keys[index]),)
                for name, key in cells:
                    if weighted and name == first_variable:
                        invalid_weights += int(measures[2] or 0)
                    cell_sums = sums if name in summed else None
                    if cell_sums is not None:
                        aggregate.count_invalid_pd(name, measures[n_measures])
                    cell_moments = moments if name in with_moments else None
                    if cell_moments is not None:
                        aggregate.count_invalid_target(name, row[end])
                    add(
                        (population, name, segment_values, label, key),
                        n,
                        w,
                        cell_sums,
                        cell_moments,
                    )
    aggregate.levels = tally.censuses()
    return aggregate, invalid_weights
