"""What a notification says, and that nothing stops it: long lists, long errors, odd values, a
metric store that is down."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from riskmon.config import RiskmonConfig
from riskmon.notify import MAX_DELIVERY_ATTEMPTS, MAX_ERROR_CHARS, notify_run
from riskmon.notify._message import (
    MAX_LISTED_ALERTS,
    AlertLine,
    Notice,
    email_subject,
    plain_text,
    slack_text,
    webhook_payload,
)
from riskmon.outcome import RunOutcome
from riskmon.records import AlertRecord
from riskmon.store import MetricStore

from ..collect.loans import model_config
from .conftest import MODEL, HookServer

MAR = dt.date(2025, 3, 31)


def _notice(n_alerts: int, **kwargs: object) -> Notice:
    alerts = tuple(
        AlertLine(f"rule_{i}", "AMBER" if i % 2 else "RED", float(i), {}, f"message {i}")
        for i in range(n_alerts)
    )
    return Notice(MODEL, MAR, "succeeded", "RED", alerts, **kwargs)  # type: ignore[arg-type]


def test_long_alert_lists_are_cut_in_the_text_but_whole_in_the_json() -> None:
    notice = _notice(MAX_LISTED_ALERTS + 5)
    text = slack_text(notice)
    assert text.count("\n• ") == MAX_LISTED_ALERTS + 1
    assert text.endswith("• … and 5 more")
    assert "message 0" in text
    assert f"message {MAX_LISTED_ALERTS + 4}" not in text
    assert text.index("RED rule_") < text.index("AMBER rule_")
    assert len(webhook_payload(notice)["riskmon"]["alerts"]) == MAX_LISTED_ALERTS + 5
    body = plain_text(notice, report_line="Report: none.")
    assert f"Alerts that are not green ({MAX_LISTED_ALERTS + 5} of {MAX_LISTED_ALERTS + 5}):" in (
        body
    )
    assert "  - … and 5 more" in body


def test_errors_are_masked_and_bounded_everywhere() -> None:
    error = "connect postgresql://risk:s3cret@db/loans failed\n" + "x" * 5000
    notice = Notice(MODEL, MAR, "failed", "NOT_EVALUABLE", error=error)
    sent = webhook_payload(notice)["riskmon"]["error"]
    assert len(sent) == MAX_ERROR_CHARS
    assert sent.startswith("connect postgresql://risk:***@db/loans failed x")
    assert sent.endswith("…")
    for text in (slack_text(notice), plain_text(notice, report_line="")):
        assert "s3cret" not in text
        assert "x" * MAX_ERROR_CHARS not in text
    assert email_subject(notice) == "[riskmon] retail_pd 2025-03-31: FAILED"


def test_values_that_are_not_json_numbers_are_sent_as_null() -> None:
    alert = AlertRecord("psi", "RED", float("nan"), {"red": float("inf"), "n": 3}, "PSI")
    notice = Notice(MODEL, MAR, "succeeded", "RED", (AlertLine.of(alert),))
    payload = json.loads(json.dumps(webhook_payload(notice), allow_nan=False))
    sent = payload["riskmon"]["alerts"][0]
    assert sent["value"] is None
    assert sent["thresholds"] == {"red": None, "n": 3}


def test_an_all_green_run_says_so() -> None:
    notice = Notice(MODEL, MAR, "succeeded", "GREEN", _notice(0).alerts)
    assert slack_text(notice).splitlines() == [
        f":large_green_circle: *{MODEL}* as of 2025-03-31: *GREEN*",
        "All 0 alert rules are green.",
    ]


def test_a_store_that_is_down_does_not_stop_the_message(
    hook_server: Callable[..., HookServer],
    stored_run: Callable[..., RunOutcome],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = hook_server()
    model = model_config("sqlite:///unused.db", notify=[{"webhook": server.url()}])  # change
    outcome = stored_run(MAR, ("RED",))
    down = MetricStore.open(f"sqlite:///{tmp_path / 'never-migrated.db'}")
    try:
        with caplog.at_level(logging.INFO, logger="riskmon.notify"):
            (attempt,) = notify_run(RiskmonConfig(models=[model]), model, outcome, down)
    finally:
        down.engine.dispose()
    assert attempt.ok
    assert len(server.requests) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("cannot read failed notifications" in e for e in errors)
    assert any("cannot read the previous run" in e for e in errors)
    assert any("could not record the notification of" in e for e in errors)
    assert any("could not record the notification state" in e for e in errors)


def test_a_channel_removed_from_the_configuration_is_not_retried(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = hook_server(status=500)
    old, new = {"webhook": server.url("/old")}, {"webhook": server.url("/new")}
    before = model_config("sqlite:///unused.db", notify=[old | {"notify_on": "always"}])
    notify_run(RiskmonConfig(models=[before]), before, stored_run(dt.date(2025, 2, 28)), store)
    after = model_config("sqlite:///unused.db", notify=[new | {"notify_on": "always"}])
    server.status = 200
    with caplog.at_level(logging.INFO, logger="riskmon.notify"):
        attempts = notify_run(RiskmonConfig(models=[after]), after, stored_run(MAR), store)
    assert [(a.late, a.ok) for a in attempts] == [(False, True)]
    assert [r.path for r in server.requests] == ["/old", "/new"]
    assert "is no longer configured; its failed notification is not retried" in caplog.text
    assert len(store.failed_deliveries(MODEL)) == 1


def test_a_delivery_is_given_up_after_the_last_attempt(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = hook_server(status=503)
    model = model_config("sqlite:///unused.db", notify=[{"webhook": server.url()}])
    config = RiskmonConfig(models=[model])
    february = stored_run(dt.date(2025, 2, 28), ("RED",))
    assert february.run_id is not None
    (first,) = notify_run(config, model, february, store)
    key = first.channel
    for _ in range(MAX_DELIVERY_ATTEMPTS - 2):  # as if earlier runs had retried it
        store.record_delivery(february.run_id, key, error="HTTP 503")
    with caplog.at_level(logging.WARNING, logger="riskmon.notify"):
        (last,) = notify_run(config, model, stored_run(MAR, ("RED",)), store)
    assert (last.as_of, last.late, last.ok) == (dt.date(2025, 2, 28), True, False)
    assert "giving up on notifying retail_pd 2025-02-28: RED" in caplog.text
    server.status = 200
    assert notify_run(config, model, stored_run(dt.date(2025, 4, 30), ("RED",)), store) == []
    (delivery,) = store.deliveries(february.run_id)
    assert (delivery.state, delivery.attempts) == ("failed", MAX_DELIVERY_ATTEMPTS)


#: control characters but tab and newline, and bidirectional marks, overrides, isolates
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_hidden_characters_in_alerts_are_shown_escaped() -> None:
    """A segment, variable or message holding control characters or a bidi override cannot
    hide or reorder a message's text."""
    alert = AlertLine("csi", "RED", 0.3, {}, "moved \x00", variable="v\u202e", segment="c=\x1b[31m")
    notice = Notice(MODEL, MAR, "succeeded", "RED", (alert,))
    for text in (slack_text(notice), plain_text(notice, report_line="Report: none.")):
        assert not HIDDEN.search(text)
        assert "v\\u202e" in text
        assert "c=\\x1b[31m" in text
        assert "moved \\x00" in text
