"""Guards against mistakes a careful validator would catch: names that collide with riskmon's
own, a configuration that drifted from its baseline, secrets in fingerprints and output,
grids too coarse to judge, a category literally called "missing"."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from riskmon.baseline import freeze
from riskmon.cli import cli
from riskmon.collect import Source
from riskmon.config import model_fingerprint, parse_config
from riskmon.errors import ConfigError, SourceError
from riskmon.run import run_model
from riskmon.store import MetricStore

from .collect.loans import load, loan_frame, model_config

AS_OF = dt.date(2025, 3, 31)


def _loans(tmp_path: Path, frame: pd.DataFrame | None = None) -> str:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=4, n=8000) if frame is None else frame)
    return url


def test_a_characteristic_may_not_take_a_name_riskmon_uses() -> None:
    model = model_config("sqlite://").model_dump(mode="json", by_alias=True)
    model["characteristics"] = [{"name": "score", "kind": "numeric", "column": "income"}]
    with pytest.raises(
        ConfigError, match=r"models\[0\]\.characteristics: expected characteristic names other than"
    ):
        parse_config({"models": [model]}, source="x", env={})


def test_a_run_refuses_a_baseline_the_configuration_no_longer_matches(
    tmp_path: Path, store: MetricStore
) -> None:
    url = _loans(tmp_path)
    model = model_config(url, performance_window="2 months")
    assert run_model(model, AS_OF, store=store).ok
    changed = model_config(url, performance_window="2 months", score_direction="higher_is_safer")
    outcome = run_model(changed, AS_OF, store=store, force=True)
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert (
        "no longer matches its baseline version 1: score_direction is higher_is_safer"
        in outcome.error
    )
    assert "riskmon baseline freeze retail_pd" in outcome.error


def test_the_fingerprint_ignores_passwords_and_channels() -> None:
    a = model_config("postgresql://risk:old@db/loans")
    b = model_config("postgresql://risk:new@db/loans", notify=[{"email": "x@example.com"}])
    c = model_config("postgresql://risk:new@db/loans", bins={"score": 5})
    assert model_fingerprint(a) == model_fingerprint(b)
    assert model_fingerprint(a) != model_fingerprint(c)


def test_config_check_never_prints_a_webhook_url(tmp_path: Path) -> None:
    secret = "https://hooks.example.com/services/T000/B000/SECRETTOKEN"
    model = model_config("sqlite:///loans.db", notify=[{"webhook": secret}]).model_dump(
        mode="json", by_alias=True
    )
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump({"models": [model]}))
    result = CliRunner().invoke(cli, ["-c", str(path), "config", "check"])
    assert result.exit_code == 0, result.output
    assert "SECRETTOKEN" not in result.output
    assert "notify: webhook:" in result.output
    model["notify"] = [{"webhook": "ftp://hooks.example.com/SECRETTOKEN"}]
    path.write_text(yaml.safe_dump({"models": [model]}))
    result = CliRunner().invoke(cli, ["-c", str(path), "config", "check"])
    assert result.exit_code == 2
    assert "SECRETTOKEN" not in result.output


def test_a_category_called_missing_is_not_a_missing_value(
    tmp_path: Path, store: MetricStore
) -> None:
    frame = loan_frame(seed=9, n=8000)
    frame["region"] = np.where(frame["region"].isna(), "missing", frame["region"])  # no NULLs
    url = _loans(tmp_path, frame)
    model = model_config(url, performance_window="2 months")
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    (alert,) = [
        a for a in outcome.alerts if a.rule == "missing_rate_change" and a.variable == "region"
    ]
    assert alert.status == "GREEN"
    assert alert.thresholds["baseline"] == 0.0
    assert alert.thresholds["current"] == 0.0


def test_null_scores_are_left_out_and_counted_or_refused_with_a_grid_too(
    tmp_path: Path, store: MetricStore
) -> None:
    frame = loan_frame(seed=5, n=8000)
    frame["pd_score"] = np.random.default_rng(5).random(len(frame))  # continuous: a grid
    url = _loans(tmp_path, frame)
    grid = {"max_distinct_scores": 100, "score_grid": 100}
    strict = model_config(url, performance_window="2 months", bins=grid, on_invalid="fail")
    assert run_model(strict, AS_OF, store=store).ok
    late = frame["score_date"] >= dt.date(2025, 3, 10)
    frame.loc[late, "pd_score"] = np.nan
    load(url, frame)
    outcome = run_model(strict, AS_OF, store=store, force=True)
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "column 'pd_score' (columns.score): expected a score on every loan" in outcome.error
    # by default the loans without a score are left out of every figure and counted
    model = model_config(url, performance_window="2 months", bins=grid)
    outcome = run_model(model, AS_OF, store=store, force=True)
    assert outcome.ok, outcome.error
    current = frame[frame["score_date"].map(lambda d: dt.date(2025, 3, 1) <= d <= AS_OF)]
    n_null = int(current["pd_score"].isna().sum())
    (excluded,) = [
        f for f in outcome.figures if f.name == "excluded_share" and f.population == "current"
    ]
    assert excluded.params["null_score"] == n_null
    assert excluded.params["read"] == len(current)
    assert excluded.params["used"] == len(current) - n_null
    assert excluded.value == pytest.approx(n_null / len(current))
    assert outcome.counts is not None
    assert outcome.counts.n_current == len(current) - n_null
    (alert,) = [a for a in outcome.alerts if a.rule == "exclusions"]
    assert alert.status == "RED"  # about 70 % of the month
    assert f"current population: {n_null} of {len(current)} loans left out" in alert.message


def test_a_grid_too_coarse_for_the_cohort_is_not_judged(tmp_path: Path, store: MetricStore) -> None:
    rng = np.random.default_rng(3)
    frame = loan_frame(seed=3, n=12000)
    bad = frame["bad"].fillna(0).to_numpy(float)
    frame["pd_score"] = rng.beta(2, 20, len(frame)) + 0.05 * bad
    late = frame["score_date"] >= dt.date(2025, 1, 1)
    frame.loc[late, "pd_score"] = frame.loc[late, "pd_score"] * 4  # recalibrated: off the grid
    url = _loans(tmp_path, frame)
    model = model_config(
        url, performance_window="2 months", bins={"max_distinct_scores": 100, "score_grid": 100}
    )
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    judged = {
        a.rule: a
        for a in outcome.alerts
        if a.segment == "" and a.rule in ("auc_drop", "gini_drop", "ks_band")
    }
    auc = next(f for f in outcome.figures if f.name == "auc" and f.segment == "")
    bound = auc.params["auc_error_bound"]
    assert bound > 0.05  # most cohort scores sit in the grid's last cell
    for rule, alert in judged.items():
        if alert.status == "NOT_EVALUABLE":
            assert "score grid" in alert.message, rule
        else:  # judged only when no value within the bound would change the verdict
            assert "grid_error_bound" not in alert.thresholds, rule
    assert any(a.status == "NOT_EVALUABLE" and "score grid" in a.message for a in judged.values())


def test_a_text_value_in_a_numeric_characteristic_names_the_column(
    tmp_path: Path, store: MetricStore
) -> None:
    frame = loan_frame(seed=6, n=3000)
    frame["income"] = frame["income"].astype(object)
    frame.loc[frame.index[:5], "income"] = "n/a"
    url = _loans(tmp_path, frame)
    model = model_config(url)
    with (
        Source(model) as source,
        pytest.raises(SourceError, match=r"column 'income' \(characteristics\[0\]\)"),
    ):
        freeze(model, source, store)
