"""The back-test's rules and sampling noise: the gAUC against a frozen initial gAUC is judged on
the two samples' difference (the ECB's p, which takes the initial gAUC as known, stays the
figure), and a loss shortfall or an estimate PSI within noise is capped at
``thresholds.within_noise``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from riskmon.metrics import generalised_auc, generalised_auc_test
from riskmon.records import PERFORMANCE, Status
from riskmon.run import run_model
from riskmon.store import MetricStore, upgrade
from riskmon.store.engine import store_engine

from ..collect.loans import load
from .test_backtest import AS_OF, CLASS_VALUES, CLOSED, GAUC_TABLE, INITIAL, lgd_model

#: the current sample ranks a little worse than the initial one (GAUC_TABLE)
WORSE_TABLE = [[24, 15, 8, 3], [12, 22, 15, 6], [5, 10, 18, 14]]


@pytest.fixture
def sqlite_store(tmp_path: Path) -> MetricStore:
    engine = store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    return MetricStore(engine)


def _rows(table: list[list[int]], closed_on: Any, book: str) -> pd.DataFrame:
    estimated, realised = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            estimated += [CLASS_VALUES[i]] * count
            realised += [CLASS_VALUES[j]] * count
    return pd.DataFrame(
        {
            "book": book,
            "lgd_estimate": estimated,
            "lgd_realised": realised,
            "ead": 1.0,
            "closed_on": closed_on,
        }
    )


def _run(tmp_path: Path, store: MetricStore, frame: pd.DataFrame, **overrides: Any) -> int:
    frame = frame.reset_index(drop=True)
    frame["facility_id"] = np.arange(len(frame))
    frame["lgd_estimate"] = frame["lgd_estimate"].astype("Float64")
    frame["lgd_realised"] = frame["lgd_realised"].astype("Float64")
    url = f"sqlite:///{tmp_path / 'recoveries.db'}"
    load(url, frame, table="recoveries")
    model = lgd_model(url, **overrides)
    outcome = run_model(model, AS_OF, store=store, notify=False)
    assert outcome.ok, outcome.error
    run = store.run(model.name, AS_OF)
    assert run is not None
    return run.id


@pytest.mark.parametrize("configured", [False, True])
def test_the_gauc_rule_adds_the_initial_samples_error_when_it_was_frozen(
    sqlite_store: MetricStore, tmp_path: Path, configured: bool
) -> None:
    frame = pd.concat([_rows(GAUC_TABLE, INITIAL, "g"), _rows(WORSE_TABLE, CLOSED, "g")])
    initial = generalised_auc(np.array(GAUC_TABLE, dtype=float))
    backtest: dict[str, Any] = {"min_closed": 4}
    if configured:
        backtest["initial_gauc"] = initial.gauc
    run_id = _run(tmp_path, sqlite_store, frame, backtest=backtest)

    current = generalised_auc(np.array(WORSE_TABLE, dtype=float))
    ecb = generalised_auc_test(np.array(WORSE_TABLE, dtype=float), initial.gauc).pvalue
    both = float(norm.sf((initial.gauc - current.gauc) / math.hypot(current.se, initial.se)))
    assert ecb < 0.05 <= both  # the ECB's test alone would flag it: this case tells them apart
    (figure,) = [
        f
        for f in sqlite_store.figures(run_id)
        if f.name == "gauc_test_p" and f.population == PERFORMANCE and f.segment == ""
    ]
    assert figure.value == pytest.approx(ecb, rel=1e-9)
    (alert,) = [
        a for a in sqlite_store.alerts(run_id) if a.rule == "gauc_deterioration" and not a.segment
    ]
    if configured:  # a configured initial gAUC has no standard error: the ECB's test
        assert "p_two_samples" not in figure.params
        assert alert.value == pytest.approx(ecb, rel=1e-9)
        assert alert.status == Status.AMBER
    else:
        assert figure.params["p_two_samples"] == pytest.approx(both, rel=1e-9)
        assert figure.params["initial_se"] == pytest.approx(initial.se, rel=1e-9)
        assert alert.value == pytest.approx(both, rel=1e-9)
        assert alert.status == Status.GREEN
        assert "with the initial sample's own error (judged)" in alert.message


@pytest.mark.parametrize(("within_noise", "expected"), [("amber", "AMBER"), ("green", "GREEN")])
def test_a_loss_shortfall_the_t_test_does_not_confirm_is_within_noise(
    sqlite_store: MetricStore, tmp_path: Path, within_noise: str, expected: str
) -> None:
    # one large facility under-estimated, nine small ones over-estimated: the EAD-weighted loss
    # shortfall is 49 % (RED by its band), the mean difference negative (no under-estimation)
    frame = pd.DataFrame(
        {
            "book": "s",
            "lgd_estimate": [0.2] + [0.5] * 9,
            "lgd_realised": [0.4] + [0.4] * 9,
            "ead": [1000.0] + [1.0] * 9,
            "closed_on": CLOSED,
        }
    )
    initial = frame.assign(closed_on=INITIAL)
    run_id = _run(
        tmp_path,
        sqlite_store,
        pd.concat([initial, frame]),
        thresholds={"within_noise": within_noise},
    )
    (shortfall,) = [
        f
        for f in sqlite_store.figures(run_id)
        if (f.name, f.variable, f.segment, f.population) == ("loss_shortfall", "", "", PERFORMANCE)
    ]
    assert shortfall.value == pytest.approx(1 - 204.5 / 403.6, rel=1e-9)
    (alert,) = [
        a for a in sqlite_store.alerts(run_id) if a.rule == "loss_shortfall" and not a.segment
    ]
    assert alert.status == expected
    assert "within sampling noise: the t-test finds no under-estimation" in alert.message


@pytest.mark.parametrize("kind", ["ccf", "lgd"])
def test_a_ccf_model_stores_its_exposure_weighted_mean_and_floored_share(
    sqlite_store: MetricStore, tmp_path: Path, kind: str
) -> None:
    frame = pd.DataFrame(
        {
            "book": "c",
            "lgd_estimate": [0.3, 0.5, 0.6, 0.2, 0.45],
            "lgd_realised": [0.4, 0.2, 1.05, -0.1, None],
            "ead": [100.0, 300.0, 50.0, 50.0, 999.0],
            "closed_on": CLOSED,
        }
    )
    run_id = _run(
        tmp_path, sqlite_store, pd.concat([frame.assign(closed_on=INITIAL), frame]), kind=kind
    )
    found = {
        (f.variable, f.segment): f.value
        for f in sqlite_store.figures(run_id)
        if f.name == "exposure_weighted_mean"
    }
    floored = {f.segment: f for f in sqlite_store.figures(run_id) if f.name == "floored_share"}
    if kind == "lgd":  # an LGD model's loss shortfall and MAD say it already; no floor
        assert found == {}
        assert floored == {}
        return
    # one of the four closed facilities realised a CCF below 0 (the open one is not counted)
    assert floored[""].value == pytest.approx(0.25, rel=1e-12)
    assert floored[""].params == {"below_zero": 1, "closed": 4}
    closed = frame.dropna()
    want = float((closed["ead"] * closed["lgd_realised"]).sum() / closed["ead"].sum())
    assert found[("", "")] == pytest.approx(want, rel=1e-12)
    assert found[("", "book=c")] == pytest.approx(want, rel=1e-12)
    assert found[("20-30%", "")] == pytest.approx(-0.1, rel=1e-12)  # the one estimate of 20 %
