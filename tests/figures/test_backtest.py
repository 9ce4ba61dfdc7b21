"""The back-testing family in a full run: a small LGD book in a source database (SQLite, DuckDB,
PostgreSQL, MariaDB) reproduces FORMULAS.md's worked examples, read back from the store; its
rules judge, and its report section renders."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from riskmon.config import ModelConfig, RiskmonConfig, StoreConfig, parse_config
from riskmon.errors import ConfigError
from riskmon.records import PERFORMANCE, Status
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore, upgrade
from riskmon.store.engine import store_engine

from ..collect.loans import load
from ..report.htmltree import parse

AS_OF = dt.date(2025, 6, 30)
CLOSED = dt.date(2025, 3, 15)  # in the observation window (12 months to AS_OF)
INITIAL = dt.date(2024, 3, 15)  # in the initial validation sample's window
#: FORMULAS.md: the t-test's, the loss shortfall's and the generalised AUC's examples
T_ESTIMATED = [0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65]
T_REALISED = [0.10, 0.40, 0.25, 0.55, 0.35, 0.70, 0.45, 0.50, 0.90, 0.60]
LS_EAD = [100.0, 200.0, 100.0, 100.0]
LS_ESTIMATED, LS_REALISED = [0.2, 0.4, 0.6, 0.8], [0.1, 0.5, 0.4, 0.9]
GAUC_TABLE = [[30, 12, 6, 2], [10, 25, 15, 5], [3, 8, 20, 14]]
#: an estimate and a realised value in each of the ECB's first four segments
CLASS_VALUES = [0.02, 0.07, 0.15, 0.25]


def _rows(book: str, estimated: list[float], realised: list[Any], ead: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {"book": book, "lgd_estimate": estimated, "lgd_realised": realised, "ead": ead}
    )


def _gauc_rows() -> pd.DataFrame:
    estimated, realised = [], []
    for i, row in enumerate(GAUC_TABLE):
        for j, count in enumerate(row):
            estimated += [CLASS_VALUES[i]] * count
            realised += [CLASS_VALUES[j]] * count
    return _rows("gauc", estimated, realised, [1.0] * len(estimated))


def lgd_book() -> pd.DataFrame:
    """Three books, one a worked example each, closed in the observation window; two open
    recoveries, a facility without an estimate; the gAUC book again in the initial sample."""
    closed = pd.concat(
        [
            _rows("ttest", T_ESTIMATED, T_REALISED, [1.0] * 10),
            _rows("ttest", [0.3, 0.4], [None, None], [1.0, 1.0]),  # open recoveries
            _rows("ttest", [None], [0.5], [1.0]),  # no estimate: left out, counted
            _rows("shortfall", LS_ESTIMATED, LS_REALISED, LS_EAD),
            _gauc_rows(),
        ]
    )
    closed["closed_on"] = CLOSED
    initial = _gauc_rows()
    initial["closed_on"] = INITIAL
    frame = pd.concat([closed, initial], ignore_index=True)
    frame["facility_id"] = np.arange(len(frame))
    frame["lgd_estimate"] = frame["lgd_estimate"].astype("Float64")
    frame["lgd_realised"] = frame["lgd_realised"].astype("Float64")
    return frame


def lgd_model(url: str, **overrides: Any) -> ModelConfig:
    model = {
        "name": "retail_lgd",
        "kind": "lgd",
        "source": {"url": url, "table": "recoveries"},
        "columns": {
            "id": "facility_id",
            "score_date": "closed_on",
            "score": "lgd_estimate",
            "realised": "lgd_realised",
            "exposure": "ead",
            "segments": ["book"],
        },
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
        "backtest": {"initial_gauc": 0.70, "min_closed": 4},
        **overrides,
    }
    return parse_config({"models": [model]}, source="test", env={}).models[0]


@pytest.fixture
def sqlite_store(tmp_path: Path) -> MetricStore:
    engine = store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    return MetricStore(engine)


def test_a_run_reproduces_the_worked_examples(
    database: tuple[str, str], sqlite_store: MetricStore, tmp_path: Path
) -> None:
    _, url = database
    load(url, lgd_book(), table="recoveries")
    model = lgd_model(url)
    outcome = run_model(model, AS_OF, store=sqlite_store, notify=False)
    assert outcome.ok, outcome.error
    run = sqlite_store.run(model.name, AS_OF)
    assert run is not None
    figures = {
        (f.name, f.variable, f.segment): f
        for f in sqlite_store.figures(run.id)
        if f.population == PERFORMANCE
    }

    def value(name: str, segment: str, variable: str = "") -> float | None:
        return figures[(name, variable, segment)].value

    t = "book=ttest"
    assert value("backtest_n", t) == 10
    assert value("backtest_mean_estimate", t) == pytest.approx(0.425, abs=1e-9)
    assert value("backtest_mean_realised", t) == pytest.approx(0.48, abs=1e-9)
    assert value("backtest_variance", t) == pytest.approx(0.02302778, abs=1e-8)
    assert value("backtest_t", t) == pytest.approx(1.146137, abs=1e-6)
    assert value("backtest_p", t) == pytest.approx(0.140649, abs=1e-6)
    assert figures[("backtest_n", "", t)].params["open"] == 2
    assert value("loss_shortfall", "book=shortfall") == pytest.approx(0.0, abs=1e-9)
    assert value("mad", "book=shortfall") == pytest.approx(0.12, abs=1e-9)
    g = "book=gauc"
    assert value("gauc", g) == pytest.approx(0.758395, abs=1e-6)
    assert value("gauc_se", g) == pytest.approx(0.030890, abs=1e-6)
    assert value("gauc_test_p", g) == pytest.approx(0.970646, abs=1e-6)
    # the initial sample is the same table: no shift in the estimates
    assert value("estimate_psi", g) == pytest.approx(0.0, abs=1e-12), figures[
        ("estimate_psi", "", g)
    ]
    # per ECB segment of the estimate, as its variable: the gAUC book's first row, 50 closed
    assert value("backtest_n", g, "< 5%") == 50
    # the whole population: 10 + 4 + 150 closed of 167 read (2 open, 1 without an estimate)
    share = figures[("excluded_share", "", "")]
    assert share.value == pytest.approx(3 / 167)
    assert share.params["missing_estimate"] == 1
    assert share.params["open"] == 2

    alerts = {(a.rule, a.variable, a.segment): a for a in sqlite_store.alerts(run.id)}
    assert alerts[("backtest_underestimation", "", t)].status == Status.GREEN
    assert alerts[("gauc_deterioration", "", g)].status == Status.GREEN

    config = RiskmonConfig(store=StoreConfig(url="sqlite://", reports_dir=tmp_path / "reports"))
    config = config.model_copy(update={"models": [model]})
    path = render_run_report(config, sqlite_store, model.name, AS_OF)
    section = parse(path.read_text(encoding="utf-8")).get("section", id="backtest")
    whole = section.get("tr", data_segment="portfolio")
    assert "164" in whole.text()  # 10 + 4 + 150 closed recoveries
    assert section.get("tr", data_figure="gauc")


def test_a_kind_without_its_columns_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"columns\.realised: required"):
        parse_config(
            {
                "models": [
                    {
                        "name": "m",
                        "kind": "lgd",
                        "source": {"url": "sqlite:///x.db", "table": "t"},
                        "columns": {"id": "i", "score_date": "d", "score": "s"},
                        "score_direction": "higher_is_riskier",
                        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
                    }
                ]
            },
            source="test",
            env={},
        )


def test_an_empty_observation_period_is_not_available_and_renders(
    sqlite_store: MetricStore, tmp_path: Path
) -> None:
    """No recovery closed in the period: the run succeeds, its figures are not available with a
    reason, its rules NOT_EVALUABLE, and the section renders."""
    url = f"sqlite:///{tmp_path / 'recoveries.db'}"
    load(url, lgd_book(), table="recoveries")
    model = lgd_model(url)
    later = dt.date(2027, 6, 30)
    outcome = run_model(model, later, store=sqlite_store, notify=False)
    assert outcome.ok, outcome.error
    run = sqlite_store.run(model.name, later)
    assert run is not None
    whole = {f.name: f for f in sqlite_store.figures(run.id) if f.population == PERFORMANCE}
    assert whole["backtest_n"].value == 0
    assert whole["backtest_p"].value is None
    assert "at least 2" in str(whole["backtest_p"].reason)
    assert whole["gauc"].value is None
    assert whole["gauc"].reason
    alerts = [a for a in sqlite_store.alerts(run.id) if a.rule == "backtest_underestimation"]
    assert alerts
    assert all(a.status == Status.NOT_EVALUABLE for a in alerts)
    config = RiskmonConfig(store=StoreConfig(url="sqlite://", reports_dir=tmp_path / "reports"))
    config = config.model_copy(update={"models": [model]})
    path = render_run_report(config, sqlite_store, model.name, later)
    assert parse(path.read_text(encoding="utf-8")).get("section", id="backtest")


def test_a_realised_column_of_text_fails_the_run_naming_it(
    sqlite_store: MetricStore, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'recoveries.db'}"
    book = lgd_book()
    book["lgd_realised"] = (
        book["lgd_realised"].astype(object).where(book.index % 7 != 0, "written off")
    )
    load(url, book, table="recoveries")
    outcome = run_model(lgd_model(url), AS_OF, store=sqlite_store, notify=False)
    assert not outcome.ok
    assert "'lgd_realised'" in str(outcome.error)
    assert "columns.realised" in str(outcome.error)
