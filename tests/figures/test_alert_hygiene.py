"""Alert hygiene across many segments: Benjamini-Hochberg control of a rule's p-values and of
its PSI noise tests (``thresholds.multiple_testing``), and hysteresis (``thresholds.consecutive``)
in stored nightly runs on SQLite and PostgreSQL stores."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from riskmon.evaluate import evaluate
from riskmon.metrics import psi_critical_value, psi_noise_p
from riskmon.records import CURRENT, PERFORMANCE, SCORE, AlertRecord, FigureRecord, Status, why
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..report.htmltree import parse
from .books import book_model, report_config, write_loans
from .test_noise import _Baseline, _model
from .test_volume_runs import LOANS_PER_MONTH, _book

#: Benjamini & Hochberg (1995), section 4: fifteen p-values of which their procedure rejects
#: the four smallest at q = 0.05 (the fifth, 0.0201, needs 0.0201 <= 5/15 * 0.05 = 0.0167)
PAPER = [
    0.0001,
    0.0004,
    0.0019,
    0.0095,
    0.0201,
    0.0278,
    0.0298,
    0.0344,
    0.0459,
    0.3240,
    0.4262,
    0.5719,
    0.6528,
    0.7590,
    1.0000,
]


def _evaluate(figures: list[FigureRecord], control: str) -> list[AlertRecord]:
    return evaluate(
        _model(multiple_testing=control),
        figures,
        _Baseline(),  # type: ignore[arg-type]
        previous_n_current=None,
        n_current=7500,
    )


def _calibration(segment: str, p: float) -> list[FigureRecord]:
    """A segment of 500 matured loans whose Jeffreys p of PD under-estimation is ``p``."""
    return [
        FigureRecord("n_rows", 500.0, PERFORMANCE, segment=segment),
        FigureRecord("n_rows", 500.0, CURRENT, segment=segment),
        FigureRecord("mean_pd", 0.05, PERFORMANCE, segment=segment),
        FigureRecord("default_rate", 0.06, PERFORMANCE, segment=segment),
        FigureRecord("jeffreys_p", p, PERFORMANCE, segment=segment),
    ]


def _statuses(alerts: list[AlertRecord], rule: str) -> list[Status]:
    by_segment = {a.segment: a.status for a in alerts if a.rule == rule and a.segment}
    return [by_segment[f"channel=c{i:02d}"] for i in range(len(PAPER))]


@pytest.mark.parametrize("control", ["none", "benjamini_hochberg"])
def test_the_p_values_of_fifteen_segments_are_controlled_as_in_the_paper(control: str) -> None:
    figures = [FigureRecord("n_rows", 7500.0, CURRENT)]
    for i, p in enumerate(PAPER):
        figures += _calibration(f"channel=c{i:02d}", p)
    alerts = _evaluate(figures, control)
    statuses = _statuses(alerts, "pd_underestimation")
    red, amber, green = Status.RED, Status.AMBER, Status.GREEN
    if control == "none":  # p < 0.001 RED, p < 0.05 AMBER
        assert statuses == [red] * 2 + [amber] * 7 + [green] * 6
        return
    # adjusted: the four the paper rejects stay AMBER (the smallest adjusted p is
    # 15 * 0.0001 = 0.0015, not below 0.001); the other eleven are GREEN
    assert statuses == [amber] * 4 + [green] * 11
    adjusted = [a for a in alerts if a.rule == "pd_underestimation" and a.segment]
    expected = stats.false_discovery_control(PAPER, method="bh")
    by_segment = {a.segment: a for a in adjusted}
    for i, q in enumerate(expected):
        alert = by_segment[f"channel=c{i:02d}"]
        assert alert.value == pytest.approx(q, rel=1e-12)
        assert alert.thresholds["p_unadjusted"] == PAPER[i]
        assert alert.thresholds["tests"] == 15  # the fifteen segments; the portfolio has no p
        assert "Benjamini-Hochberg adjusted over 15 tests" in alert.message
    # by hand: rank 4 gives 0.0095 * 15 / 4 = 0.035625, and no later rank is smaller
    assert by_segment["channel=c03"].value == pytest.approx(0.035625, rel=1e-12)


@pytest.mark.parametrize("control", ["none", "benjamini_hochberg"])
def test_a_psi_whose_noise_is_significant_only_unadjusted_is_capped(control: str) -> None:
    """Fifteen segments' PSIs of 0.30 (RED by the band): those whose noise p-value is below 0.05
    are above their critical value and RED; adjusted, only the four the paper's procedure
    rejects stay RED, the rest are within noise and at most AMBER."""
    figures = [FigureRecord("n_rows", 7500.0, CURRENT)]
    for i, p in enumerate(PAPER):
        segment = f"channel=c{i:02d}"
        critical = 0.10 if p < 0.05 else 0.50  # a PSI of 0.30 above it exactly when p < 0.05
        params = {"critical_value": critical, "noise_p": p, "alpha": 0.05}
        figures += [
            FigureRecord("n_rows", 500.0, CURRENT, segment=segment),
            FigureRecord("psi", 0.30, CURRENT, SCORE, segment, params=params),
        ]
    alerts = _evaluate(figures, control)
    statuses = _statuses(alerts, "psi")
    red, amber = Status.RED, Status.AMBER
    if control == "none":
        assert statuses == [red] * 9 + [amber] * 6
        return
    assert statuses == [red] * 4 + [amber] * 11
    capped = next(a for a in alerts if a.rule == "psi" and a.segment == "channel=c04")
    assert "within sampling noise after Benjamini-Hochberg over 15 tests" in capped.message
    # rank 5: 0.0201 * 15 / 5 = 0.0603, and no later rank is smaller (0.0298 * 15 / 7 = 0.0639)
    assert capped.thresholds["noise_p_adjusted"] == pytest.approx(0.0603, rel=1e-12)


@pytest.mark.parametrize(("n", "m", "bins"), [(1000, 1000, 10), (200, 50_000, 4), (30, 40, 2)])
def test_the_noise_p_of_a_psi_is_the_chi2_tail_of_its_scaled_value(
    n: int, m: int, bins: int
) -> None:
    rng = np.random.default_rng(1)
    for psi in rng.uniform(0, 0.5, 20):
        expected = stats.chi2.sf(psi / (1 / n + 1 / m), bins - 1)
        assert psi_noise_p(float(psi), n, m, bins) == pytest.approx(expected, rel=1e-10)
    critical = psi_critical_value(n, m, bins, alpha=0.01)
    assert psi_noise_p(critical, n, m, bins) == pytest.approx(0.01, rel=1e-9)


def test_an_empty_feed_turns_red_on_its_second_night_with_consecutive_two(
    store: MetricStore, tmp_path: Path
) -> None:
    """consecutive: 2. January has loans; February and March none: February is AMBER (RED by
    its levels, one night of two), March RED. The April night, with loans again, is GREEN."""
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=9))
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    model = book_model(
        url,
        columns={**columns, "label": "default_12m"},
        thresholds={"consecutive": 2},
    )
    volume = {}
    for as_of in (dt.date(2025, m, d) for m, d in ((1, 31), (2, 28), (3, 31), (4, 30))):
        outcome = run_model(model, as_of, store=store)
        assert outcome.ok, outcome.error
        (volume[as_of.month],) = [a for a in outcome.alerts if a.rule == "volume_change"]
    assert volume[1].status == Status.GREEN
    assert volume[2].status == Status.AMBER
    assert volume[2].thresholds["levels_status"] == "RED"
    assert volume[2].message.endswith(
        "RED by its levels in 1 run(s) in a row, of the 2 thresholds.consecutive asks before RED"
    )
    assert volume[3].status == Status.RED
    assert volume[3].thresholds["previous"] == LOANS_PER_MONTH
    assert volume[4].status == Status.GREEN
    # the March report and the index say which rule made the run RED
    config = report_config(store, model, tmp_path)
    page = render_run_report(config, store, "m", as_of=dt.date(2025, 3, 31))
    findings = parse(page.read_text(encoding="utf-8")).get("section", id="findings")
    assert findings.get("p", class_="verdict").attrs["data-status"] == "RED"
    red = [
        li.attrs["data-rule"]
        for li in findings.get("ol", class_="findings").iter("li")
        if li.attrs["data-status"] == "RED"
    ]
    assert red == ["volume_change"]


def _alert(rule: str, status: Status, variable: str = "", segment: str = "") -> AlertRecord:
    return AlertRecord(rule, status, None, {}, "", variable, segment)


def test_why_names_the_rules_that_give_a_run_its_status() -> None:
    red, amber, green = Status.RED, Status.AMBER, Status.GREEN
    alerts = [
        _alert("ks_band", red),
        _alert("iv_drop", amber, "income"),  # not the worst status: not named
        _alert("csi", red, "income"),
        _alert("csi", red, "region"),
        _alert("auc_drop", green),
        *(_alert("psi", red, "score", f"channel=c{i:02d}") for i in range(40)),
    ]
    assert why(alerts) == (
        "RED by ks_band; psi (40 places: score in channel=c00, score in channel=c01, …); "
        "csi (income, region)"
    )
    assert why([_alert("iv_drop", amber, "income"), _alert("ks_band", green)]) == (
        "AMBER by iv_drop (income)"
    )
    assert why([_alert("ks_band", green)]) is None
    many = [_alert(f"rule_{i}", red) for i in range(8)]
    assert why(many) == ("RED by rule_0; rule_1; rule_2; rule_3; rule_4; rule_5; and 2 more rules")
