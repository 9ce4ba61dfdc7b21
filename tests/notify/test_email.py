"""E-mail notifications of real runs, sent through a real SMTP server on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from riskmon.config import RiskmonConfig, SmtpConfig, StoreConfig
from riskmon.notify import notify_run
from riskmon.outcome import RunOutcome
from riskmon.report import report_path
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..collect.loans import load, loan_frame, model_config
from .conftest import MODEL, SOCKET_TIMEOUT, MailServer, free_port

FEB, MAR = dt.date(2025, 2, 28), dt.date(2025, 3, 31)
TEAM = "risk-team@example.com"
REPORT_HTML = "<!doctype html><html><body><h1>retail_pd 2025-03-31</h1></body></html>\n"


def _config(port: int, *, source: str = "sqlite:///unused.db", **smtp: Any) -> RiskmonConfig:
    store = {k: smtp.pop(k) for k in ("reports_url", "reports_dir") if k in smtp}
    model = model_config(
        source,
        performance_window="2 months",
        notify=[{"email": TEAM, "notify_on": "always"}],
    )
    return RiskmonConfig(
        store=StoreConfig(**store),
        smtp=SmtpConfig(
            host="127.0.0.1",
            port=port,
            sender="riskmon@bank.example",
            timeout_seconds=SOCKET_TIMEOUT,
            **smtp,
        ),
        models=[model],
    )


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert isinstance(part, EmailMessage)
    return str(part.get_content()).replace("\r\n", "\n")  # SMTP's line ends


def _report(tmp_path: Path) -> Path:
    path = tmp_path / "reports" / "retail_pd-2025-03-31.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(REPORT_HTML, encoding="utf-8")
    return path


def test_a_run_is_mailed_with_its_report_attached(
    store: MetricStore, smtp_server: Callable[..., MailServer], tmp_path: Path
) -> None:
    server = smtp_server()
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load(loans, loan_frame(seed=3, n=3000))
    config = _config(server.port, source=loans)
    outcome = run_model(config.models[0], MAR, store=store)
    assert outcome.status == "succeeded", outcome.error

    (attempt,) = notify_run(config, config.models[0], outcome, store, report_path=_report(tmp_path))

    assert attempt.ok
    assert attempt.channel == f"email:{TEAM}"
    (message,) = server.messages
    assert server.recipients == [[TEAM]]
    assert message["Subject"] == "[riskmon] retail_pd 2025-03-31: RED"
    assert message["From"] == "riskmon@bank.example"
    assert message["To"] == TEAM
    body = _body(message)
    assert body.startswith("retail_pd as of 2025-03-31: RED\n")
    for alert in outcome.alerts:
        assert (alert.message in body) is (alert.status != "GREEN")
    assert "Report: attached (retail_pd-2025-03-31.html)." in body
    (attachment,) = message.iter_attachments()
    assert isinstance(attachment, EmailMessage)
    assert attachment.get_filename() == "retail_pd-2025-03-31.html"
    assert attachment.get_content_type() == "text/html"
    assert attachment.get_content().replace("\r\n", "\n") == REPORT_HTML
    assert outcome.run_id is not None
    assert [d.state for d in store.deliveries(outcome.run_id)] == ["sent"]


@pytest.mark.parametrize(
    ("reports_url", "limit", "line"),
    [
        (None, 70, "Report: not attached (it is 71 bytes, more than the 70 allowed)."),
        (
            "https://reports.example.com/",
            70,
            "Report: https://reports.example.com/retail_pd-2025-03-31.html",
        ),
        (None, 71, "Report: attached (retail_pd-2025-03-31.html)."),
    ],
)
def test_a_report_larger_than_allowed_is_linked_or_mentioned(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
    tmp_path: Path,
    reports_url: str | None,
    limit: int,
    line: str,
) -> None:
    server = smtp_server()
    config = _config(server.port, reports_url=reports_url, max_attachment_bytes=limit)
    report = _report(tmp_path)
    assert report.stat().st_size == 71
    notify_run(config, config.models[0], stored_run(MAR, ("AMBER",)), store, report_path=report)
    (message,) = server.messages
    assert line in _body(message)
    assert len(list(message.iter_attachments())) == (limit >= 71)


def test_a_run_without_report_says_so(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
) -> None:
    server = smtp_server()
    config = _config(server.port)
    notify_run(config, config.models[0], stored_run(MAR, ("GREEN", "GREEN")), store)
    (message,) = server.messages
    assert message["Subject"] == "[riskmon] retail_pd 2025-03-31: GREEN"
    body = _body(message)
    assert "All 2 alert rules are green." in body
    assert "Report: not attached (no report was written for this run)." in body


def test_a_failed_run_is_mailed_with_its_masked_error(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
) -> None:
    server = smtp_server()
    config = _config(server.port)
    outcome = stored_run(MAR, error="cannot connect to postgresql://risk:s3cret@db/loans")
    notify_run(config, config.models[0], outcome, store)
    (message,) = server.messages
    assert message["Subject"] == "[riskmon] retail_pd 2025-03-31: FAILED"
    body = _body(message)
    assert "The run failed:\n    cannot connect to postgresql://risk:***@db/loans" in body
    assert "s3cret" not in body


def test_the_login_is_used_and_a_refused_one_is_masked(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = smtp_server(login=("riskmon", "pa55-SECRET"))
    wrong = _config(server.port, username="riskmon", password="wr0ng-SECRET")
    with caplog.at_level(logging.DEBUG, logger="riskmon.notify"):
        (refused,) = notify_run(wrong, wrong.models[0], stored_run(FEB, ("RED",)), store)
    assert refused.error is not None
    assert refused.error.startswith(f"SMTP 127.0.0.1:{server.port}: login refused")
    assert server.messages == []

    right = _config(server.port, username="riskmon", password="pa55-SECRET")
    late, current = notify_run(right, right.models[0], stored_run(MAR, ("RED",)), store)
    assert late.ok
    assert current.ok
    assert [m["Subject"] for m in server.messages] == [
        "[riskmon] retail_pd 2025-02-28: RED (late)",
        "[riskmon] retail_pd 2025-03-31: RED",
    ]
    assert server.logins == ["riskmon", "riskmon"]
    stored = [str(d.last_error) for r in store.runs(MODEL) for d in store.deliveries(r.id)]
    assert "SECRET" not in caplog.text + "\n".join(stored)


@pytest.mark.parametrize("implicit_tls", [False, True], ids=["starttls", "ssl"])
def test_tls_is_used_when_configured(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
    certificate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    implicit_tls: bool,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # trust the test's own certificate
    login = ("riskmon", "pa55-SECRET")
    server = smtp_server(login=login, tls=certificate, implicit_tls=implicit_tls)
    tls = {"ssl": True} if implicit_tls else {"starttls": True}
    config = _config(server.port, username=login[0], password=login[1], **tls)
    (attempt,) = notify_run(config, config.models[0], stored_run(MAR, ("RED",)), store)
    assert attempt.ok, attempt.error
    assert server.encrypted == [True]
    assert server.logins == ["riskmon"]


def test_an_untrusted_certificate_is_refused(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
    certificate: tuple[Path, Path],
) -> None:
    server = smtp_server(tls=certificate)
    config = _config(server.port, starttls=True)
    (attempt,) = notify_run(config, config.models[0], stored_run(MAR, ("RED",)), store)
    assert attempt.error is not None
    assert "CERTIFICATE_VERIFY_FAILED" in attempt.error
    assert server.messages == []


def test_a_server_that_is_down_is_recorded_and_retried_next_time(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    smtp_server: Callable[..., MailServer],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    port = free_port()
    config = _config(port, reports_dir=tmp_path / "reports")
    model = config.models[0]
    february = stored_run(FEB, ("AMBER", "GREEN"))
    with caplog.at_level(logging.WARNING, logger="riskmon.notify"):
        (attempt,) = notify_run(config, model, february, store)
    assert attempt.error is not None
    assert attempt.error.startswith(f"SMTP 127.0.0.1:{port}: cannot send")
    assert f"could not notify retail_pd 2025-02-28: AMBER to email:{TEAM}" in caplog.text
    assert february.run_id is not None
    assert {a.notify_state for a in store.alerts(february.run_id)} == {"failed"}

    written = report_path(tmp_path / "reports", MODEL, FEB)  # where the report step puts it
    written.parent.mkdir(parents=True)
    written.write_text(REPORT_HTML, encoding="utf-8")
    server = smtp_server(port=port)
    late, current = notify_run(config, model, stored_run(MAR, ("GREEN",)), store)
    assert (late.as_of, late.late, late.ok) == (FEB, True, True)
    assert (current.as_of, current.late, current.ok) == (MAR, False, True)
    retried, _ = server.messages
    assert retried["Subject"] == "[riskmon] retail_pd 2025-02-28: AMBER (late)"
    body = _body(retried)
    assert "This notification is late" in body
    assert "as of 2025-02-28" in body
    assert [a.get_filename() for a in retried.iter_attachments()] == ["2025-02-28.html"]
    assert store.failed_deliveries(MODEL) == []
    assert {a.notify_state for a in store.alerts(february.run_id)} == {"sent"}
