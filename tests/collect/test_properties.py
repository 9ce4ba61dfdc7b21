"""Property: on random loan tables, every database and every collect strategy give the count
tables (and figures) that the in-memory functions give."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskmon.collect import Source, collect
from riskmon.errors import DegenerateDataWarning
from riskmon.metrics import (
    population_stability_index_from_counts,
    roc_auc_from_counts,
)

from .loans import load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, WEIGHT_RTOL, expected_tables, fitted_on, request

#: a random loan table: its seed and size, weighted or not, segmented or not, and its bins
RANDOM_LOAN_TABLES = given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(20, 1500),
    weighted=st.booleans(),
    segmented=st.booleans(),
    n_bins=st.integers(2, 12),
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@RANDOM_LOAN_TABLES
def test_random_loan_tables(
    database: tuple[str, str], seed: int, n: int, weighted: bool, segmented: bool, n_bins: int
) -> None:
    dialect, url = database
    frame = loan_frame(seed=seed, n=n, weighted=weighted)
    load(url, frame)
    req = request(weighted=weighted, segments=("channel",) if segmented else ())
    req = fitted_on(frame, req, n_bins)
    expected = expected_tables(frame, req)
    with Source(model_config(url, weighted=weighted)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            assert set(collected.tables) == set(expected)
            rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
            for key, table in expected.items():
                assert collected.tables[key].equals(table, rtol=rtol), (strategy, key)
            # tiny random samples are often degenerate (one bad, an empty window): the figures
            # are then NaN on both sides, which is what the comparison checks
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDataWarning)
                got = float(roc_auc_from_counts(collected.table("performance", "score_values")))
                want = float(roc_auc_from_counts(expected[("performance", "score_values", "")]))
                perf, current = (collected.table(p, "region") for p in ("performance", "current"))
                got_psi = float(population_stability_index_from_counts(perf.unlabeled(), current))
                want_psi = float(
                    population_stability_index_from_counts(
                        expected[("performance", "region", "")].unlabeled(),
                        expected[("current", "region", "")],
                    )
                )
            assert got == pytest.approx(want, abs=1e-9, nan_ok=True)
            assert got_psi == pytest.approx(want_psi, abs=1e-9, nan_ok=True)
