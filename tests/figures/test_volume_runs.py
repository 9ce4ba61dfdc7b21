"""Messy feeds in nightly runs (SQLite and PostgreSQL stores): a feed that stops is RED, month
after month, the volume compared with the last run that had loans, never with an empty run; a
reversed score_direction is RED and says so."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskmon.records import Status
from riskmon.run import run_model
from riskmon.store import MetricStore

from .books import book_model, write_loans

#: the months the feed delivered loans in; February and March 2025 it delivered none
MONTHS = ["2023-07", "2023-08", "2023-09", "2023-10", "2023-11", "2023-12", "2025-01", "2025-04"]
LOANS_PER_MONTH = 800


def _book(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for month in MONTHS:
        start = pd.Timestamp(f"{month}-01")
        days = rng.integers(0, start.days_in_month, LOANS_PER_MONTH)
        pd_true = np.clip(rng.beta(1.3, 14.0, LOANS_PER_MONTH), 1e-4, 0.95)
        frames.append(
            pd.DataFrame(
                {
                    "score_date": [(start + pd.Timedelta(days=int(d))).date() for d in days],
                    "pd_score": np.round(pd_true, 5),
                    "default_12m": (rng.random(LOANS_PER_MONTH) < pd_true).astype(int),
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    return book


def test_an_empty_month_is_red_and_so_is_the_next_one(store: MetricStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=9))
    columns = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": "pd_score",
        "label": "default_12m",
    }
    model = book_model(url, columns=columns)
    volume = {}
    for as_of in (dt.date(2025, 1, 31), dt.date(2025, 2, 28), dt.date(2025, 3, 31)):
        outcome = run_model(model, as_of, store=store)
        assert outcome.ok, outcome.error
        (alert,) = [a for a in outcome.alerts if a.rule == "volume_change"]
        volume[as_of] = (alert, outcome)
    first, _ = volume[dt.date(2025, 1, 31)]
    assert first.status == Status.NOT_EVALUABLE  # no earlier run to compare with
    for as_of in (dt.date(2025, 2, 28), dt.date(2025, 3, 31)):
        alert, outcome = volume[as_of]
        assert outcome.counts is not None
        assert outcome.counts.n_current == 0
        assert alert.status == Status.RED, alert.message
        assert alert.value == -1.0
        assert f"{LOANS_PER_MONTH} in the last run with loans" in alert.message
        assert alert.thresholds["previous"] == LOANS_PER_MONTH
        assert outcome.alert_status == Status.RED
    # the month the feed comes back is compared with January, not with the empty March
    outcome = run_model(model, dt.date(2025, 4, 30), store=store)
    assert outcome.ok, outcome.error
    (alert,) = [a for a in outcome.alerts if a.rule == "volume_change"]
    assert alert.thresholds["previous"] == LOANS_PER_MONTH
    assert alert.status == Status.GREEN


def test_an_empty_first_run_is_red_too(store: MetricStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=9))
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    model = book_model(url, columns={**columns, "label": "default_12m"})
    outcome = run_model(model, dt.date(2025, 2, 28), store=store)
    assert outcome.ok, outcome.error
    (alert,) = [a for a in outcome.alerts if a.rule == "volume_change"]
    assert alert.status == Status.RED
    assert alert.value is None
    assert "no earlier run had any" in alert.message


def test_a_reversed_score_direction_is_red_and_says_so(store: MetricStore, tmp_path: Path) -> None:
    """A PD declared higher_is_safer ranks bads as safer than goods: its AUC's interval lies
    below 0.5, and the run says to check score_direction; declared right, the rule is GREEN."""
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=4))
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    columns |= {"label": "default_12m"}
    statuses = {}
    for direction in ("higher_is_safer", "higher_is_riskier"):
        model = book_model(url, name=direction, columns=columns, score_direction=direction)
        # the cohort: December 2023's loans, a year on
        outcome = run_model(model, dt.date(2024, 12, 31), store=store)
        assert outcome.ok, outcome.error
        (alert,) = [a for a in outcome.alerts if a.rule == "score_direction"]
        auc = next(f for f in outcome.figures if f.name == "auc" and not f.segment)
        statuses[direction] = (alert, auc)
    wrong, wrong_auc = statuses["higher_is_safer"]
    assert wrong_auc.params["ci_high"] < 0.5
    assert wrong.status == Status.RED
    assert wrong.value == wrong_auc.value
    assert "check score_direction" in wrong.message
    right, right_auc = statuses["higher_is_riskier"]
    assert right.status == Status.GREEN
    assert right_auc.value == pytest.approx(1 - wrong_auc.value, abs=1e-12)
