"""Real notification servers on 127.0.0.1 — an HTTP webhook and an SMTP server — and runs
stored without a loan source, for the notify tests."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from riskmon.evaluate import worst
from riskmon.run import RunOutcome
from riskmon.store import MetricStore
from riskmon.store.repository import AlertRecord, RunCounts

#: seconds any socket operation of a test server may take
SOCKET_TIMEOUT = 5.0
MODEL = "retail_pd"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Webhooks on 127.0.0.1 must be reached directly, whatever the environment says."""
    for name in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "*")


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# ------------------------------------------------------------------------ webhook server


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class HookServer:
    """An HTTP server that records every POST and answers with ``status``."""

    server: ThreadingHTTPServer
    requests: list[Request] = field(default_factory=list)
    status: int = 200
    #: answer body; "{path}" is replaced by the request's path (to test that echoes are masked)
    answer: str = "ok"

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _handler(hook: Callable[[], HookServer]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = SOCKET_TIMEOUT

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            server = hook()
            server.requests.append(Request(self.path, dict(self.headers), json.loads(raw)))
            answer = server.answer.replace("{path}", self.path).encode()
            self.send_response(server.status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    return Handler


@pytest.fixture
def hook_server() -> Iterator[Callable[..., HookServer]]:
    """Start webhook servers: ``hook_server(status=200, port=0)``; all stopped afterwards."""
    started: list[tuple[HookServer, threading.Thread]] = []

    def start(*, status: int = 200, port: int = 0) -> HookServer:
        holder: list[HookServer] = []
        server = ThreadingHTTPServer(("127.0.0.1", port), _handler(lambda: holder[0]))
        server.daemon_threads = True
        hook = HookServer(server, status=status)
        holder.append(hook)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        started.append((hook, thread))
        return hook

    yield start
    for hook, thread in started:
        hook.server.shutdown()
        hook.server.server_close()
        thread.join(SOCKET_TIMEOUT)


# ------------------------------------------------------------------------ SMTP server


@dataclass
class MailServer:
    """An SMTP server on 127.0.0.1 that keeps every message it accepts."""

    controller: Controller
    port: int
    messages: list[EmailMessage] = field(default_factory=list)
    recipients: list[list[str]] = field(default_factory=list)


class _Inbox:
    def __init__(self) -> None:
        self.server: MailServer | None = None

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        assert self.server is not None
        assert isinstance(envelope.content, bytes)
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.server.messages.append(parsed)
        self.server.recipients.append(list(envelope.rcpt_tos))
        return "250 Message accepted"


@pytest.fixture
def smtp_server() -> Iterator[Callable[..., MailServer]]:
    """Start SMTP servers: ``smtp_server(port=None, login=None)``; all stopped afterwards.

    ``login=(user, password)`` makes the server require that login (over plain SMTP: the test
    has no certificate).
    """
    started: list[Controller] = []

    def start(*, port: int | None = None, login: tuple[str, str] | None = None) -> MailServer:
        inbox = _Inbox()
        kwargs: dict[str, Any] = {}
        if login is not None:

            def authenticate(
                server: SMTPServer, session: Session, envelope: Envelope, mechanism: str, data: Any
            ) -> AuthResult:
                ok = (
                    isinstance(data, LoginPassword)
                    and (
                        data.login.decode(),
                        data.password.decode(),
                    )
                    == login
                )
                return AuthResult(success=ok)

            kwargs = {
                "authenticator": authenticate,
                "auth_require_tls": False,
                "auth_required": True,
            }
        chosen = port or free_port()
        controller = Controller(
            inbox,
            hostname="127.0.0.1",
            port=chosen,
            ready_timeout=SOCKET_TIMEOUT,
            server_kwargs=kwargs,
        )
        controller.start()
        started.append(controller)
        inbox.server = MailServer(controller, chosen)
        return inbox.server

    yield start
    for controller in started:
        controller.stop()


# ------------------------------------------------------------------------ stored runs


@pytest.fixture
def stored_run(store: MetricStore) -> Callable[..., RunOutcome]:
    """Store a succeeded run with alerts of the given statuses, or a failed run with ``error``."""

    def make(
        as_of: dt.date, statuses: tuple[str, ...] = ("GREEN",), *, error: str | None = None
    ) -> RunOutcome:
        run_id = store.claim_run(
            MODEL, as_of, score_direction="higher_is_riskier", config_hash="test"
        )
        if error is not None:
            store.fail_run(run_id, error)
            stored = store.run(MODEL, as_of)
            assert stored is not None
            return RunOutcome(MODEL, as_of, "failed", run_id=run_id, error=stored.error)
        alerts = [
            AlertRecord(
                f"rule_{i}",
                status,
                0.1 * i,
                {"amber": 0.1, "red": 0.25},
                f"figure {i} of <income> & co is {status}",
                variable="income" if i else "",
                segment="channel=web" if i > 1 else "",
            )
            for i, status in enumerate(statuses)
        ]
        counts = RunCounts(n_current=100, n_matured=50, n_unmatured=5)
        store.complete_run(run_id, counts=counts, figures=[], alerts=alerts)
        return RunOutcome(
            MODEL,
            as_of,
            "succeeded",
            run_id=run_id,
            alert_status=worst(statuses),
            counts=counts,
            alerts=tuple(alerts),
        )

    return make
