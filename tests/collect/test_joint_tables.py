"""Property: a joint table (one variable's bins crossed with another's, as a challenger is
compared with the score) is the same from every database, every collect strategy and the
loans themselves (pandas on the arrays)."""

from __future__ import annotations

import dataclasses

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskmon.collect import Source, Variable, collect, pushdown
from riskmon.metrics import Binning, CountTable
from riskmon.records import ALL

from .loans import load, loan_frame, model_config
from .test_collect import (
    INCOME_BINS,
    REGION_BINS,
    SCORE_BINS,
    STRATEGIES_BY_DIALECT,
    WEIGHT_RTOL,
    request,
)

SCORE_BY_INCOME = Variable(
    "challenger:income", "pd_score", SCORE_BINS, crossed=Variable("x", "income", INCOME_BINS)
)
INCOME_BY_REGION = Variable(
    "challenger:region", "income", INCOME_BINS, crossed=Variable("y", "region", REGION_BINS)
)


def _expected(
    frame: pd.DataFrame, variable: Variable, population: str, labeled: bool, weighted: bool
) -> dict[str, CountTable]:
    """The joint table per segment, computed from the loans with pandas."""
    assert variable.binning is not None
    assert variable.crossed is not None
    assert variable.crossed.binning is not None
    first = variable.binning.assign(frame[variable.column].to_numpy(object))
    second = variable.crossed.binning.assign(frame[variable.crossed.column].to_numpy(object))
    keyed = frame.assign(key=first * variable.crossed.binning.n_bins + second)
    if labeled:
        keyed = keyed[keyed["bad"].notna()]
    parts = [(ALL, keyed)] + [
        ("channel IS NULL" if value == "\0" else f"channel={value}", part)
        for value, part in keyed.groupby(keyed["channel"].fillna("\0"))
    ]
    out = {}
    for segment, part in parts:
        weight = part["exposure"] if weighted else pd.Series(1.0, index=part.index)
        label = part["bad"].astype(float) if labeled else pd.Series(0.0, index=part.index)
        grouped = (
            pd.DataFrame({"key": part["key"], "label": label, "w": weight})
            .groupby(["key", "label"])["w"]
            .agg(["size", "sum"])
        )
        rows = [
            (key, int(lab) if labeled else None, n, w)
            for (key, lab), n, w in zip(grouped.index, grouped["size"], grouped["sum"], strict=True)
        ]
        out[segment] = CountTable.from_rows(rows, labeled=labeled)
    return out


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(30, 1500), weighted=st.booleans())
def test_joint_tables_agree_everywhere(
    database: tuple[str, str], seed: int, n: int, weighted: bool
) -> None:
    dialect, url = database
    frame = loan_frame(seed=seed, n=n, weighted=weighted)
    load(url, frame)
    base = request(weighted=weighted)
    req = dataclasses.replace(base, variables=[*base.variables, SCORE_BY_INCOME, INCOME_BY_REGION])
    expected = {}  # (population, variable) -> the tables per segment, whatever the strategy
    for population in req.populations:
        window = frame["score_date"].map(population.window.__contains__)
        for variable in (SCORE_BY_INCOME, INCOME_BY_REGION):
            expected[population.name, variable.name] = _expected(
                frame[window], variable, population.name, population.labeled, weighted
            )
    rtol = max(WEIGHT_RTOL.get(dialect, 1e-12), 1e-12)
    with Source(model_config(url, weighted=weighted)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            for (population_name, variable_name), tables in expected.items():
                for segment, table in tables.items():
                    got = collected.table(population_name, variable_name, segment)
                    assert got.equals(table, rtol=rtol), (strategy, variable_name, segment)


def test_a_joint_variable_packs_by_its_number_of_keys() -> None:
    # 7 score bins × 7 income bins = 49 keys: too many for a pack of 35 cells, alone
    small = Variable("s", "pd_score", Binning("numeric", edges=(0.2,)))  # 3 bins
    packs = pushdown.packs([small, SCORE_BY_INCOME, small], max_cells=35)
    assert [[v.name for v in p] for p in packs] == [["s", "s"], ["challenger:income"]]
    assert SCORE_BY_INCOME.n_keys == SCORE_BINS.n_bins * INCOME_BINS.n_bins
