"""Weighted runs say what their tests count: the figures whose p-values, critical values and
intervals count loans (KS, AUC, Gini, the AUC test, PSI, CSI) are marked approximate, with the
baseline's; the report shows loan counts and summed weights in separate, labelled columns.
On every loan source (SQLite, PostgreSQL, DuckDB, MariaDB)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskmon.config import ModelConfig
from riskmon.figures import CATALOG
from riskmon.figures._chunks import ROWS_NOT_WEIGHTS
from riskmon.plan import plan_run
from riskmon.report import render_run_report
from riskmon.run import run_model

from ..report.htmltree import Element, parse
from .books import book_model, fresh_store, report_config, write_loans

AS_OF = dt.date(2025, 6, 30)
LOANS_PER_MONTH = 500
#: the figures whose tests count loans, not weights
ROW_TESTS = {"ks", "auc", "gini", "auc_test_p", "psi", "csi"}


def _book(seed: int) -> pd.DataFrame:
    """Two years of loans with known PDs, an exposure (5 % of it 0) and a region."""
    rng = np.random.default_rng(seed)
    frames = []
    for start in pd.date_range("2023-07-01", "2025-06-01", freq="MS"):
        days = rng.integers(0, start.days_in_month, LOANS_PER_MONTH)
        pd_true = np.clip(rng.beta(1.3, 12.0, LOANS_PER_MONTH), 1e-4, 0.95)
        exposure = np.round(rng.gamma(2.0, 5000.0, LOANS_PER_MONTH), 2)
        exposure[rng.random(LOANS_PER_MONTH) < 0.05] = 0.0
        frames.append(
            pd.DataFrame(
                {
                    "score_date": [(start + pd.Timedelta(days=int(d))).date() for d in days],
                    "pd_score": np.round(pd_true, 5),
                    "default_12m": (rng.random(LOANS_PER_MONTH) < pd_true).astype(int),
                    "exposure": exposure,
                    "region": rng.choice(["north", "south", "east"], LOANS_PER_MONTH),
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    return book


def _model(url: str, weight: str | None) -> ModelConfig:
    columns = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": "pd_score",
        "label": "default_12m",
        **({"weight": weight} if weight else {}),
    }
    characteristics = [{"name": "region", "kind": "categorical"}]
    return book_model(url, columns=columns, characteristics=characteristics)


def _table(page: Element, class_: str) -> tuple[list[str], list[list[str]]]:
    """The last header row and the body rows of the first table of ``class_``."""
    table = page.get("table", class_=class_)
    head = list(table.get("thead").iter("tr"))[-1]
    names = [th.text() for th in head.iter("th")]
    body = table.get("tbody")
    rows = [[td.text() for td in tr.iter("td")] for tr in body.iter("tr")]
    return names, rows


def _number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("weighted", [True, False])
def test_weighted_tests_are_marked_and_the_tables_show_both_sums(
    database: tuple[str, str], tmp_path: Path, weighted: bool
) -> None:
    _, url = database
    book = _book(seed=5)
    write_loans(url, book)
    model = _model(url, "exposure" if weighted else None)
    store = fresh_store(tmp_path)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error

    # the catalog declares exactly the figures whose tests count loans
    # (and the low-side overrides' Fisher test, of models with overrides, which this one is not)
    assert CATALOG.row_tests == ROW_TESTS | {"override_bad_rate"}
    marked = {f.name for f in outcome.figures if "approximate" in f.params}
    baseline = store.latest_baseline("m")
    assert baseline is not None
    base_marked = {f.name for f in baseline.figures if "approximate" in f.params}
    if not weighted:
        assert marked == set()
        assert base_marked == set()
    else:
        assert marked == ROW_TESTS
        assert base_marked == {"ks", "auc", "gini"}
        for f in outcome.figures:
            if f.name in ROW_TESTS:
                assert f.params["approximate"] == ROWS_NOT_WEIGHTS
        (test,) = [a for a in outcome.alerts if a.rule == "auc_test" and not a.segment]
        assert "approximate: weighted, tested on loan counts" in test.message

    # KS: weighted statistic, p-value on loan counts (the zero weights left out)
    plan = plan_run(model, AS_OF)
    cohort = book[book["score_date"].map(plan.performance.__contains__)]
    current = book[book["score_date"].map(plan.current.__contains__)]
    if weighted:
        cohort = cohort[cohort["exposure"] > 0]
        current = current[current["exposure"] > 0]
    w = cohort["exposure"].to_numpy() if weighted else np.ones(len(cohort))
    y = cohort["default_12m"].to_numpy()
    s = cohort["pd_score"].to_numpy()
    grid = np.unique(s)
    cdf_bad = np.array([w[(y == 1) & (s <= t)].sum() for t in grid]) / w[y == 1].sum()
    cdf_good = np.array([w[(y == 0) & (s <= t)].sum() for t in grid]) / w[y == 0].sum()
    ks = next(f for f in outcome.figures if f.name == "ks" and not f.segment)
    assert ks.value == pytest.approx(np.abs(cdf_bad - cdf_good).max(), abs=1e-12)
    assert ks.params["n_bads"] == int(y.sum())
    assert ks.params["n_goods"] == int((y == 0).sum())

    # the report: loan counts beside summed weights
    config = report_config(store, model, tmp_path)
    page = parse(render_run_report(config, store, "m", as_of=AS_OF).read_text(encoding="utf-8"))
    names, rows = _table(page, "gains")
    assert ("Weight" in names) is weighted
    loans = sum(_number(r[names.index("Loans")]) for r in rows)
    assert loans == len(cohort)
    if weighted:
        weights = [_number(r[names.index("Weight")]) for r in rows]
        assert sum(weights) == pytest.approx(w.sum(), abs=0.5 * len(rows))
        bads = [_number(r[names.index("Bads (weighted)")]) for r in rows]
        assert sum(bads) == pytest.approx(w[y == 1].sum(), abs=0.5 * len(rows))
    names, rows = _table(page, "bins")  # the score's PSI table, whose footer is its total
    footer = [td.text() for td in page.get("table", class_="bins").get("tfoot").iter("td")]
    assert _number(footer[names.index("Loans")]) == len(current)
    if weighted:
        total = current["exposure"].sum()
        assert _number(footer[names.index("Weight")]) == pytest.approx(total, abs=0.5)
        assert sum(_number(r[names.index("Weight")]) for r in rows) == pytest.approx(
            total, abs=0.5 * len(rows)
        )
    woe = page.get("table", class_="bins woe")
    woe_names = [th.text() for th in list(woe.get("thead").iter("tr"))[-1].iter("th")]
    assert ("Bads (weighted)" in woe_names) is weighted
    note = page.find("p", class_="muted weighted-columns")
    approximate_row = page.find("tr", class_="approximate")
    if weighted:
        assert note is not None
        assert "exposure" in note.text()
        assert approximate_row is not None
        assert "Kish" in approximate_row.text()
    else:
        assert note is None
        assert approximate_row is None
