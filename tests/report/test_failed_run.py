"""A failed run's stored error is one readable line (a defect's class and message in words,
secrets masked), and its report says what is true of its baseline."""

from __future__ import annotations

import datetime as dt

import pytest

from riskmon.config import RiskmonConfig
from riskmon.errors import SourceError, describe_failure
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore

from .conftest import AS_OF
from .htmltree import Element, parse

FAILED_ON = dt.date(2025, 4, 30)
SECRET = "s3cret-pw"


@pytest.mark.parametrize(
    ("error", "described"),
    [
        (
            KeyError(("performance", "gains")),
            "unexpected KeyError: riskmon looked up 'performance', 'gains' and found nothing",
        ),
        (KeyError("auc"), "unexpected KeyError: riskmon looked up 'auc' and found nothing"),
        (ZeroDivisionError("division by zero"), "unexpected ZeroDivisionError: division by zero"),
        (RuntimeError(), "unexpected RuntimeError, without a message"),
        (SourceError("model 'm': table 'loans' not found"), "model 'm': table 'loans' not found"),
    ],
)
def test_a_failure_is_described_in_words(error: Exception, described: str) -> None:
    assert describe_failure(error) == described


def _fail_with(
    monkeypatch: pytest.MonkeyPatch, config: RiskmonConfig, store: MetricStore, error: Exception
) -> str:
    def broken(*_: object) -> None:
        raise error

    monkeypatch.setattr("riskmon.run.compute_run", broken)
    outcome = run_model(config.models[0], FAILED_ON, store=store)
    assert outcome.status == "failed"
    assert outcome.error is not None
    stored = store.run("retail_pd", FAILED_ON)
    assert stored is not None
    assert stored.error == outcome.error
    return outcome.error


def _facts(page: Element) -> dict[str, str]:
    """The run header's facts table: each row's heading and its value."""
    return {
        row.get("th").text(): row.get("td").text()
        for row in page.get("section", id="run-details").iter("tr")
        if row.find("th") is not None and row.find("td") is not None
    }


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_failed_runs_report_shows_a_sentence_and_no_baseline_it_did_not_record(
    monkeypatch: pytest.MonkeyPatch, real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    error = _fail_with(monkeypatch, real_config, real_runs, KeyError(("performance", "gains")))
    assert error == describe_failure(KeyError(("performance", "gains")))
    page = parse(
        render_run_report(real_config, real_runs, "retail_pd", FAILED_ON).read_text("utf-8")
    )
    alert = page.get("div", role="alert").text()
    assert "riskmon looked up 'performance', 'gains' and found nothing" in alert
    assert "KeyError: (" not in page.text()
    assert _facts(page)["Baseline version"] == "not recorded: a failed run stores no results"
    # a succeeded run's report names its baseline
    done = parse(render_run_report(real_config, real_runs, "retail_pd", AS_OF[-1]).read_text())
    assert _facts(done)["Baseline version"].startswith("version 1, frozen ")


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_failures_secrets_stay_masked(
    monkeypatch: pytest.MonkeyPatch, real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    url = f"postgresql://risk:{SECRET}@db.example/loans"
    error = _fail_with(monkeypatch, real_config, real_runs, ValueError(f"cannot read {url}"))
    assert error == "unexpected ValueError: cannot read postgresql://risk:***@db.example/loans"
    html = render_run_report(real_config, real_runs, "retail_pd", FAILED_ON).read_text("utf-8")
    assert SECRET not in html
    assert "risk:***@db.example" in html
