"""Fixtures of the report tests: a metric store holding real runs of a small model."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from riskmon.config import RiskmonConfig, StoreConfig
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..collect.loans import load, loan_frame, model_config

AS_OF = (dt.date(2025, 2, 28), dt.date(2025, 3, 31))


@pytest.fixture
def reports_dir(tmp_path: Path) -> Path:
    return tmp_path / "reports"


@pytest.fixture
def real_config(tmp_path: Path, sqlite_url: str, reports_dir: Path) -> RiskmonConfig:
    """A configuration of one model on 8000 synthetic loans, reports in ``reports_dir``; its
    challenger ``pd_alt`` is the score blurred (NULL on a few loans)."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=21, n=8000)
    rng = np.random.default_rng(21)
    alt = np.clip(frame["pd_score"].to_numpy() + rng.normal(0, 0.05, len(frame)), 0, 1)
    alt[rng.random(len(frame)) < 0.03] = np.nan
    frame["pd_alt"] = np.round(alt, 3)
    load(url, frame)
    model = model_config(url, performance_window="2 months", challengers=["pd_alt"])
    return RiskmonConfig(store=StoreConfig(url=sqlite_url, reports_dir=reports_dir), models=[model])


@pytest.fixture
def real_runs(real_config: RiskmonConfig, store: MetricStore) -> MetricStore:
    """The store after two real runs, as of 2025-02-28 and 2025-03-31."""
    model = real_config.models[0]
    for as_of in AS_OF:
        outcome = run_model(model, as_of, store=store)
        assert outcome.ok, outcome.error
    return store
