"""Overrides: rates, exposure share and the low-side overrides' bad rate equal pandas on the
loans, with a final-decision column (against the cut-off) or an override column; a model
without either column computes no override figure and collects no override table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact

from riskmon.baseline import FrozenBins
from riskmon.baseline._request import variables
from riskmon.config import ModelConfig
from riskmon.metrics import Binning
from riskmon.plan import plan_run
from riskmon.records import OVERRIDE, PERFORMANCE, SCORE, Status
from riskmon.report import render_run_report
from riskmon.run import run_model

from ..report.htmltree import parse
from .books import book_model, days_of, fresh_store, report_config, write_loans

AS_OF = dt.date(2025, 6, 30)
CUTOFF = 560
LOANS_PER_MONTH = 300


def _book(seed: int) -> pd.DataFrame:
    """Points scores (higher is safer); underwriters accept a quarter of the loans the cut-off
    declines in the broker channel (a tenth elsewhere) and decline 3 % of those it accepts;
    low-side overrides default more."""
    rng = np.random.default_rng(seed)
    frames = []
    for start in pd.date_range("2023-07-01", "2025-06-01", freq="MS"):
        n = LOANS_PER_MONTH
        score = np.round(rng.normal(600, 40, n))
        channel = rng.choice(["web", "broker"], n, p=[0.7, 0.3])
        declined = score < CUTOFF
        low = declined & (rng.random(n) < np.where(channel == "broker", 0.25, 0.10))
        high = ~declined & (rng.random(n) < 0.03)
        accepted = (~declined & ~high) | low
        pd_true = np.where(low, 0.25, 1 / (1 + np.exp((score - 520) / 30)))
        frames.append(
            pd.DataFrame(
                {
                    "score_date": days_of(rng, start, n),
                    "score": score,
                    "channel": channel,
                    "decision": np.where(accepted, "accept", "decline"),
                    "override": np.where(low, "low_side", np.where(high, "high_side", "none")),
                    "exposure": np.round(rng.gamma(2.0, 4000.0, n), 2),
                    "default_12m": (rng.random(n) < pd_true).astype(int),
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    return book


def _model(url: str, **columns: Any) -> ModelConfig:
    return book_model(
        url,
        columns={
            "id": "loan_id",
            "score_date": "score_date",
            "score": "score",
            "label": "default_12m",
            "weight": "exposure",
            "segments": ["channel"],
            **columns,
        },
        score_direction="higher_is_safer",
        calibration={"cutoff": CUTOFF},
    )


def _expected(loans: pd.DataFrame) -> dict[str, float]:
    low = loans["override"] == "low_side"
    high = loans["override"] == "high_side"
    declined = loans["score"] < CUTOFF
    w = loans["exposure"]
    return {
        "override_rate": (low | high).mean(),
        "low_side_override_rate": low.sum() / declined.sum(),
        "high_side_override_rate": high.sum() / (~declined).sum(),
        "override_exposure_share": w[low | high].sum() / w.sum(),
    }


#: the two columns share the collect: the decision column covers every engine, the override
#: column one
ENGINES_AND_COLUMNS = [
    pytest.param("sqlite", "decision"),
    pytest.param("postgresql", "decision", marks=pytest.mark.postgres),
    pytest.param("duckdb", "decision"),
    pytest.param("mysql", "decision", marks=pytest.mark.mariadb),
    pytest.param("sqlite", "override"),
]


@pytest.mark.parametrize(("database", "column"), ENGINES_AND_COLUMNS, indirect=["database"])
def test_override_figures_equal_pandas(
    database: tuple[str, str], tmp_path: Path, column: str
) -> None:
    _, url = database
    book = _book(seed=3)
    write_loans(url, book)
    model = _model(url, **{column: column})
    store = fresh_store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    plan = plan_run(model, AS_OF)
    current = book[book["score_date"].map(plan.current.__contains__)]
    cohort = book[book["score_date"].map(plan.performance.__contains__)]
    figures = {(f.name, f.segment): f for f in outcome.figures}
    for segment, part in [
        ("", current),
        *((f"channel={c}", g) for c, g in current.groupby("channel")),
    ]:
        for name, want in _expected(part).items():
            assert figures[(name, segment)].value == pytest.approx(want, abs=1e-12), (name, segment)
    for segment, part in [
        ("", cohort),
        *((f"channel={c}", g) for c, g in cohort.groupby("channel")),
    ]:
        low = part[part["override"] == "low_side"]
        accepted = part[(part["score"] >= CUTOFF) & (part["override"] == "none")]
        figure = figures[("override_bad_rate", segment)]
        bad_rate = (low["exposure"] * low["default_12m"]).sum() / low["exposure"].sum()
        assert figure.population == PERFORMANCE
        assert figure.value == pytest.approx(bad_rate, abs=1e-12)
        base = (accepted["exposure"] * accepted["default_12m"]).sum() / accepted["exposure"].sum()
        assert figure.params["accepted_bad_rate"] == pytest.approx(base, abs=1e-12)
        table = [
            [low["default_12m"].sum(), (1 - low["default_12m"]).sum()],
            [accepted["default_12m"].sum(), (1 - accepted["default_12m"]).sum()],
        ]
        want_p = fisher_exact(table, alternative="greater").pvalue
        assert figure.params["p_value"] == pytest.approx(want_p, rel=1e-9)
    alerts = {(a.rule, a.segment): a for a in outcome.alerts}
    # the broker channel overrides more than 5 % of its loans; low-side loans default more
    assert alerts[("override_rate", "channel=broker")].status in (Status.AMBER, Status.RED)
    assert alerts[("override_bad_rate", "")].status is Status.RED
    page = parse(
        render_run_report(report_config(store, model, tmp_path), store, "m", as_of=AS_OF).read_text(
            encoding="utf-8"
        )
    )
    rows = page.get("section", id="overrides").get("table", class_="overrides").get("tbody")
    assert next(tr.get("th").text() for tr in rows.iter("tr")) == "all loans"


def test_a_model_without_an_override_column_reads_and_computes_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    book = _book(seed=4).drop(columns=["decision", "override"])
    write_loans(url, book)
    model = _model(url)
    bins = FrozenBins({SCORE: Binning("numeric", edges=(600.0,))}, None, 700.0, 100)
    assert OVERRIDE not in {v.name for v in variables(model, bins)}
    outcome = run_model(model, AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    assert not [f for f in outcome.figures if "override" in f.name]
    assert not [a for a in outcome.alerts if "override" in a.rule]
