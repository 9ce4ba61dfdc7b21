"""A numeric bin in SQL is the bin :meth:`Binning.assign` gives, whichever form the engine runs:
the ``CASE`` tree (SQLite here) or ``width_bucket`` over the edges (PostgreSQL), for values on
an edge and one double either side of it, infinities, NULL, a special value, on double, integer
and numeric columns, and a 4,000-cell grid."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sqlalchemy import (
    Column,
    Double,
    Integer,
    MetaData,
    Numeric,
    Table,
    cast,
    create_engine,
    insert,
    literal,
    select,
)

from riskmon.collect.binsql import NumericBin, bin_expression
from riskmon.metrics import Binning

EDGES = (-2.5, 0.0, 1.0, 3.0, 1e6)


def _values(edges: tuple[float, ...]) -> list[float | None]:
    """Every edge, the doubles next to it, the infinities, NULL and the special value."""
    near = [float(v) for e in edges for v in (np.nextafter(e, -np.inf), e, np.nextafter(e, np.inf))]
    return [*near, -math.inf, math.inf, -5.0, 2.0, 7e9, None, -999.0]


def _bins(url: str, column_type: type, values: list[float | None], binning: Binning) -> list[int]:
    engine = create_engine(url)
    table = Table("x_values", MetaData(), Column("i", Integer), Column("x", column_type))
    try:
        with engine.begin() as connection:
            table.drop(connection, checkfirst=True)
            table.create(connection)
            connection.execute(insert(table), [{"i": i, "x": v} for i, v in enumerate(values)])
            bin_ = bin_expression(table.c.x, binning)
            rows = connection.execute(select(table.c.i, bin_).order_by(table.c.i)).all()
            table.drop(connection)
    finally:
        engine.dispose()
    return [int(b) for _, b in rows]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest) -> str:
    fixture = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return str(request.getfixturevalue(fixture))


def test_a_value_on_an_edge_falls_in_the_bin_below_it_on_every_column_type(url: str) -> None:
    binning = Binning("numeric", edges=EDGES, special=(-999.0,))
    values = _values(EDGES)
    expected = binning.assign(values).tolist()
    assert _bins(url, Double, values, binning) == expected
    whole = [None if v is None or not math.isfinite(v) else v for v in values]
    whole = [v for v in whole if v is None or (v == int(v) and abs(v) < 2**31)]
    assert _bins(url, Integer, whole, binning) == binning.assign(whole).tolist()
    exact = [v for v in values if v is None or (math.isfinite(v) and v == round(v, 6))]
    assert _bins(url, Numeric(20, 6), exact, binning) == binning.assign(exact).tolist()


def test_a_fine_grid_bins_as_numpy_does(url: str) -> None:
    rng = np.random.default_rng(7)
    edges = tuple(np.unique(rng.normal(size=4_000)).tolist())
    binning = Binning("numeric", edges=edges)
    values: list[float | None] = [*rng.normal(size=3_000).tolist(), *edges[::7]]
    assert _bins(url, Double, values, binning) == binning.assign(values).tolist()


@pytest.mark.postgres
def test_a_nan_falls_in_the_last_bin_in_both_forms(postgres_url: str) -> None:
    # PostgreSQL orders NaN above every number: each `x <= edge` of the tree fails, and
    # width_bucket counts every threshold as below it
    nan = cast(literal("NaN"), Double)
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as connection:
            bin_ = NumericBin(nan, EDGES)
            got = connection.execute(select(bin_, bin_.tree)).one()
    finally:
        engine.dispose()
    assert tuple(got) == (len(EDGES), len(EDGES))


def test_a_select_of_the_bin_alone_reads_its_table(url: str) -> None:
    # the expression names the tables it reads: no other column needs to bring them in
    table = Table("one_value", MetaData(), Column("x", Double))
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            table.create(connection)
            connection.execute(insert(table), [{"x": 1.5}])
            edges = ((1.0, 2.0, 3.0), (2.0, 3.0, 4.0), (0.5, 1.0, 1.4), (1.0, 2.0, 3.0))
            got = [connection.execute(select(NumericBin(table.c.x, e))).scalar_one() for e in edges]
            table.drop(connection)
    finally:
        engine.dispose()
    assert got == [1, 0, 3, 1]
