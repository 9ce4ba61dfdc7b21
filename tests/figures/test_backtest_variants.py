"""The back-test's variants in a full run, read back from the store, on every engine: the mean
estimate without its downturn component (``columns.downturn``), the ELBE's two-sided t-test at
reference points (``backtest.estimate``), and a CCF model's realised quantiles and floored share
read from the realised values' grid, each against numpy/scipy on the facilities."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_1samp

from riskmon.errors import ConfigError
from riskmon.metrics import CCF_QUANTILES
from riskmon.records import PERFORMANCE
from riskmon.run import run_model
from riskmon.store import MetricStore, upgrade
from riskmon.store.engine import store_engine

from ..collect.loans import load
from .test_backtest import AS_OF, CLOSED, INITIAL, lgd_model

COLUMNS = {
    "id": "facility_id",
    "score_date": "closed_on",
    "score": "lgd_estimate",
    "realised": "lgd_realised",
    "exposure": "ead",
}


@pytest.fixture
def sqlite_store(tmp_path: Path) -> MetricStore:
    engine = store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    return MetricStore(engine)


def _book(seed: int, n: int = 400) -> pd.DataFrame:
    """Closed and open facilities in two books over the initial sample and the observation
    period: estimates, an estimate without downturn (NULL for some), a reference point, and
    realised values with negatives, exact 0s and 1s and values above 1."""
    rng = np.random.default_rng(seed)
    estimate = rng.uniform(0.0, 0.9, n).round(4)
    realised = np.clip(estimate + rng.normal(0.05, 0.25, n), -0.4, 1.6).round(4)
    realised[rng.random(n) < 0.1] = 0.0
    realised[rng.random(n) < 0.1] = 1.0
    frame = pd.DataFrame(
        {
            "facility_id": np.arange(n),
            "book": rng.choice(["a", "b"], n),
            "years": rng.choice(["0", "1", "3"], n),
            "lgd_estimate": estimate,
            "lgd_downturn_free": (estimate * rng.uniform(0.7, 1.0, n)).round(4),
            "lgd_realised": realised,
            "ead": rng.uniform(10, 1000, n).round(2),
            "closed_on": np.where(rng.random(n) < 0.3, INITIAL, CLOSED),
        }
    )
    frame["lgd_estimate"] = frame["lgd_estimate"].astype("Float64")
    frame["lgd_realised"] = frame["lgd_realised"].astype("Float64")
    frame["lgd_downturn_free"] = frame["lgd_downturn_free"].astype("Float64")
    frame.loc[rng.random(n) < 0.1, "lgd_realised"] = pd.NA  # open recoveries
    frame.loc[rng.random(n) < 0.1, "lgd_downturn_free"] = pd.NA
    return frame


def _run(url: str, store: MetricStore, frame: pd.DataFrame, **overrides: Any) -> dict[Any, Any]:
    load(url, frame, table="recoveries")
    model = lgd_model(url, **overrides)
    outcome = run_model(model, AS_OF, store=store, notify=False)
    assert outcome.ok, outcome.error
    run = store.run(model.name, AS_OF)
    assert run is not None
    return {(f.name, f.variable, f.segment): f for f in store.figures(run.id)}


def _closed(frame: pd.DataFrame) -> pd.DataFrame:
    observed = frame[(frame["closed_on"] == CLOSED) & frame["lgd_realised"].notna()]
    return observed.astype({"lgd_realised": float, "lgd_estimate": float})


def _segments(frame: pd.DataFrame, column: str) -> list[tuple[str, pd.DataFrame]]:
    return [("", frame)] + [(f"{column}={v}", part) for v, part in frame.groupby(column)]


def test_the_mean_estimate_without_downturn_is_that_of_the_closed_facilities_that_have_one(
    database: tuple[str, str], sqlite_store: MetricStore
) -> None:
    _, url = database
    frame = _book(3)
    columns = {**COLUMNS, "segments": ["book"], "downturn": "lgd_downturn_free"}
    figures = _run(url, sqlite_store, frame, columns=columns)
    closed = _closed(frame)
    checked = 0
    for segment, part in _segments(closed, "book"):
        has = part["lgd_downturn_free"].notna()
        found = figures[("backtest_mean_estimate_without_downturn", "", segment)]
        want = float(part.loc[has, "lgd_downturn_free"].astype(float).mean())
        assert found.value == pytest.approx(want, rel=1e-9), segment
        assert found.params == {"closed_with_it": int(has.sum()), "missing": int((~has).sum())}
        # the tested estimate is still the estimate with its downturn component
        mean = figures[("backtest_mean_estimate", "", segment)].value
        assert mean == pytest.approx(float(part["lgd_estimate"].mean()), rel=1e-9)
        checked += 1
    # and per ECB segment of the estimate
    first = closed[closed["lgd_estimate"] < 0.05]
    has = first["lgd_downturn_free"].notna()
    found = figures[("backtest_mean_estimate_without_downturn", "< 5%", "")]
    assert found.value == pytest.approx(float(first.loc[has, "lgd_downturn_free"].mean()))
    assert checked == 3


def test_without_a_downturn_column_no_such_figure_is_stored(sqlite_store: MetricStore) -> None:
    url = f"sqlite:///{sqlite_store.engine.url.database}.loans"
    figures = _run(url, sqlite_store, _book(4))
    assert not [k for k in figures if k[0] == "backtest_mean_estimate_without_downturn"]


def test_an_elbe_is_tested_two_sided_at_each_reference_point(
    database: tuple[str, str], sqlite_store: MetricStore
) -> None:
    _, url = database
    frame = _book(5)
    columns = {**COLUMNS, "segments": ["years"]}
    backtest = {"min_closed": 4, "estimate": "elbe", "reference_point": "years"}
    figures = _run(url, sqlite_store, frame, columns=columns, backtest=backtest)
    closed = _closed(frame)
    for segment, part in _segments(closed, "years"):
        d = part["lgd_realised"] - part["lgd_estimate"]
        want = ttest_1samp(d, 0.0, alternative="two-sided")
        p = figures[("backtest_p", "", segment)]
        assert p.value == pytest.approx(want.pvalue, rel=1e-9), segment
        assert p.params["alternative"] == "two-sided"
        assert figures[("backtest_t", "", segment)].value == pytest.approx(want.statistic)


@pytest.mark.parametrize(
    ("backtest", "message"),
    [
        ({"estimate": "elbe"}, r"backtest\.reference_point: required"),
        ({"estimate": "elbe", "reference_point": "years"}, r"must be one of columns\.segments"),
        ({"reference_point": "book"}, r"only for backtest\.estimate"),
    ],
)
def test_an_elbe_configured_wrongly_is_refused_naming_the_key(
    backtest: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        lgd_model("sqlite:///unused.db", backtest=backtest)


def test_an_elbe_is_an_lgd_models(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"backtest\.estimate: 'elbe' is an LGD model's"):
        lgd_model("sqlite:///x.db", kind="ccf", backtest={"estimate": "elbe"})


def test_a_ccf_models_quantiles_hold_numpys_within_the_grids_bound(
    database: tuple[str, str], sqlite_store: MetricStore
) -> None:
    _, url = database
    frame = _book(7)
    figures = _run(url, sqlite_store, frame, kind="ccf")
    closed = _closed(frame)
    for segment, part in _segments(closed, "book"):
        values = part["lgd_realised"].to_numpy(float)
        floored = figures[("floored_share", "", segment)]
        assert floored.value == pytest.approx(float((values < 0).mean()), rel=1e-12)
        assert floored.params == {"below_zero": int((values < 0).sum()), "closed": len(values)}
        for name, q in CCF_QUANTILES:
            found = figures[(name, "", segment)]
            true = float(np.quantile(values, q, method="inverted_cdf"))
            assert found.population == PERFORMANCE
            assert found.params["low"] < true <= found.params["high"], (name, segment)
            assert abs(found.value - true) <= found.params["error_bound"] + 1e-12
            assert found.params["error_bound"] <= 0.005 + 1e-12
    # exact cells: the realised values hold many 0s and 1s, whose quantiles are exact
    exact = [f for k, f in figures.items() if k[0].startswith("realised_") and f.value in (0, 1)]
    assert exact
    assert all(f.params["error_bound"] == 0 for f in exact)


def test_a_quantile_beyond_the_grid_is_not_available_saying_so(
    sqlite_store: MetricStore, tmp_path: Path
) -> None:
    frame = _book(9, n=60)
    frame.loc[frame.index[:3], "lgd_realised"] = 5.0  # above 200 %: the grid's open end
    frame.loc[frame.index[:3], "closed_on"] = CLOSED
    figures = _run(f"sqlite:///{tmp_path / 'ccf.db'}", sqlite_store, frame, kind="ccf")
    top = figures[("realised_max", "", "")]
    assert top.value is None
    assert top.reason == "the quantile lies above 2, outside the grid"
    assert figures[("realised_p50", "", "")].value is not None


def test_a_ccf_models_facilities_under_the_ead_approach_are_left_out_and_counted(
    database: tuple[str, str], sqlite_store: MetricStore
) -> None:
    """``columns.ead_approach``: flagged facilities (true) are not back-tested — the t-test is
    scipy's on the others — and ``ead_approach_share`` is M_EAD over the facilities read."""
    _, url = database
    frame = _book(11)
    rng = np.random.default_rng(11)
    frame["ead_approach"] = pd.array(rng.random(len(frame)) < 0.2, dtype="boolean")
    frame.loc[frame.index[:5], "ead_approach"] = pd.NA  # not flagged
    columns = {**COLUMNS, "segments": ["book"], "ead_approach": "ead_approach"}
    figures = _run(url, sqlite_store, frame, kind="ccf", columns=columns)
    period = frame[frame["closed_on"] == CLOSED]
    flagged = period["ead_approach"].fillna(False).astype(bool)
    tested = _closed(period[~flagged])
    for segment, part in _segments(tested, "book"):
        d = part["lgd_realised"] - part["lgd_estimate"]
        want = ttest_1samp(d, 0.0, alternative="greater")
        assert figures[("backtest_n", "", segment)].value == len(part)
        assert figures[("backtest_p", "", segment)].value == pytest.approx(want.pvalue, rel=1e-9)
    share = figures[("ead_approach_share", "", "")]
    with_estimate = period["lgd_estimate"].notna()
    m_ead = int((flagged & with_estimate).sum())
    assert share.params == {"ead_approach": m_ead, "facilities": int(with_estimate.sum())}
    assert share.value == pytest.approx(m_ead / with_estimate.sum(), rel=1e-12)
    assert figures[("excluded_share", "", "")].params["ead_approach"] == m_ead


def test_the_ead_approach_flag_is_a_ccf_models() -> None:
    columns = {**COLUMNS, "ead_approach": "flag"}
    with pytest.raises(ConfigError, match=r"columns\.ead_approach: only for a model of kind"):
        lgd_model("sqlite:///x.db", columns=columns)
