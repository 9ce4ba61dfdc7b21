"""The report opens with its findings: alerts grouped by rule, both directions of the
calibration tests, the p-values that decided each status, and the formulas of what it shows.

The run RED only because its PDs are too high (1.6 times the true default probability) is
real: loans drawn from known PDs, run through ``run_model`` on SQLite, rendered, parsed, and,
when Chromium is installed, measured in a headless browser at a desktop's and a phone's size.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskmon.figures import CATALOG
from riskmon.records import PERFORMANCE, AlertRecord, Status
from riskmon.report import render_run_report
from riskmon.report._findings import findings, unjudged, verdict
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..figures.books import book_model, fresh_store, report_config, write_loans
from .htmltree import Element, parse

AS_OF = dt.date(2025, 6, 30)
LOANS_PER_MONTH = 3000
CHROMIUM = "/usr/bin/chromium"
BASELINE = {"start": dt.date(2023, 1, 1), "end": dt.date(2023, 6, 30)}


def _alert(
    rule: str, status: Status, value: float | None, variable: str = "", segment: str = ""
) -> AlertRecord:
    return AlertRecord(rule, status, value, {}, f"{rule} {variable} {segment}", variable, segment)


def test_alerts_are_grouped_into_one_finding_per_rule_the_worst_first() -> None:
    red, amber, green = Status.RED, Status.AMBER, Status.GREEN
    alerts = [
        _alert("auc_drop", red, 0.21),
        *(_alert("auc_drop", red, 0.2 + i / 100, segment=f"channel=c{i}") for i in range(8)),
        _alert("auc_drop", amber, 0.12, segment="channel=c9"),
        _alert("auc_drop", green, 0.01, segment="channel=c10"),
        _alert("csi", amber, 0.2, "income"),
        _alert("csi", amber, 0.3, "region"),
        _alert("csi", green, 0.01, "age"),
        _alert("ks_band", red, 0.11),
        _alert("pd_overestimation", red, 1e-9),
        _alert("pd_overestimation", red, 1e-4, segment="channel=c1"),
        _alert("iv_drop", Status.NOT_EVALUABLE, None, "age"),
        _alert("iv_drop", Status.NOT_EVALUABLE, None, "region"),
    ]
    found = findings(alerts)
    assert [(f.rule, f.status) for f in found] == [
        # RED first; of those, the rules judged on all loans, the most places first
        ("auc_drop", "RED"),
        ("pd_overestimation", "RED"),
        ("ks_band", "RED"),
        ("csi", "AMBER"),
    ]
    auc = found[0]
    assert (auc.n_places, auc.n_judged, auc.lesser) == (9, 11, 1)
    assert auc.places[:2] == ("all loans", "channel=c0")
    assert len(auc.places) == 6
    # a drop: the highest value is the worst
    assert (auc.worst_place, auc.worst_value) == ("channel=c7", pytest.approx(0.27))
    # a p-value: the lowest
    over = found[1]
    assert (over.worst_place, over.worst_value) == ("all loans", 1e-9)
    assert "over-estimate" in over.statement
    csi = found[3]
    assert (csi.places, csi.worst_place) == (("income", "region"), "region")
    (iv,) = unjudged(alerts)
    assert (iv.rule, iv.n_places, iv.first_place) == ("iv_drop", 2, "age")
    line = verdict("RED", found, alerts)
    assert line.text == "4 findings (3 RED, 1 AMBER) from 15 alerts of 4 rules judged"
    assert verdict("GREEN", (), [_alert("ks_band", green, 0.4)]).text == (
        "the one rule judged is GREEN"
    )
    two = [_alert("ks_band", green, 0.4), _alert("psi", green, 0.01)]
    assert verdict("GREEN", (), two).text == "all 2 rules judged are GREEN"
    assert verdict("NOT_EVALUABLE", (), alerts[-2:]).text == (
        "no rule could be judged on this run's loans"
    )


# --------------------------------------------------------------------------- a real run


def _book(seed: int) -> pd.DataFrame:
    """A year and a half of loans whose defaults follow ``pd_true``; ``pd_high`` is 1.6 times
    it: a model that over-estimates the risk, and ranks the loans exactly as well."""
    rng = np.random.default_rng(seed)
    frames = []
    for start in pd.date_range("2023-01-01", "2025-06-01", freq="MS"):
        days = rng.integers(0, start.days_in_month, LOANS_PER_MONTH)
        pd_true = np.clip(rng.beta(1.5, 20.0, LOANS_PER_MONTH), 1e-4, 0.5)
        frames.append(
            pd.DataFrame(
                {
                    "score_date": [(start + pd.Timedelta(days=int(d))).date() for d in days],
                    "pd_true": np.round(pd_true, 6),
                    "default_12m": (rng.random(LOANS_PER_MONTH) < pd_true).astype(int),
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    book["pd_high"] = np.round(book["pd_true"] * 1.6, 6)
    return book


@pytest.fixture(scope="module")
def over_estimated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The report of a run whose PDs are 1.6 times too high, and what the run stored."""
    folder = tmp_path_factory.mktemp("over")
    url = f"sqlite:///{folder / 'book.db'}"
    book = _book(seed=5)
    write_loans(url, book)
    model = book_model(
        url,
        name="cautious",
        columns={
            "id": "loan_id",
            "score_date": "score_date",
            "score": "pd_high",
            "label": "default_12m",
        },
        calibration={"grades": [0.04, 0.08, 0.16]},
        baseline=BASELINE,
    )
    store = fresh_store(folder)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    path = render_run_report(report_config(store, model, folder), store, "cautious", AS_OF)
    return path, (store, outcome, book)


def _page(path: Path) -> Element:
    return parse(path.read_text(encoding="utf-8"))


def test_a_run_red_only_for_over_estimation_says_so_first(
    over_estimated: tuple[Path, Any],
) -> None:
    path, (_, outcome, _) = over_estimated
    red = {a.rule for a in outcome.alerts if a.status == Status.RED}
    assert red, "the test needs a RED run"
    assert red <= {"pd_overestimation", "pd_overestimation_grade"}, red
    page = _page(path)
    # the verdict and the findings come right after the title, before any figure
    sections = [s.attrs["id"] for s in page.iter("section")]
    assert sections[:3] == ["run-header", "findings", "summary"]
    findings_ = page.get("section", id="findings")
    assert findings_.get("p", class_="verdict").attrs["data-status"] == "RED"
    first = next(iter(findings_.get("ol", class_="findings").iter("li")))
    assert first.attrs["data-rule"] in red
    assert "over-estimate" in first.text()
    # the summary's PD line is RED too: it reads both directions
    mean_pd = page.get("section", id="summary").get("tr", data_figure="mean_pd")
    assert "RED" in mean_pd.text()
    assert "pd_overestimation" in mean_pd.text()


def test_the_calibration_table_shows_both_directions_and_the_p_that_decided(
    over_estimated: tuple[Path, Any],
) -> None:
    path, (_store, outcome, _) = over_estimated
    table = _page(path).get("section", id="calibration").get("table")
    rows = {tr.attrs["data-grade"]: tr for tr in table.iter("tr") if "data-grade" in tr.attrs}
    portfolio = rows["portfolio"]
    figures = {(f.name, f.variable, f.segment): f for f in outcome.figures}
    jeffreys = figures[("jeffreys_p", "", "")]
    under, over = jeffreys.value, jeffreys.params["p_over"]
    shown = portfolio.get("td", data_p="jeffreys").text()
    assert shown == f"{_p(under)} / {_p(over)}"
    # the p that decided the over-estimation status, and its class
    alert = next(a for a in outcome.alerts if a.rule == "pd_overestimation" and not a.segment)
    decided = portfolio.get("td", data_p="decided")
    cells = list(decided.iter("span"))
    assert cells[-1].text() == _p(alert.value)
    assert "st-red" in cells[-1].attrs["class"]
    # a grade's deciding p is its Holm-adjusted one, not its raw p
    graded = [
        a for a in outcome.alerts if a.rule == "pd_overestimation_grade" and a.value is not None
    ]
    worst = min(graded, key=lambda a: a.value or 1.0)
    raw = figures[("grade_jeffreys_p", worst.variable, "")].params["jeffreys_p_over"]
    assert worst.value == pytest.approx(min(1.0, raw * len(graded)))  # the smallest: K · p
    row = rows[worst.variable]
    assert row.get("td", data_p="decided").text().endswith(_p(worst.value))


def _p(value: float | None) -> str:
    """A p-value as the report prints it (its ``param`` filter)."""
    assert value is not None
    return f"{value:.4g}" if abs(value) < 1e-3 and value != 0 else f"{value:.4f}"


def test_the_appendix_defines_every_family_the_report_shows(
    over_estimated: tuple[Path, Any],
) -> None:
    path, (_store, outcome, _) = over_estimated
    appendix = _page(path).get("section", id="appendix")
    terms = [li.attrs["data-formula"] for li in appendix.iter("li") if "data-formula" in li.attrs]
    stored = {f.name for f in outcome.figures}
    families = [
        f for f in CATALOG.for_kind("pd").families if any(s.name in stored for s in f.figures)
    ]
    assert {f.name for f in families} >= {"discrimination", "calibration", "stability"}
    assert terms == [
        m.term for m in sorted((m for f in families for m in f.formulas), key=lambda m: m.order)
    ]
    assert {"Jeffreys test", "Hosmer–Lemeshow", "Herfindahl index", "PSI and CSI"} <= set(terms)
    # a family that stored nothing is not defined: this model has no challenger, no migration
    assert "Challenger test" not in terms
    assert "Matrix weighted bandwidth" not in terms


def test_the_ecb_auc_test_uses_the_current_standard_error_unless_told_otherwise(
    tmp_path: Path,
) -> None:
    """ECB: S = (AUC_init − AUC) / s_now; the variant ``auc_test_variance: both`` divides by
    √(s_now² + s_init²), s_init the baseline's DeLong standard error."""
    url = f"sqlite:///{tmp_path / 'book.db'}"
    book = _book(seed=9)
    # the score degrades after the baseline: a noisier copy of the PD
    rng = np.random.default_rng(1)
    later = book["score_date"] > BASELINE["end"]
    noisy = book["pd_true"] * np.exp(rng.normal(0, 1.5, len(book)))
    book["score"] = np.where(later, noisy, book["pd_true"]).round(6)
    write_loans(url, book)
    columns = {"id": "loan_id", "score_date": "score_date", "score": "score"}
    columns["label"] = "default_12m"
    tests = {}
    for variance in ("current", "both"):
        model = book_model(
            url,
            name=f"auc_{variance}",
            columns=columns,
            calibration={"enabled": False, "auc_test_variance": variance},
            baseline=BASELINE,
        )
        (tmp_path / variance).mkdir()
        store = fresh_store(tmp_path / variance)
        outcome = run_model(model, AS_OF, store=store)
        assert outcome.ok, outcome.error
        (test,) = [f for f in outcome.figures if f.name == "auc_test_p" and not f.segment]
        base = _baseline_auc(store, model.name)
        tests[variance] = (test, base)
    (ecb, base), (both, _) = tests["current"], tests["both"]
    auc, s_now = ecb.params["auc"], ecb.params["std_error"]
    s_init = base.params["std_error"]
    assert ecb.params["initial_auc"] == base.value
    assert ecb.params["initial_auc_se"] is None
    z_ecb = (base.value - auc) / s_now
    z_both = (base.value - auc) / np.hypot(s_now, s_init)
    assert ecb.params["statistic"] == pytest.approx(z_ecb, rel=1e-12)
    assert ecb.value == pytest.approx(stats.norm.sf(z_ecb), rel=1e-9)
    assert both.params["statistic"] == pytest.approx(z_both, rel=1e-12)
    assert both.params["initial_auc_se"] == s_init
    assert z_ecb > z_both > 0  # the variant is the milder test


def _baseline_auc(store: MetricStore, model: str) -> Any:
    run = store.latest_run(model)
    assert run is not None
    assert run.baseline_id is not None
    baseline = store.baseline(run.baseline_id, segments=False)
    assert baseline is not None
    (auc,) = [f for f in baseline.figures if f.name == "auc" and not f.variable]
    return auc


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["1280px", "390px"])
def test_the_first_finding_is_on_the_first_screen(
    over_estimated: tuple[Path, Any], viewport: tuple[int, int]
) -> None:
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"the browser check needs Chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright")
    path, _ = over_estimated
    width, height = viewport
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(path.resolve().as_uri(), wait_until="load")
            box = page.evaluate(
                "() => document.querySelector('ol.findings li').getBoundingClientRect().toJSON()"
            )
        finally:
            browser.close()
    assert 0 < box["top"] < height, box
    assert box["top"] + min(box["height"], 60) < height  # its reading line is visible


def test_findings_name_the_population_the_rule_judged() -> None:
    """Every rule's finding reads in plain words, and the performance rules judge the cohort."""
    for rule in CATALOG.rules:
        assert rule.finding[:1].isupper(), rule.name
        assert not rule.finding.endswith("."), rule.name
    assert CATALOG.rule("pd_overestimation").population == PERFORMANCE  # type: ignore[union-attr]
