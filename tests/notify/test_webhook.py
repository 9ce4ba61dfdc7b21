"""Webhook notifications of real runs, sent to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import logging
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from riskmon.config import RiskmonConfig, StoreConfig
from riskmon.notify import DeliveryError, channel_key, notify_run
from riskmon.notify._webhook import post_json
from riskmon.outcome import RunOutcome
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..collect.loans import load, loan_frame, model_config
from .conftest import MODEL, SOCKET_TIMEOUT, HookServer, free_port

FEB, MAR = dt.date(2025, 2, 28), dt.date(2025, 3, 31)
REPORTS_URL = "https://reports.example.com/riskmon/"


@pytest.fixture
def loans_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=3, n=3000))
    return url


def _setup(loans_url: str, tmp_path: Path, *webhooks: str, **store: Any) -> RiskmonConfig:
    notify = [{"webhook": url, "notify_on": "always"} for url in webhooks]
    model = model_config(loans_url, performance_window="2 months", notify=notify)
    reports = StoreConfig(reports_dir=tmp_path / "reports", **store)
    return RiskmonConfig(store=reports, models=[model])


def _run(config: RiskmonConfig, store: MetricStore, as_of: dt.date) -> RunOutcome:
    outcome = run_model(config.models[0], as_of, store=store)
    assert outcome.status == "succeeded", outcome.error
    return outcome


def test_a_run_is_posted_as_slack_text_and_structured_json(
    store: MetricStore, hook_server: Callable[..., HookServer], loans_url: str, tmp_path: Path
) -> None:
    server = hook_server()
    config = _setup(loans_url, tmp_path, server.url(), reports_url=REPORTS_URL)
    model = config.models[0]
    outcome = _run(config, store, MAR)
    report = tmp_path / "reports" / MODEL / "2025-03-31.html"
    report.parent.mkdir(parents=True)
    report.write_text("<html></html>")

    (attempt,) = notify_run(config, model, outcome, store, report_path=report)

    assert attempt.ok
    assert (attempt.model, attempt.as_of, attempt.late) == (MODEL, MAR, False)
    (request,) = server.requests
    assert request.headers["Content-Type"].startswith("application/json")
    text = request.body["text"]
    assert text.splitlines()[0] == f":red_circle: *{MODEL}* as of 2025-03-31: *RED*"
    listed = [a for a in outcome.alerts if a.status != "GREEN"]
    assert listed
    for alert in listed:
        assert alert.message in text
    assert not any(a.message in text for a in outcome.alerts if a.status == "GREEN")
    assert text.index("RED ks_band") < text.index("AMBER ")
    assert text.endswith(f"<{REPORTS_URL}{MODEL}/2025-03-31.html|Open the report>")
    body = request.body["riskmon"]
    assert body["model"] == MODEL
    assert body["as_of"] == "2025-03-31"
    assert (body["status"], body["alert_status"], body["late"]) == ("succeeded", "RED", False)
    assert body["run_id"] == outcome.run_id
    assert len(body["alerts"]) == len(outcome.alerts)
    for sent, alert in zip(body["alerts"], outcome.alerts, strict=True):
        assert sent["rule"] == alert.rule
        assert (sent["variable"], sent["segment"]) == (alert.variable, alert.segment)
        assert (sent["status"], sent["message"]) == (alert.status, alert.message)
        assert sent["value"] == pytest.approx(alert.value)
        assert sent["thresholds"] == pytest.approx(alert.thresholds)
    assert outcome.run_id is not None
    (delivery,) = store.deliveries(outcome.run_id)
    assert (delivery.channel, delivery.state, delivery.attempts) == (
        channel_key(model.notify[0]),
        "sent",
        1,
    )
    assert {a.notify_state for a in store.alerts(outcome.run_id)} == {"sent"}


def test_slack_control_characters_in_messages_are_escaped(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
) -> None:
    server = hook_server()
    model = model_config("sqlite:///unused.db", notify=[{"webhook": server.url()}])
    outcome = stored_run(MAR, ("GREEN", "AMBER"))
    notify_run(RiskmonConfig(models=[model]), model, outcome, store)
    text = server.requests[0].body["text"]
    assert "AMBER rule_1 [income]: figure 1 of &lt;income&gt; &amp; co is AMBER" in text
    assert "<income>" not in text
    assert server.requests[0].body["riskmon"]["alerts"][1]["message"] == (
        "figure 1 of <income> & co is AMBER"
    )


def test_a_failing_server_never_fails_the_run_and_is_retried_late(
    store: MetricStore, hook_server: Callable[..., HookServer], loans_url: str, tmp_path: Path
) -> None:
    server = hook_server(status=500)
    config = _setup(loans_url, tmp_path, server.url())
    model = config.models[0]
    february = _run(config, store, FEB)
    assert february.run_id is not None
    n_figures = len(store.figures(february.run_id))

    (attempt,) = notify_run(config, model, february, store)

    assert attempt.error == "HTTP 500 Internal Server Error: ok"
    stored = store.run(MODEL, FEB)
    assert stored is not None
    assert stored.status == "succeeded"
    assert len(store.figures(february.run_id)) == n_figures
    (failed,) = store.failed_deliveries(MODEL)
    assert (failed.run_id, failed.last_error, failed.sent_at) == (
        february.run_id,
        attempt.error,
        None,
    )
    alerts = store.alerts(february.run_id)
    assert {a.notify_state for a in alerts} == {"failed"}
    assert all(attempt.error in (a.notify_error or "") for a in alerts)

    server.status = 200
    server.requests.clear()
    march = _run(config, store, MAR)
    late, current = notify_run(config, model, march, store)

    assert (late.as_of, late.late, late.ok) == (FEB, True, True)
    assert (current.as_of, current.late, current.ok) == (MAR, False, True)
    first, second = server.requests
    assert first.body["riskmon"]["as_of"] == "2025-02-28"
    assert first.body["riskmon"]["late"] is True
    assert "late" in first.body["text"]
    assert "2025-02-28" in first.body["text"]
    assert len(first.body["riskmon"]["alerts"]) == len(february.alerts)
    assert second.body["riskmon"]["as_of"] == "2025-03-31"
    assert "late" not in second.body["text"]
    assert store.failed_deliveries(MODEL) == []
    (delivery,) = store.deliveries(february.run_id)
    assert (delivery.state, delivery.attempts, delivery.last_error) == ("sent", 2, None)
    assert {a.notify_state for a in store.alerts(february.run_id)} == {"sent"}


def test_a_closed_port_is_recorded_and_retried_once_the_server_is_up(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    model = model_config("sqlite:///unused.db", notify=[{"webhook": url, "notify_on": "amber"}])
    config = RiskmonConfig(models=[model])
    february = stored_run(FEB, ("RED",))
    with caplog.at_level(logging.INFO, logger="riskmon.notify"):
        (attempt,) = notify_run(config, model, february, store)
    assert attempt.error is not None
    assert attempt.error.startswith("cannot reach the webhook")
    assert "refused" in attempt.error.lower()
    warning = [r for r in caplog.records if r.levelno == logging.WARNING and "could not" in r.msg]
    assert len(warning) == 1

    march = stored_run(MAR, ("GREEN",))  # not due itself, but the February message is
    assert [a.late for a in notify_run(config, model, march, store)] == [True]  # still down
    assert store.failed_deliveries(MODEL)[0].attempts == 2

    server = hook_server(port=port)
    april = stored_run(dt.date(2025, 4, 30), ("GREEN",))
    (late,) = notify_run(config, model, april, store)
    assert (late.as_of, late.late, late.ok) == (FEB, True, True)
    (request,) = server.requests
    assert request.body["riskmon"]["as_of"] == "2025-02-28"
    assert store.failed_deliveries(MODEL) == []
    assert april.run_id is not None
    assert {a.notify_state for a in store.alerts(april.run_id)} == {"not_needed"}


def test_a_secret_webhook_url_appears_nowhere(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = hook_server(status=403)
    server.answer = "invalid token in {path}"  # a server that echoes the URL back
    secret = "/services/T0/B0/xoxb-SECRET-token?sig=SECRET-sig"
    down = f"http://127.0.0.1:{free_port()}/services/T1/B1/SECRET-other"
    model = model_config(
        "sqlite:///unused.db",
        notify=[{"webhook": server.url(secret), "notify_on": "always"}, {"webhook": down}],
    )
    config = RiskmonConfig(models=[model])
    with caplog.at_level(logging.DEBUG):
        attempts = notify_run(config, model, stored_run(FEB, ("RED",)), store)
        attempts += notify_run(config, model, stored_run(MAR, ("RED",)), store)
    assert len(server.requests) == 3  # February, February again (late), March
    assert len(attempts) == 5
    assert all(a.error for a in attempts)
    assert attempts[0].error == "HTTP 403 Forbidden: invalid token in ***"
    texts = [caplog.text]
    for run in store.runs(MODEL):
        texts += [d.channel + str(d.last_error) for d in store.deliveries(run.id)]
        texts += [str(a.notify_error) for a in store.alerts(run.id)]
    texts += [a.channel + str(a.error) for a in attempts]
    assert "SECRET" not in "\n".join(texts)
    assert "services" not in "\n".join(texts)


def test_a_failed_run_is_posted_with_its_masked_error(
    store: MetricStore, hook_server: Callable[..., HookServer], tmp_path: Path
) -> None:
    server = hook_server()
    source = f"sqlite:///{tmp_path / 'empty.db'}"
    model = model_config(source, notify=[{"webhook": server.url(), "notify_on": "amber"}])
    config = RiskmonConfig(models=[model])
    outcome = run_model(model, MAR, store=store)
    assert outcome.status == "failed"
    assert outcome.error

    (attempt,) = notify_run(config, model, outcome, store)

    assert attempt.ok
    body = server.requests[0].body
    assert body["text"].startswith(f":x: *{MODEL}* as of 2025-03-31: *FAILED*")
    assert "The run failed" in body["text"]
    assert (body["riskmon"]["status"], body["riskmon"]["state"]) == ("failed", "FAILED")
    assert body["riskmon"]["error"] == outcome.error
    assert body["riskmon"]["alerts"] == []


def test_a_redirect_is_a_failure(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
) -> None:
    server = hook_server(status=307)
    model = model_config("sqlite:///unused.db", notify=[{"webhook": server.url()}])
    (attempt,) = notify_run(RiskmonConfig(models=[model]), model, stored_run(MAR), store)
    assert attempt.error is not None
    assert attempt.error.startswith("HTTP 307")


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as listener:  # accepts connections in its backlog, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
        started = time.monotonic()
        with pytest.raises(
            DeliveryError, match=r"no complete answer from the webhook within 0\.3 s"
        ):
            post_json(url, {"text": "hello"}, timeout=0.3)
    assert time.monotonic() - started < SOCKET_TIMEOUT
