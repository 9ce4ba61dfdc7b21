"""Early warning in nightly runs: the stored expected figures equal the library on the loans,
the vintage curves equal pandas on the loans, a calibrated model stays free of RED over a
year of monthly runs, and a model whose loans default at 1.6 times its PDs from January 2025
is flagged by ``vintage_defaults`` by MOB 6 of the January vintage."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from riskmon.config import ModelConfig
from riskmon.metrics import expected_performance_from_sums
from riskmon.plan import plan_run
from riskmon.records import CURRENT, PERFORMANCE, Status
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..report.htmltree import parse
from .books import book_model, fresh_store, report_config, write_loans

LOANS_PER_MONTH = 2000
#: the true default rates are 1.6 times the PDs of ``pd_low`` loans from this month on
AFFECTED_FROM = dt.date(2025, 1, 1)
UNDERSTATED = 1.6
#: monthly runs at each month's end of 2025
AS_OF = [(pd.Timestamp(2025, m, 1) + pd.offsets.MonthEnd(0)).date() for m in range(1, 13)]
EDGES = [0.02, 0.05, 0.1, 0.2]


def _book(seed: int) -> pd.DataFrame:
    """Loans from July 2023 to December 2025 with known PDs ``pd`` (mean about 6 %).

    ``default_12m`` and ``default_date`` (a uniform day within 365 days of scoring) are drawn
    at the true rate: the PD itself (``calibrated`` loans), or from January 2025 1.6 times it
    (``understated``); the 30+ DPD date is 1 to 60 days before the default date."""
    rng = np.random.default_rng(seed)
    frames = []
    for start in pd.date_range("2023-07-01", "2025-12-01", freq="MS"):
        n = LOANS_PER_MONTH
        scored = np.datetime64(start.date(), "D") + rng.integers(0, start.days_in_month, n)
        pd_ = np.round(np.clip(rng.beta(1.2, 18.0, n), 1e-4, 0.6), 6)
        u, offset, lead = rng.random(n), rng.integers(0, 365, n), rng.integers(1, 61, n)
        frame = pd.DataFrame({"score_date": scored.astype(object), "pd": pd_})
        frame["channel"] = rng.choice(["web", "branch"], n)
        for name, rate in (("calibrated", 1.0), ("understated", UNDERSTATED)):
            true = pd_ * (rate if start.date() >= AFFECTED_FROM else 1.0)
            bad = u < true
            when = scored + offset
            frame[f"{name}_12m"] = bad.astype(int)
            frame[f"{name}_date"] = np.where(bad, when.astype(object), None)
            frame[f"{name}_dpd30"] = np.where(bad, (when - lead).astype(object), None)
        frames.append(frame)
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    return book


@pytest.fixture(scope="module")
def book_url(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pd.DataFrame]:
    url = f"sqlite:///{tmp_path_factory.mktemp('early') / 'book.db'}"
    book = _book(seed=28)
    write_loans(url, book)
    return url, book


def _model(url: str, name: str, **extra: Any) -> ModelConfig:
    columns = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": "pd",
        "label": f"{name}_12m",
        "segments": ["channel"],
        "default_date": f"{name}_date",
        "delinquency": {"dpd30": f"{name}_dpd30"},
    }
    return book_model(url, name=name, columns=columns, **extra)


def _graded(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Loans, Σp and Σp² per grade (PD in (e_{k-1}, e_k]), ranked by mean PD."""
    grade = np.searchsorted(EDGES, frame["pd"].to_numpy(), side="left")
    p = frame["pd"].to_numpy()
    n = np.bincount(grade, minlength=len(EDGES) + 1).astype(float)
    s1 = np.bincount(grade, weights=p, minlength=len(EDGES) + 1)
    s2 = np.bincount(grade, weights=p**2, minlength=len(EDGES) + 1)
    held = n > 0
    order = np.argsort(s1[held] / n[held], kind="stable")
    return n[held][order], s1[held][order], s2[held][order]


def test_stored_figures_equal_the_library_and_pandas_on_the_loans(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, book = book_url
    model = _model(url, "calibrated", calibration={"grades": EDGES})
    as_of = AS_OF[5]
    outcome = run_model(model, as_of, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    stored = {(f.name, f.population, f.variable, f.segment): f for f in outcome.figures}
    plan = plan_run(model, as_of)
    for population, window in ((CURRENT, plan.current), (PERFORMANCE, plan.performance)):
        for segment, loans in (("", book), ("channel=web", book[book["channel"] == "web"])):
            cohort = loans[loans["score_date"].map(window.__contains__)]
            if population == PERFORMANCE:
                cohort = cohort[cohort["calibrated_12m"].notna()]
            confidence = model.calibration.confidence
            expected = expected_performance_from_sums(*_graded(cohort), confidence=confidence)
            for name, value in (
                ("expected_default_rate", expected.default_rate),
                ("expected_defaults", expected.defaults),
                ("expected_defaults_sd", expected.defaults_sd),
                ("expected_auc", expected.auc),
                ("expected_ks", expected.ks),
                ("expected_gini", expected.gini),
            ):
                got = stored[(name, population, "", segment)].value
                assert got == pytest.approx(value, rel=1e-9), (name, population, segment)
            interval = stored[("expected_defaults", population, "", segment)].params
            assert interval["interval_method"] == expected.interval_method
            assert interval["interval_low"] == pytest.approx(expected.interval[0], rel=1e-9)
            assert interval["interval_high"] == pytest.approx(expected.interval[1], rel=1e-9)
    # a vintage's curve against pandas on its loans: defaults by MOB, known by the run's date
    vintage = book[book["score_date"].map(lambda d: d.strftime("%Y-%m") == "2025-02")]
    dates = pd.to_datetime(vintage["calibrated_date"])
    months = (dates.dt.year * 12 + dates.dt.month) - (2025 * 12 + 2)
    known = dates <= pd.Timestamp(as_of)
    curve = stored[("vintage_cdr", CURRENT, "2025-02", "")].params
    assert curve["mob"] == 4
    for m in range(5):
        assert curve["observed"][m] == pytest.approx(((months <= m) & known).sum() / len(vintage))


def _flags(url: str, name: str, tmp_path: Path, dates: list[dt.date]) -> list[dict[str, Status]]:
    """Per run, the worst status of each new rule (every segment and vintage)."""
    model = _model(url, name)
    store = fresh_store(tmp_path / name)
    if name == "understated":
        _STORES[name] = (store, model)
    out = []
    for as_of in dates:
        outcome = run_model(model, as_of, store=store)
        assert outcome.ok, outcome.error
        out.append(
            {
                rule: Status.worst(
                    [
                        a.status
                        for a in outcome.alerts
                        if a.rule == rule and a.status != "NOT_EVALUABLE"
                    ]
                    or [Status.GREEN]
                )
                for rule in ("vintage_defaults", "concept_drift")
            }
        )
    return out


_STORES: dict[str, tuple[MetricStore, ModelConfig]] = {}


def test_a_calibrated_model_stays_quiet_and_understated_pds_are_flagged_by_mob_6(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    (tmp_path / "calibrated").mkdir()
    (tmp_path / "understated").mkdir()
    calibrated = _flags(url, "calibrated", tmp_path, AS_OF)
    # true default rates equal to the PDs: about 30 tests a run (10 vintages × 3 segments),
    # RED only below p = 0.001 after Benjamini-Hochberg
    assert all(Status.RED not in run.values() for run in calibrated), calibrated
    mob_6 = dt.date(2025, 7, 31)  # the January vintage's sixth month on book
    understated = _flags(url, "understated", tmp_path, AS_OF[: AS_OF.index(mob_6) + 1])
    # true default rates 1.6 times the PDs from January 2025: by MOB 6 (the run of July 2025)
    # the January vintage expects about 2,000 × 6 % × σ(6) ≈ 60 defaults and has about 96,
    # z ≈ 4.8
    assert Status.RED in [run["vintage_defaults"] for run in understated], understated
    # the report's early-warning section names the flagged vintages and draws the curves
    store, model = _STORES["understated"]
    config = report_config(store, model, tmp_path)
    page = parse(render_run_report(config, store, model.name, mob_6).read_text())
    section = page.get("section", id="early-warning")
    january = section.get("tr", **{"data-vintage": "2025-01"})
    assert "RED" in january.text()  # the first affected vintage, at MOB 6
    assert "2024-12" not in {
        r.attrs.get("data-vintage") for r in section.iter("tr") if "RED" in r.text()
    }
    assert re.search(r"Flagged: [^.]*2025-01", section.text())
    assert len(list(section.iter("svg"))) == 3
    assert page.find("a", href="#early-warning") is not None
