"""Characteristic analysis: a points scorecard scores a book, two characteristics drift, and
each characteristic's points shift equals pandas' (its mean points now less its mean points in
the baseline), their sum the observed shift of the mean score to 1e-9; on every loan source."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from riskmon.config import ModelConfig
from riskmon.plan import plan_run
from riskmon.records import Status
from riskmon.report import render_run_report
from riskmon.run import run_model

from ..report.htmltree import parse
from .books import book_model, days_of, fresh_store, report_config, write_loans

AS_OF = dt.date(2025, 6, 30)
LOANS_PER_MONTH = 250
BASE_POINTS = 500
INCOME_BINS = [
    {"upper": 20000, "points": -10},
    {"upper": 40000, "points": 12},
    {"upper": 70000, "points": 25},
    {"points": 40},
]
REGION_POINTS = {"north": 20, "south": 15, "east": 8, "other": 5}
AGE_BINS = [{"upper": 30, "points": 5}, {"upper": 50, "points": 15}, {"points": 22}]


def _points(book: pd.DataFrame) -> pd.DataFrame:
    """Each loan's points per characteristic, by pandas (``pd.cut``, a dictionary)."""
    income = pd.cut(book["income"], [-np.inf, 20000, 40000, 70000, np.inf], labels=False).map(
        dict(enumerate(b["points"] for b in INCOME_BINS))
    )
    income = income.astype(float).fillna(7.0)  # missing_points
    income[book["income"] == -999] = -20.0  # the special value's points
    region = book["region"].map(REGION_POINTS).fillna(REGION_POINTS["other"])
    region[book["region"] == "none"] = 0.0
    age = pd.cut(book["age"], [-np.inf, 30, 50, np.inf], labels=False).map(
        dict(enumerate(b["points"] for b in AGE_BINS))
    )
    return pd.DataFrame({"income": income, "region": region, "age": age.astype(float)})


def _book(seed: int) -> pd.DataFrame:
    """Two years of loans; from 2025 incomes fall and the south grows (age stays put)."""
    rng = np.random.default_rng(seed)
    frames = []
    for start in pd.date_range("2023-07-01", "2025-06-01", freq="MS"):
        n = LOANS_PER_MONTH
        drift = 1.0 if start >= pd.Timestamp("2025-01-01") else 0.0
        income = np.round(rng.lognormal(10.6 - 0.4 * drift, 0.5, n), -2)
        income[rng.random(n) < 0.05] = np.nan
        income[rng.random(n) < 0.04 + 0.06 * drift] = -999  # no bureau record
        p_region = [0.3, 0.2 + 0.2 * drift, 0.2, 0.2 - 0.1 * drift, 0.1 - 0.1 * drift]
        p_region = list(np.asarray(p_region) / sum(p_region))
        frames.append(
            pd.DataFrame(
                {
                    "score_date": days_of(rng, start, n),
                    "income": income,
                    "region": rng.choice(["north", "south", "east", "west", "none"], n, p=p_region),
                    "age": rng.integers(18, 80, n).astype(float),
                    "default_12m": (rng.random(n) < 0.08).astype(int),
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    book["score"] = BASE_POINTS + _points(book).sum(axis=1)
    return book


def _model(url: str, **extra: Any) -> ModelConfig:
    columns = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": "score",
        "label": "default_12m",
    }
    characteristics = [
        {
            "name": "income",
            "kind": "numeric",
            "bins": INCOME_BINS,
            "missing_points": 7,
            "special": [{"value": -999, "points": -20}],
        },
        {
            "name": "region",
            "kind": "categorical",
            "attributes": REGION_POINTS,
            "special": [{"value": "none", "points": 0}],
        },
        {"name": "age", "kind": "numeric", "bins": AGE_BINS},
    ]
    return book_model(
        url,
        columns=columns,
        characteristics=characteristics,
        score_direction="higher_is_safer",
        **extra,
    )


def test_points_shifts_add_up_to_the_mean_score_shift(
    database: tuple[str, str], tmp_path: Path
) -> None:
    _, url = database
    book = _book(seed=11)
    write_loans(url, book)
    model = _model(url)
    store = fresh_store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error

    plan = plan_run(model, AS_OF)
    current = book[book["score_date"].map(plan.current.__contains__)]
    baseline = book[
        (book["score_date"] >= model.baseline.start) & (book["score_date"] <= model.baseline.end)
    ]
    points_now, points_then = _points(current), _points(baseline)
    shifts = {f.variable: f for f in outcome.figures if f.name == "points_shift"}
    assert set(shifts) == {"income", "region", "age"}
    for name, figure in shifts.items():
        assert figure.value is not None, figure.reason
        want = points_now[name].mean() - points_then[name].mean()
        assert figure.value == pytest.approx(want, abs=1e-9), name
        # the attribute table: (actual − expected) × points, summing to the index
        rows = figure.params["attributes"]
        assert sum(r["contribution"] or 0.0 for r in rows) == pytest.approx(figure.value, abs=1e-12)
    (total,) = [f for f in outcome.figures if f.name == "score_mean_shift"]
    observed = current["score"].mean() - baseline["score"].mean()
    assert total.value == pytest.approx(observed, abs=1e-9)
    assert total.params["explained"] == pytest.approx(observed, abs=1e-9)
    assert abs(total.params["unexplained"]) < 1e-9
    # the two drifting characteristics moved the score; age did not (within noise)
    assert abs(shifts["income"].value) > 3
    assert abs(shifts["region"].value) > 0.5
    assert abs(shifts["age"].value) < 1.5
    # the special value is its own attribute and row
    income_rows = {r["label"]: r for r in shifts["income"].params["attributes"]}
    assert income_rows["special -999"]["actual"] == pytest.approx(
        (current["income"] == -999).mean(), abs=1e-12
    )
    # the special value's share moved from 4 % to 10 %: its own rule says so
    (special,) = [
        f for f in outcome.figures if f.name == "special_share_change" and f.variable == "income"
    ]
    base_share = (baseline["income"] == -999).mean()
    assert special.value == pytest.approx(
        (current["income"] == -999).mean() - base_share, abs=1e-12
    )
    (moved,) = [
        a for a in outcome.alerts if a.rule == "special_share_change" and a.variable == "income"
    ]
    assert moved.status in (Status.AMBER, Status.RED)
    alerts = {a.variable: a for a in outcome.alerts if a.rule == "points_shift"}
    assert alerts["income"].status in (Status.AMBER, Status.RED)

    page = parse(
        render_run_report(report_config(store, model, tmp_path), store, "m", as_of=AS_OF).read_text(
            encoding="utf-8"
        )
    )
    section = page.get("section", id="characteristic-analysis")
    names = [
        tr.get("th").text()
        for tr in section.get("table", class_="points-shift").get("tbody").iter("tr")
    ]
    by_size = sorted(shifts, key=lambda n: -abs(shifts[n].value or 0.0))
    assert names == by_size
