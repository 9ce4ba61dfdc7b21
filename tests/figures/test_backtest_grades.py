"""The back-test per grade: a model's ``columns.grade`` with at most 20 grades in the initial
sample is back-tested grade by grade (ordered by their mean estimate there), each grade's t-test
equal to scipy's on its facilities, on every engine; with more grades, per ECB segment of the
estimate, saying so."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

from riskmon.cli import cli
from riskmon.config import ModelConfig, RiskmonConfig, StoreConfig, parse_config
from riskmon.errors import ConfigError
from riskmon.metrics import ECB_SEGMENT_LABELS
from riskmon.records import PERFORMANCE, FigureRecord
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore, upgrade
from riskmon.store.engine import store_engine

from ..collect.loans import load
from ..report.htmltree import parse

AS_OF = dt.date(2025, 6, 30)
CLOSED = dt.date(2025, 3, 15)
INITIAL = dt.date(2024, 3, 15)
#: grade names whose alphabetical order is not their risk order: the order must come from the
#: estimates
GRADES = {"low": 0.1, "mid": 0.3, "high": 0.6, "d": 0.85}


def _book(seed: int, grades: dict[str, float], n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = list(grades)
    grade = rng.choice(names, size=n)
    estimate = np.clip([grades[g] for g in grade] + rng.normal(0, 0.05, n), 0.01, 0.99)
    realised = np.clip(estimate + rng.normal(0.02, 0.2, n), -0.05, 1.1)
    frame = pd.DataFrame(
        {
            "facility_id": np.arange(n),
            "closed_on": np.where(np.arange(n) < n // 2, INITIAL, CLOSED),
            "lgd_grade": grade.astype(object),
            "lgd_estimate": np.round(estimate, 4),
            "lgd_realised": np.round(realised, 4),
            "ead": np.round(rng.lognormal(8, 0.5, n), 2),
        }
    )
    frame.loc[frame.index[-3:], "lgd_realised"] = None  # open recoveries
    frame.loc[frame.index[-5], "lgd_grade"] = None  # a facility without a grade
    frame["lgd_estimate"] = frame["lgd_estimate"].astype("Float64")
    frame["lgd_realised"] = frame["lgd_realised"].astype("Float64")
    return frame


def _model(url: str) -> ModelConfig:
    model: dict[str, Any] = {
        "name": "graded_lgd",
        "kind": "lgd",
        "source": {"url": url, "table": "recoveries"},
        "columns": {
            "id": "facility_id",
            "score_date": "closed_on",
            "score": "lgd_estimate",
            "realised": "lgd_realised",
            "exposure": "ead",
            "grade": "lgd_grade",
        },
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
        "backtest": {"min_closed": 5},
    }
    return parse_config({"models": [model]}, source="test", env={}).models[0]


def _run(url: str, frame: pd.DataFrame, tmp_path: Path) -> tuple[MetricStore, list[FigureRecord]]:
    load(url, frame, table="recoveries")
    engine = store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    store = MetricStore(engine)
    outcome = run_model(_model(url), AS_OF, store=store, notify=False)
    assert outcome.ok, outcome.error
    run = store.run("graded_lgd", AS_OF)
    assert run is not None
    figures = [f for f in store.figures(run.id) if f.population == PERFORMANCE and not f.segment]
    return store, figures


def test_each_grade_is_back_tested_as_scipy_tests_its_facilities(
    database: tuple[str, str], tmp_path: Path
) -> None:
    _, url = database
    frame = _book(5, GRADES)
    store, figures = _run(url, frame, tmp_path)
    by = {(f.name, f.variable): f for f in figures}
    # the grades in their risk order in the initial sample, each with its position
    graded = sorted(
        (f for f in figures if f.name == "backtest_n" and f.variable),
        key=lambda f: f.params["grade"],
    )
    assert [f.variable for f in graded] == ["low", "mid", "high", "d", "missing"]
    assert by[("backtest_n", "")].params["classes"] == "grades"
    closed = frame[(frame["closed_on"] == CLOSED) & frame["lgd_realised"].notna()]
    for grade, rows in closed.groupby(closed["lgd_grade"].fillna("missing")):
        assert by[("backtest_n", grade)].value == len(rows)
        if len(rows) < 2:  # the facility without a grade: reported, no t-test
            assert by[("backtest_p", grade)].value is None
            continue
        d = (rows["lgd_realised"] - rows["lgd_estimate"]).astype(float)
        test = stats.ttest_1samp(d, 0.0, alternative="greater")
        assert by[("backtest_t", grade)].value == pytest.approx(test.statistic, rel=1e-9)
        assert by[("backtest_p", grade)].value == pytest.approx(test.pvalue, rel=1e-9)
        mean = float(rows["lgd_estimate"].astype(float).mean())
        assert by[("backtest_mean_estimate", grade)].value == pytest.approx(mean, rel=1e-12)
    # the portfolio holds every closed facility, those without a grade too
    assert by[("backtest_n", "")].value == len(closed)
    # the estimates' distribution over the grades against the initial sample's
    assert by[("estimate_psi", "")].value is not None
    run = store.run("graded_lgd", AS_OF)
    assert run is not None
    rule = [a for a in store.alerts(run.id) if a.rule == "backtest_underestimation_grade"]
    assert {a.variable for a in rule} == {"low", "mid", "high", "d", "missing"}
    assert all(a.message.startswith("grade ") for a in rule if a.value is not None)
    store.engine.dispose()


def test_more_than_twenty_grades_are_back_tested_per_ecb_segment_and_it_says_so(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'recoveries.db'}"
    many = {f"g{i:02d}": 0.03 + i * 0.035 for i in range(25)}
    store, figures = _run(url, _book(6, many, n=1200), tmp_path)
    rows = {f.variable for f in figures if f.name == "backtest_n" and f.variable}
    assert rows <= set(ECB_SEGMENT_LABELS)
    whole = next(f for f in figures if f.name == "backtest_n" and not f.variable)
    assert whole.params["classes"] == "ECB segments of the estimate"
    assert "more than 20 or none in the initial sample" in whole.params["note"]
    config = RiskmonConfig(store=StoreConfig(url="sqlite://", reports_dir=tmp_path / "reports"))
    config = config.model_copy(update={"models": [_model(url)]})
    page = parse(render_run_report(config, store, "graded_lgd", AS_OF).read_text("utf-8"))
    note = page.get("section", id="backtest").get("p", data_note="grades")
    assert "columns.grade 'lgd_grade'" in note.text()
    store.engine.dispose()


def test_a_grade_column_on_a_pd_model_is_refused_naming_the_key() -> None:
    model = {
        "name": "pd_model",
        "source": {"url": "sqlite:///x.db", "table": "t"},
        "columns": {"id": "i", "score_date": "d", "score": "s", "label": "y", "grade": "g"},
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
    }
    with pytest.raises(ConfigError, match=r"columns\.grade: only for a model of kind 'lgd'"):
        parse_config({"models": [model]}, source="test", env={})


def test_history_prints_a_grades_figures_and_names_the_grades_it_knows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'recoveries.db'}"
    store, figures = _run(url, _book(5, GRADES), tmp_path)
    store.engine.dispose()
    model = _model(url).model_dump(mode="json", by_alias=True, exclude_unset=True)
    config = tmp_path / "riskmon.yaml"
    config.write_text(
        yaml.safe_dump({"store": {"url": f"sqlite:///{tmp_path / 'store.db'}"}, "models": [model]})
    )
    args = ["-c", str(config), "history", "graded_lgd", "--figure", "backtest_p"]
    shown = CliRunner().invoke(cli, [*args, "--variable", "high", "--format", "json"])
    assert shown.exit_code == 0, shown.output
    (row,) = json.loads(shown.output)
    want = next(f.value for f in figures if (f.name, f.variable) == ("backtest_p", "high"))
    assert row["performance.backtest_p[high]"] == want
    unknown = CliRunner().invoke(cli, [*args, "--variable", "z"])
    assert unknown.exit_code == 2
    assert "unknown variable 'z' (known: d, high, low, mid, missing)" in unknown.output
