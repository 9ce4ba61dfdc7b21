"""Real notification servers on 127.0.0.1 — an HTTP webhook and an SMTP server — and runs
stored without a loan source, for the notify tests."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from riskmon.outcome import RunOutcome
from riskmon.records import AlertRecord, RunCounts, Status
from riskmon.store import MetricStore

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
    #: per message: the login it came with (None: none), and whether it came over TLS
    logins: list[str | None] = field(default_factory=list)
    encrypted: list[bool] = field(default_factory=list)


class _Inbox:
    def __init__(self, login: tuple[str, str] | None) -> None:
        self.login = login
        self.server: MailServer | None = None

    def authenticate(
        self, server: SMTPServer, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        # handled=False: aiosmtpd then answers a refusal with 535 itself
        if not isinstance(data, LoginPassword):
            return AuthResult(success=False, handled=False)
        given = (data.login.decode(), data.password.decode())
        ok = given == self.login
        return AuthResult(success=ok, handled=False, auth_data=given[0] if ok else None)

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        assert self.server is not None
        assert isinstance(envelope.content, bytes)
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.server.messages.append(parsed)
        self.server.recipients.append(list(envelope.rcpt_tos))
        self.server.logins.append(session.auth_data if session.authenticated else None)
        transport = server.transport
        assert transport is not None
        self.server.encrypted.append(transport.get_extra_info("ssl_object") is not None)
        return "250 Message accepted"


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (certificate file, key file), made by openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("TLS tests need the openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*request, "-keyout", str(key), "-out", str(cert), *subject],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture
def smtp_server() -> Iterator[Callable[..., MailServer]]:
    """Start SMTP servers; all stopped afterwards.

    ``smtp_server(port=None, login=None, tls=None, implicit_tls=False)``: ``login=(user,
    password)`` offers AUTH and accepts that login only; ``tls=(cert, key)`` offers STARTTLS
    with that certificate and then requires it before AUTH, or with ``implicit_tls`` speaks TLS
    from the first byte (SMTPS). Without TLS, AUTH is offered in the clear but not required
    (aiosmtpd warns about requiring it so).
    """
    started: list[Controller] = []

    def start(
        *,
        port: int | None = None,
        login: tuple[str, str] | None = None,
        tls: tuple[Path, Path] | None = None,
        implicit_tls: bool = False,
    ) -> MailServer:
        inbox = _Inbox(login)
        kwargs: dict[str, Any] = {}
        if login is not None:
            # aiosmtpd only counts STARTTLS as TLS for AUTH; SMTPS is encrypted from the start
            in_tls = tls is not None and not implicit_tls
            kwargs |= {"authenticator": inbox.authenticate, "auth_require_tls": in_tls}
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            kwargs |= {"ssl_context": context} if implicit_tls else {"tls_context": context}
        chosen = port or free_port()
        controller = Controller(
            inbox, hostname="127.0.0.1", port=chosen, ready_timeout=SOCKET_TIMEOUT, **kwargs
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
            alert_status=Status.worst(statuses),
            counts=counts,
            alerts=tuple(alerts),
        )

    return make
