"""Migration counts read as rows, where the one-statement count of
:mod:`riskmon.collect.migration` cannot run: the tagged rows of both snapshots read in obligor
order, a chunk at a time, each obligor's rows completed across chunk boundaries, so that memory
holds one chunk; the database sorts. The same cells as the pushdown, counted in numpy/pandas."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, FromClause, select

from riskmon.collect.binsql import category_text
from riskmon.collect.deadline import progressed
from riskmon.collect.migration import END, START, MigrationRequest, Tally, count_unlinked
from riskmon.collect.request import ColumnDataError
from riskmon.collect.selection import QueryColumns
from riskmon.errors import InvalidDataError

if TYPE_CHECKING:
    import pandas as pd

#: rows per chunk of the streaming reader
DEFAULT_CHUNK_ROWS = 20_000


def stream(
    connection: Connection,
    loans: FromClause,
    request: MigrationRequest,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> Tally:
    """Count the migrations from the rows, read in obligor order a chunk at a time."""
    import pandas as pd

    tables = request.tables
    cols = QueryColumns(loans, tables, tables.populations)
    obligor = loans.c[request.obligor]
    grade = request.grade
    raw = cols.loans.c[grade.column]
    assert grade.binning is not None
    value = category_text(raw) if grade.binning.kind == "categorical" else raw
    weight = [] if cols.weight is None else [cols.weight]
    query = (
        select(obligor, cols.population, cols.date, value, cols.label, *weight, *cols.segments)
        .select_from(loans)
        .where(cols.where, obligor.is_not(None))
        .order_by(obligor, cols.population, cols.date)
    )
    names = ["obligor", "snapshot", "score_date", "value", "label"]
    names += ["w"] if weight else []
    names += [f"segment_{i}" for i in range(len(tables.segments))]
    tally = Tally(request)
    assign = _assigner(request)
    # the statement's options: the connection's would stream every statement after it
    streamed = {"stream_results": True, "yield_per": chunk_rows}
    result = connection.execute(query, execution_options=streamed)
    held: pd.DataFrame | None = None
    for chunk in result.partitions(chunk_rows):
        progressed()  # each chunk has the whole read deadline
        frame = pd.DataFrame.from_records(list(chunk), columns=names)
        if held is not None:
            frame = pd.concat([held, frame], ignore_index=True)
        # the last obligor of the chunk may go on in the next one
        last = frame["obligor"].iloc[-1]
        ends = (frame["obligor"] == last).to_numpy()
        held = frame[ends]
        _add_obligors(tally, frame[~ends], assign)
    if held is not None:
        _add_obligors(tally, held, assign)
    count_unlinked(connection, loans, request, tally)
    return tally


def _assigner(request: MigrationRequest) -> Callable[[Any], Any]:
    """Each value's grade bin, as the SQL of :func:`bin_expression` assigns it."""
    grade = request.grade
    binning = grade.binning
    assert binning is not None
    pd_source = request.tables.pd

    def assign(values: Any) -> Any:
        import pandas as pd

        if grade.on_pd and pd_source is not None:
            numbers = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(float)
            values = pd_source.of(numbers)
        try:
            return binning.assign(np.asarray(values, dtype=object))
        except InvalidDataError as exc:
            raise ColumnDataError(grade.column, str(exc)) from None

    return assign


def _add_obligors(tally: Tally, frame: pd.DataFrame, assign: Callable[[Any], Any]) -> None:
    """Add the whole obligors of ``frame`` (rows sorted by obligor, snapshot, score date)."""
    import pandas as pd

    if frame.empty:
        return
    frame = frame.assign(snapshot=frame["snapshot"].astype(int), grade=assign(frame["value"]))
    frame = frame.drop(columns="value")
    by = ["obligor", "snapshot"]
    # each obligor's newest score date in each snapshot, compared by rank: the dates come as
    # Python objects (or text), whose groupby maximum pandas takes one group at a time in
    # Python (a fifth of the demo's migration reading); a NULL date (code -1) is never newest
    codes = pd.Series(pd.factorize(frame["score_date"], sort=True)[0], index=frame.index)
    newest = codes.groupby([frame[c] for c in by]).transform("max")
    latest = frame[(codes == newest) & (codes >= 0)]
    rows = latest.groupby(by).size().rename("rows")
    first = latest.groupby(by).head(1).set_index(by).join(rows)
    wide = first.unstack("snapshot")  # noqa: PD010 (one row per cell: nothing to aggregate)
    fields = [c for c in first.columns if c != "score_date"]
    wide = wide.reindex(columns=pd.MultiIndex.from_product([fields, [START, END]]))
    present = [wide[("rows", i)].notna().to_numpy() for i in (START, END)]
    side = np.where(present[START], START, END)
    n_segments = sum(c.startswith("segment_") for c in fields)
    keys = pd.DataFrame(
        {
            "p0": present[START],
            "p1": present[END],
            "d0": present[START] & (wide[("rows", START)].fillna(0).to_numpy() > 1),
            "d1": present[END] & (wide[("rows", END)].fillna(0).to_numpy() > 1),
            "g0": wide[("grade", START)].to_numpy(dtype=object),
            "g1": wide[("grade", END)].to_numpy(dtype=object),
            "y0": wide[("label", START)].to_numpy(dtype=object),
        }
        | {
            f"segment_{i}": np.where(
                side == START,
                wide[(f"segment_{i}", START)].to_numpy(dtype=object),
                wide[(f"segment_{i}", END)].to_numpy(dtype=object),
            )
            for i in range(n_segments)
        }
    )
    for column in keys.columns[4:]:
        keys[column] = [_none(v, pd.isna) for v in keys[column]]
    w = None
    if "w" in fields:
        chosen = np.where(side == START, wide[("w", START)], wide[("w", END)])
        values = pd.to_numeric(pd.Series(chosen), errors="coerce").to_numpy(np.float64)
        invalid = np.isnan(values) | (values < 0)
        tally.invalid_weights += int(invalid.sum())
        w = np.where(invalid, 0.0, values)
    summed = keys.assign(n=1, w=1.0 if w is None else w)
    grouped = summed.groupby(list(keys.columns), dropna=False, sort=False)[["n", "w"]].sum()
    for combination, (n, weight) in grouped.iterrows():
        p0, p1, d0, d1, g0, g1, y0, *segments = (_none(v, pd.isna) for v in combination)
        tally.add(
            present=(bool(p0), bool(p1)),
            duplicate=(bool(d0), bool(d1)),
            grades=(g0, g1),
            label=y0,
            segment_values=segments,
            n=int(n),
            w=None if w is None else float(weight),
        )


def _none(value: Any, isna: Callable[[Any], bool]) -> Any:
    """A value as SQL returns it: NULL (NaN, None, NA: ``isna``, pandas') as None, numpy
    scalars as Python's."""
    if value is None or (not isinstance(value, str) and isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value
