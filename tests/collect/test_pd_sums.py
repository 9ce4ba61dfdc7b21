"""Property: the PD sums of the calibration grades are the same from every database, every
collect strategy and the loans themselves (numpy on the arrays)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskmon.collect import Source, collect
from riskmon.collect.request import CollectRequest, PdSource, Variable
from riskmon.errors import SourceError
from riskmon.metrics import Binning, PdTable, fit_binning
from riskmon.records import ALL

from .loans import PERFORMANCE, load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, WEIGHT_RTOL, request


def _with_sums(
    req: CollectRequest, grades: Binning, pd_source: PdSource, column: str
) -> CollectRequest:
    variables = [*req.variables, Variable("pd_grade", column, grades, sums=True)]
    return dataclasses.replace(req, variables=variables, pd=pd_source)


def _expected(
    frame: pd.DataFrame, req: CollectRequest, grades: Binning, column: str
) -> dict[tuple[str, str, str], PdTable]:
    """The PD sums computed from the loans, with numpy."""
    assert req.pd is not None
    out = {}
    for population in req.populations:
        rows = frame[frame["score_date"].map(population.window.__contains__)]
        if population.labeled:
            rows = rows[rows["bad"].notna()]
        parts = [(ALL, rows)]
        for value, part in rows.groupby(rows["channel"].fillna("\0")):
            parts.append(("channel IS NULL" if value == "\0" else f"channel={value}", part))
        for segment, part in parts:
            if not req.segments and segment != ALL:
                continue
            y = part["bad"].fillna(0).to_numpy(float) if population.labeled else np.zeros(len(part))
            p = req.pd.of(part[req.pd.column].to_numpy(float))
            w = part[req.weight].to_numpy(float) if req.weight else None
            out[(population.name, "pd_grade", segment)] = PdTable.from_arrays(
                y,
                p,
                grades.assign(part[column].to_numpy(object)),
                n_bins=grades.n_bins,
                sample_weight=w,
                labels=grades.labels,
            )
    return out


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(20, 1200),
    weighted=st.booleans(),
    segmented=st.booleans(),
    points=st.booleans(),
)
def test_pd_sums_agree_everywhere(
    database: tuple[str, str], seed: int, n: int, weighted: bool, segmented: bool, points: bool
) -> None:
    dialect, url = database
    frame = loan_frame(seed=seed, n=n, weighted=weighted)
    rng = np.random.default_rng(seed)
    # a scorecard's points beside the PD: integers with many ties
    frame["points"] = rng.integers(450, 750, n)
    load(url, frame)
    if points:
        pd_source, column = PdSource("points", points=600.0, odds=30.0, pdo=20.0), "points"
    else:
        pd_source, column = PdSource("pd_score"), "pd_score"
    grades = fit_binning(frame[column].to_numpy(float), kind="numeric", n_bins=5)
    base = request(weighted=weighted, segments=("channel",) if segmented else ())
    req = _with_sums(base, grades, pd_source, column)
    expected = _expected(frame, req, grades, column)
    with Source(model_config(url, weighted=weighted)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            rtol = max(WEIGHT_RTOL.get(dialect, 1e-12), 1e-9)
            assert set(collected.pd_tables) == set(expected), strategy
            for key, table in expected.items():
                assert collected.pd_tables[key].equals(table, rtol=rtol), (strategy, key)


@pytest.mark.parametrize("bad", [1.5, -0.1])
def test_a_pd_outside_zero_one_fails_naming_the_column(
    database: tuple[str, str], bad: float
) -> None:
    dialect, url = database
    frame = loan_frame(seed=3, n=200, weighted=False)
    frame["model_pd"] = frame["pd_score"]
    frame.loc[frame.index[:3], "model_pd"] = bad
    frame["score_date"] = PERFORMANCE[0]  # every loan in the performance cohort
    load(url, frame)
    grades = Binning("numeric", edges=(0.1, 0.2))
    base = request(weighted=False)
    req = _with_sums(base, grades, PdSource("model_pd"), "pd_score")
    config = model_config(url, weighted=False, calibration={"pd": "model_pd"})
    with Source(config) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            with pytest.raises(SourceError, match=r"'model_pd' \(calibration.pd\).*outside"):
                collect(source, req, strategy=strategy)
