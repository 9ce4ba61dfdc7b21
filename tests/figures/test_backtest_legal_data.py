"""Legal data never fails a back-test: every recovery still open, one realised value for all,
one estimate for all, a segment with no facility in the initial sample, a grade the initial
sample never had. Each run succeeds, says "not available" with a reason where a figure cannot be
computed (never a silent 0, inf or NaN), its rules judge or are NOT_EVALUABLE, and the report
renders every section."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskmon.config import RiskmonConfig, StoreConfig, parse_config
from riskmon.records import PERFORMANCE, Status
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore, upgrade
from riskmon.store.engine import store_engine

from ..collect.loans import load
from ..report.htmltree import parse

AS_OF = dt.date(2025, 6, 30)
CLOSED, INITIAL = dt.date(2025, 3, 15), dt.date(2024, 3, 15)


def _book(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "facility_id": np.arange(2 * n),
            "closed_on": [INITIAL] * n + [CLOSED] * n,
            "book": ["retail", "sme"] * n,
            "grade": rng.choice(["A", "B", "C"], 2 * n).astype(object),
            "lgd_estimate": np.round(rng.uniform(0.05, 0.9, 2 * n), 4),
            "lgd_realised": np.round(rng.uniform(-0.05, 1.05, 2 * n), 4),
            "ead": np.round(rng.lognormal(8, 0.5, 2 * n), 2),
        }
    )
    return frame


def _all_open(frame: pd.DataFrame) -> pd.DataFrame:
    frame.loc[frame["closed_on"] == CLOSED, "lgd_realised"] = None
    return frame


def _one_realised_value(frame: pd.DataFrame) -> pd.DataFrame:
    frame["lgd_realised"] = 0.45
    frame["lgd_estimate"] = 0.45
    return frame


def _one_estimate(frame: pd.DataFrame) -> pd.DataFrame:
    frame["lgd_estimate"] = 0.3
    return frame


def _segment_new_in_the_period(frame: pd.DataFrame) -> pd.DataFrame:
    frame.loc[(frame["closed_on"] == INITIAL) & (frame["book"] == "sme"), "book"] = "retail"
    return frame


def _grade_never_seen(frame: pd.DataFrame) -> pd.DataFrame:
    frame.loc[frame["closed_on"] == CLOSED, "grade"] = "Z"
    return frame


CASES: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "all_open": _all_open,
    "one_realised_value": _one_realised_value,
    "one_estimate": _one_estimate,
    "segment_new_in_the_period": _segment_new_in_the_period,
    "grade_never_seen": _grade_never_seen,
}


@pytest.mark.parametrize("kind", ["lgd", "ccf"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_legal_book_never_fails_a_back_test(tmp_path: Path, case: str, kind: str) -> None:
    frame = CASES[case](_book())
    frame["lgd_estimate"] = frame["lgd_estimate"].astype("Float64")
    frame["lgd_realised"] = frame["lgd_realised"].astype("Float64")
    url = f"sqlite:///{tmp_path / 'recoveries.db'}"
    load(url, frame, table="recoveries")
    model = parse_config(
        {
            "models": [
                {
                    "name": "edge_lgd",
                    "kind": kind,
                    "source": {"url": url, "table": "recoveries"},
                    "columns": {
                        "id": "facility_id",
                        "score_date": "closed_on",
                        "score": "lgd_estimate",
                        "realised": "lgd_realised",
                        "exposure": "ead",
                        "grade": "grade",
                        "segments": ["book"],
                    },
                    "score_direction": "higher_is_riskier",
                    "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
                    "backtest": {"min_closed": 5},
                }
            ]
        },
        source="test",
        env={},
    ).models[0]
    engine = store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade(engine)
    store = MetricStore(engine)
    outcome = run_model(model, AS_OF, store=store, notify=False)
    assert outcome.ok, outcome.error
    run = store.run(model.name, AS_OF)
    assert run is not None
    for figure in store.figures(run.id):
        if figure.population != PERFORMANCE:
            continue
        if figure.value is None:
            assert figure.reason, figure  # not available, and why
        else:
            assert math.isfinite(figure.value), figure
    alerts = store.alerts(run.id)
    assert alerts
    for alert in alerts:
        if alert.status == Status.NOT_EVALUABLE:
            assert alert.message, alert
    config = RiskmonConfig(store=StoreConfig(url="sqlite://", reports_dir=tmp_path / "reports"))
    config = config.model_copy(update={"models": [model]})
    page = parse(render_run_report(config, store, model.name, AS_OF).read_text("utf-8"))
    ids = [s.attrs["id"] for s in page.iter("section")]
    assert ids == [
        "run-header",
        "findings",
        "summary",
        "backtest",
        "run-details",
        "evidence",
        "appendix",
    ]
    store.engine.dispose()
