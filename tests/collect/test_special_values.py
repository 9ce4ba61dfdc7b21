"""Property: a special value (a numeric -999, an income that is also an ordinary bin's value,
a region level) is counted in its own bin and never in an ordinary one, on every database and
every collect strategy, as pandas counts the loans holding it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskmon.collect import Source, collect
from riskmon.metrics import Binning

from .loans import CURRENT, load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, WEIGHT_RTOL, expected_tables, fitted_on, request

#: the special values: "no record" far below every income, and one inside the ordinary range
NO_RECORD = -999.0


def _with_special(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, float]:
    rng = np.random.default_rng(seed)
    income = frame["income"].to_numpy(dtype=np.float64, na_value=np.nan).copy()
    income[rng.random(len(frame)) < 0.1] = NO_RECORD
    known = income[~np.isnan(income) & (income != NO_RECORD)]
    inside = float(np.median(known)) if known.size else 50.0  # an edge or a bin's middle
    return frame.assign(income=income), inside


def _special(binning: Binning, special: tuple[float | str, ...]) -> Binning:
    """``binning`` with ``special`` values (a categorical one's levels without them)."""
    levels = tuple(
        kept for kept in (tuple(v for v in g if v not in special) for g in binning.levels) if kept
    )
    return dataclasses.replace(binning, levels=levels, special=special)


def _specials(req: object, inside: float) -> object:
    specials = {"income": (NO_RECORD, inside), "region": ("S",)}
    variables = [
        v
        if v.name not in specials
        else dataclasses.replace(v, binning=_special(v.binning, specials[v.name]))
        for v in req.variables  # type: ignore[attr-defined]
    ]
    return dataclasses.replace(req, variables=variables)  # type: ignore[type-var]


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(30, 400), n_bins=st.integers(2, 8))
def test_special_values_never_fall_into_an_ordinary_bin(
    database: tuple[str, str], seed: int, n: int, n_bins: int
) -> None:
    dialect, url = database
    frame, inside = _with_special(loan_frame(seed=seed, n=n), seed)
    load(url, frame)
    req = _specials(fitted_on(frame, request(), n_bins), inside)
    expected = expected_tables(frame, req)  # type: ignore[arg-type]
    current = frame[frame["score_date"].map(lambda d: CURRENT[0] <= d <= CURRENT[1])]
    with Source(model_config(url)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)  # type: ignore[arg-type]
            rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
            for key, table in expected.items():
                assert collected.tables[key].equals(table, rtol=rtol), (strategy, key)
            for name, special in (("income", (NO_RECORD, inside)), ("region", ("S",))):
                table = collected.table("current", name)
                binning = table.binning
                assert isinstance(binning, Binning)
                values = current[name]
                held = [int((values == v).sum()) for v in special]
                counted = [int(table.n_total[i]) for i in binning.special_indices]
                assert counted == held, (strategy, name)
                ordinary = int(np.asarray(table.n_total)[: binning.n_value_bins].sum())
                others = values.notna() & ~values.isin(list(special))
                if binning.kind == "categorical":  # the unseen bin holds ordinary values too
                    ordinary += int(table.n_total[binning.unseen_index])
                assert ordinary == int(others.sum()), (strategy, name)


def test_assign_puts_special_values_in_their_own_bins() -> None:
    numeric = Binning("numeric", edges=(0.0, 10.0), special=(-999.0, 5.0))
    assert numeric.assign([-999, 5, 4.9, 5.1, None, 11]).tolist() == [4, 5, 1, 1, 3, 2]
    assert numeric.labels[-2:] == ("special -999", "special 5")
    categorical = Binning("categorical", levels=(("a",), ("b",)), special=("none",))
    assert categorical.assign(["a", "none", "z", None]).tolist() == [0, 4, 3, 2]
    assert Binning.from_dict(numeric.to_dict()) == numeric
    assert Binning.from_dict(categorical.to_dict()) == categorical
    with pytest.raises(Exception, match="special values outside the levels"):
        Binning("categorical", levels=(("a",),), special=("a",))
