"""Messy feeds in nightly runs (SQLite and PostgreSQL stores): a feed that stops is RED, month
after month, the volume compared with the last run that had loans, never with an empty run; a
reversed score_direction is refused at the freeze, RED when forced, and says so; a cohort
without matured outcomes is AMBER, not GREEN."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskmon.baseline import freeze
from riskmon.collect import Source
from riskmon.records import Status
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore

from .books import book_model, report_config, write_loans

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
    # no earlier run: January is compared with the baseline's loans per window (6 months of
    # 800 loans, 184 days, scaled to January's 31)
    first, _ = volume[dt.date(2025, 1, 31)]
    expected = 6 * LOANS_PER_MONTH * 31 / 184
    assert first.thresholds["baseline_per_window"] == pytest.approx(expected, rel=1e-12)
    assert first.value == pytest.approx(LOANS_PER_MONTH / expected - 1, rel=1e-12)
    assert first.status == Status.GREEN
    assert "expected from the baseline's volume, no earlier run with loans" in first.message
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
    assert alert.value == -1.0
    # February 2025 has 28 days: 4,800 baseline loans over 184 days, scaled
    assert "(730 expected from the baseline's volume, no earlier run with loans)" in alert.message


def test_scores_outside_score_range_are_left_out_counted_and_reported(
    store: MetricStore, tmp_path: Path
) -> None:
    """score_range [0, 1] on a PD: 3 % of January's loans carry a PD of 1.7 and 1 % of the
    baseline's -0.2. The baseline is frozen without them, January's figures are of the other
    loans, the waterfall counts them and the exclusions rule is AMBER (1 % to 5 %)."""
    book = _book(seed=12)
    january = book["score_date"].map(lambda d: d.year == 2025 and d.month == 1)
    rng = np.random.default_rng(12)
    broken = january & (rng.random(len(book)) < 0.03)
    book.loc[broken, "pd_score"] = 1.7
    early = book["score_date"].map(lambda d: d.year == 2023) & (rng.random(len(book)) < 0.01)
    book.loc[early, "pd_score"] = -0.2
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, book)
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    model = book_model(url, columns={**columns, "label": "default_12m"}, score_range=[0, 1])
    outcome = run_model(model, dt.date(2025, 1, 31), store=store)
    assert outcome.ok, outcome.error
    baseline = store.latest_baseline("m")
    assert baseline is not None
    assert baseline.n_rows == int((book["score_date"].map(lambda d: d.year == 2023) & ~early).sum())
    assert outcome.counts is not None
    assert outcome.counts.n_current == int((january & ~broken).sum())
    (excluded,) = [
        f for f in outcome.figures if f.name == "excluded_share" and f.population == "current"
    ]
    assert excluded.params["out_of_range"] == int(broken.sum())
    assert excluded.value == pytest.approx(broken.sum() / january.sum(), rel=1e-12)
    (alert,) = [a for a in outcome.alerts if a.rule == "exclusions"]
    assert alert.status == Status.AMBER
    assert f"{int(broken.sum())} a score outside score_range" in alert.message
    report = report_config(store, model, tmp_path)
    html = render_run_report(report, store, "m").read_text(encoding="utf-8")
    assert 'data-label="Out of range">' + str(int(broken.sum())) in html
    # with on_invalid: fail the same run fails, naming the column and the count
    strict = book_model(
        url,
        name="strict",
        columns={**columns, "label": "default_12m"},
        score_range=[0, 1],
        on_invalid="fail",
    )
    failed = run_model(strict, dt.date(2025, 1, 31), store=store)
    assert failed.status == "failed"
    assert failed.error is not None
    assert "column 'pd_score' (columns.score)" in failed.error
    # the first run freezes the baseline first, and the baseline has its -0.2 PDs
    n_early = int(early.sum())
    assert f"expected scores within score_range [0, 1], got {n_early} baseline loan(s)" in (
        failed.error
    )


def test_a_reversed_score_direction_is_refused_at_the_freeze_and_red_when_forced(
    store: MetricStore, tmp_path: Path
) -> None:
    """A PD declared higher_is_safer ranks bads as safer than goods: its baseline's AUC lies
    significantly below 0.5, so the freeze (and the first run, which freezes) refuses it and
    says to check score_direction; frozen with force, every run is RED and says the same;
    declared right, the rule is GREEN."""
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=4))
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    columns |= {"label": "default_12m"}
    as_of = dt.date(2024, 12, 31)  # the cohort: December 2023's loans, a year on
    wrong = book_model(url, name="wrong", columns=columns, score_direction="higher_is_safer")
    refused = run_model(wrong, as_of, store=store)
    assert refused.status == "failed"
    assert refused.error is not None
    assert "below 0.5 with score_direction 'higher_is_safer'" in refused.error
    assert "riskmon baseline freeze --force wrong" in refused.error
    assert store.latest_baseline("wrong") is None  # nothing frozen
    with Source(wrong) as source:
        freeze(wrong, source, store, force=True)
    statuses = {}
    right = book_model(url, name="right", columns=columns, score_direction="higher_is_riskier")
    for model in (wrong, right):
        outcome = run_model(model, as_of, store=store)
        assert outcome.ok, outcome.error
        (alert,) = [a for a in outcome.alerts if a.rule == "score_direction"]
        auc = next(f for f in outcome.figures if f.name == "auc" and not f.segment)
        statuses[model.name] = (alert, auc)
    wrong_alert, wrong_auc = statuses["wrong"]
    assert wrong_auc.params["ci_high"] < 0.5
    assert wrong_alert.status == Status.RED
    assert wrong_alert.value == wrong_auc.value
    assert "check score_direction" in wrong_alert.message
    right_alert, right_auc = statuses["right"]
    assert right_alert.status == Status.GREEN
    assert right_auc.value == pytest.approx(1 - wrong_auc.value, abs=1e-12)


def test_a_cohort_without_matured_outcomes_is_amber_and_says_so(
    store: MetricStore, tmp_path: Path
) -> None:
    """December 2023's loans without labels yet: the run as of 2024-12-31 judges no KS, AUC or
    calibration, and says so instead of passing GREEN; labelled, the rule is GREEN."""
    book = _book(seed=5)
    december = book["score_date"].map(
        lambda d: d >= dt.date(2023, 12, 1) and d <= dt.date(2023, 12, 31)
    )
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    columns |= {"label": "default_12m"}
    found = {}
    for name, labels in (("unlabelled", False), ("labelled", True)):
        url = f"sqlite:///{tmp_path / f'{name}.db'}"
        frame = book.copy()
        if not labels:
            frame["default_12m"] = pd.array(
                np.where(december, pd.NA, frame["default_12m"]), dtype="Int64"
            )
        write_loans(url, frame)
        model = book_model(url, name=name, columns=columns)
        outcome = run_model(model, dt.date(2024, 12, 31), store=store)
        assert outcome.ok, outcome.error
        (alert,) = [a for a in outcome.alerts if a.rule == "cohort_matured"]
        found[name] = (alert, outcome)
    alert, outcome = found["unlabelled"]
    assert alert.status == Status.AMBER
    assert (
        f"none of the cohort's {int(december.sum())} loans has a matured outcome" in alert.message
    )
    assert outcome.alert_status in (Status.AMBER, Status.RED)
    alert, _ = found["labelled"]
    assert alert.status == Status.GREEN
    assert alert.value == float(december.sum())


def test_an_empty_cohort_is_amber(store: MetricStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=9))
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    model = book_model(url, columns={**columns, "label": "default_12m"})
    outcome = run_model(model, dt.date(2025, 1, 31), store=store)  # January 2024: no loans
    assert outcome.ok, outcome.error
    (alert,) = [a for a in outcome.alerts if a.rule == "cohort_matured"]
    assert alert.status == Status.AMBER
    assert alert.message.startswith("no loans in the performance cohort")


@pytest.mark.parametrize("labels", ["all good", "all bad"])
def test_every_figure_not_available_on_a_single_class_cohort_says_why(
    store: MetricStore, tmp_path: Path, labels: str
) -> None:
    """A cohort of goods only (or bads only): KS, AUC, lift and the rest are undefined, and
    each says why instead of a bare n/a."""
    book = _book(seed=6)
    book["default_12m"] = 0 if labels == "all good" else 1
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, book)
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    model = book_model(url, columns={**columns, "label": "default_12m"})
    with Source(model) as source:
        freeze(model, source, store, force=True)
    outcome = run_model(model, dt.date(2024, 12, 31), store=store)
    assert outcome.ok, outcome.error
    bare = [(f.name, f.population, f.segment) for f in outcome.figures if f.value is None]
    assert bare  # the cohort's discrimination figures are undefined
    assert [f.name for f in outcome.figures if f.value is None and not f.reason] == []


def test_an_in_sample_cohort_is_flagged_and_its_drops_are_not_judged(
    store: MetricStore, tmp_path: Path
) -> None:
    """The cohort of 2024-12-31 (December 2023's loans) lies inside the development window
    2023-07..12: the drop rules and the ECB AUC test are NOT_EVALUABLE and say why, unless
    thresholds.judge_in_sample; a cohort after the window is judged."""
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book(seed=7))
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    columns |= {"label": "default_12m"}
    rules = ("auc_drop", "gini_drop", "auc_test")
    model = book_model(url, name="plain", columns=columns)
    outcome = run_model(model, dt.date(2024, 12, 31), store=store)
    assert outcome.ok, outcome.error
    (overlap,) = [f for f in outcome.figures if f.name == "cohort_in_sample"]
    assert overlap.value == 1.0
    assert overlap.params["cohort"] == "2023-12-01 to 2023-12-31"
    judged = [a for a in outcome.alerts if a.rule in rules and not a.segment]
    assert {a.rule for a in judged} == set(rules)
    for alert in judged:
        assert alert.status == Status.NOT_EVALUABLE
        assert alert.message.startswith("in-sample: the performance cohort (2023-12-01")
    opted = book_model(url, name="opted", columns=columns, thresholds={"judge_in_sample": True})
    outcome = run_model(opted, dt.date(2024, 12, 31), store=store)
    assert outcome.ok, outcome.error
    for alert in (a for a in outcome.alerts if a.rule in rules):
        assert "in-sample" not in alert.message
    # January 2025's loans, a year on: out of sample
    outcome = run_model(model, dt.date(2026, 1, 31), store=store)
    assert outcome.ok, outcome.error
    (overlap,) = [f for f in outcome.figures if f.name == "cohort_in_sample"]
    assert overlap.value == 0.0
    for alert in (a for a in outcome.alerts if a.rule in rules):
        assert "in-sample" not in alert.message


def test_a_source_that_returns_every_loan_twice_is_red(store: MetricStore, tmp_path: Path) -> None:
    """The database counts the loans repeating an id and score date: a doubled feed is RED and
    says so; a feed with each loan once is GREEN."""
    book = _book(seed=8)
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    columns |= {"label": "default_12m"}
    found = {}
    for name, frame in (("once", book), ("twice", pd.concat([book, book], ignore_index=True))):
        url = f"sqlite:///{tmp_path / f'{name}.db'}"
        write_loans(url, frame)
        model = book_model(url, name=name, columns=columns)
        outcome = run_model(model, dt.date(2025, 1, 31), store=store)
        assert outcome.ok, outcome.error
        (alert,) = [a for a in outcome.alerts if a.rule == "duplicate_ids"]
        found[name] = alert
    assert found["once"].status == Status.GREEN
    assert found["once"].value == 0.0
    twice = found["twice"]
    assert twice.status == Status.RED
    assert twice.value == 0.5
    n = 2 * LOANS_PER_MONTH
    assert f"current population: {n // 2} of {n} loans repeat the id and score date" in (
        twice.message
    )
    assert "every loan twice?" in twice.message
    # a source whose ids are known unique can skip the count: then nothing is said of them
    url = f"sqlite:///{tmp_path / 'twice.db'}"
    source = {"url": url, "table": "loans", "count_duplicate_ids": False}
    model = book_model(url, name="unchecked", columns=columns, source=source)
    outcome = run_model(model, dt.date(2025, 1, 31), store=store)
    assert outcome.ok, outcome.error
    assert [a for a in outcome.alerts if a.rule == "duplicate_ids"] == []
    (excluded,) = [
        f for f in outcome.figures if f.name == "excluded_share" and f.population == "current"
    ]
    assert "duplicate_ids" not in excluded.params
