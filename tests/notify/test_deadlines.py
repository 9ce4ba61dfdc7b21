"""A slow channel cannot hold runs up: a webhook server on 127.0.0.1 that answers one byte a
second is cut at each delivery's deadline, a backlog of retries shares the run's bound, and the
next model's run starts within that bound."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from riskmon.config import RiskmonConfig, parse_config
from riskmon.notify import DeliveryTimeout, channel_key, notify_run
from riskmon.notify._webhook import post_json
from riskmon.outcome import RunOutcome
from riskmon.run import run_models
from riskmon.store import MetricStore

from ..collect.loans import load, loan_frame, model_config
from .conftest import MODEL, MailServer

#: the server writes one byte of its answer per this many seconds
SECONDS_PER_BYTE = 1.0
#: its answer: a status line, then headers long enough to take minutes at one byte a second
SLOW_ANSWER = b"HTTP/1.1 200 OK\r\nX-Padding: " + b"." * 200 + b"\r\nContent-Length: 2\r\n\r\nok"
#: how much later than a deadline a delivery (or a run's notifications) may end
SLACK_SECONDS = 1.5
#: how much more than the notifications' bound may pass between one model's stored end and the
#: next one's start: the store's commits and the next run's claim, on a machine that may be
#: running other test processes (4.7 s was seen with a 2 s bound); the delivery timeout it is
#: told apart from is 30 s
BETWEEN_RUNS_SLACK_SECONDS = 6.0
#: upper bound on stopping the server's threads
JOIN_TIMEOUT = 10.0
#: each delivery's deadline in the backlog test: the slow webhook is cut at it, and the e-mail
#: that must still get through has this long for a whole SMTP exchange with the test's server, on
#: a machine that may be running other test processes (1.5 s was once not enough there)
BACKLOG_DELIVERY_TIMEOUT = 5.0
#: that test's shared bound on a run's notifications: one missed deadline, then the e-mail
BACKLOG_RUN_TIMEOUT = 12.0
AS_OF = dt.date(2025, 3, 31)


@dataclass
class SlowServer:
    """An HTTP server on 127.0.0.1 that reads a request, then answers one byte a second."""

    listener: socket.socket
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    connections: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/services/slow"

    def serve(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            thread = threading.Thread(target=self._answer, args=(connection,))
            thread.start()
            self.threads.append(thread)

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(JOIN_TIMEOUT)
            try:
                connection.recv(65536)  # the request (its length does not matter here)
                for byte in SLOW_ANSWER:
                    connection.sendall(bytes([byte]))
                    if self.stop.wait(SECONDS_PER_BYTE):
                        return
            except OSError:  # the client gave up: what this server is for
                return


@pytest.fixture
def slow_server() -> Iterator[SlowServer]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = SlowServer(listener)
    acceptor = threading.Thread(target=server.serve)
    acceptor.start()
    yield server
    server.stop.set()
    acceptor.join(JOIN_TIMEOUT)
    for thread in server.threads:
        thread.join(JOIN_TIMEOUT)
    listener.close()
    assert not acceptor.is_alive()
    assert not any(t.is_alive() for t in server.threads)


def _config(
    loans: str, tmp_path: Path, *, models: dict[str, list[dict[str, str]]], **notifications: float
) -> RiskmonConfig:
    documents = []
    for name, notify in models.items():
        model = model_config(loans, performance_window="2 months", notify=notify)
        documents.append({**model.model_dump(mode="json", by_alias=True), "name": name})
    return parse_config(
        {
            "store": {"reports_dir": str(tmp_path / "reports")},
            "notifications": notifications,
            "models": documents,
        },
        source="test",
    )


def test_a_webhook_answering_one_byte_a_second_is_cut_at_its_deadline(
    slow_server: SlowServer,
) -> None:
    started = time.monotonic()
    with pytest.raises(DeliveryTimeout, match=r"no complete answer from the webhook within 2 s"):
        post_json(slow_server.url, {"text": "hello"}, timeout=2.0)
    elapsed = time.monotonic() - started
    assert 2.0 <= elapsed < 2.0 + SLACK_SECONDS


def test_the_retried_backlog_shares_the_run_bound_and_other_channels_still_hear(
    slow_server: SlowServer,
    smtp_server: Callable[..., MailServer],
    stored_run: Callable[..., RunOutcome],
    store: MetricStore,
    tmp_path: Path,
) -> None:
    mail = smtp_server()
    config = _config(
        "sqlite:///unused.db",
        tmp_path,
        models={
            MODEL: [
                {"webhook": slow_server.url, "notify_on": "always"},
                {"email": "risk@example.com", "notify_on": "always"},
            ]
        },
        delivery_timeout_seconds=BACKLOG_DELIVERY_TIMEOUT,
        run_timeout_seconds=BACKLOG_RUN_TIMEOUT,
    )
    config = config.model_copy(update={"smtp": config.smtp.model_copy(update={"port": mail.port})})
    model = config.models[0]
    hook = channel_key(model.notify[0])
    # three earlier runs whose webhook notification failed: the backlog retried first
    for day in (dt.date(2024, 12, 31), dt.date(2025, 1, 31), dt.date(2025, 2, 28)):
        earlier = stored_run(day, ("RED",))
        assert earlier.run_id is not None
        store.record_delivery(earlier.run_id, hook, error="HTTP 503")
    current = stored_run(AS_OF, ("RED",))

    started = time.monotonic()
    attempts = notify_run(config, model, current, store)
    elapsed = time.monotonic() - started

    assert elapsed < BACKLOG_RUN_TIMEOUT + SLACK_SECONDS
    # the channel that missed its deadline is not tried again within this run's notifications
    assert slow_server.connections == 1
    webhook = [a for a in attempts if a.channel == hook]
    assert len(webhook) == 4
    assert all(not a.ok for a in webhook)
    assert f"within {BACKLOG_DELIVERY_TIMEOUT:g} s" in (webhook[0].error or "")
    assert all("not attempted" in (a.error or "") for a in webhook[1:])
    (mailed,) = [a for a in attempts if a.channel != hook]
    assert mailed.ok, mailed.error
    assert len(mail.messages) == 1
    # every webhook notification is still owed, and is sent again after the next run
    assert len([d for d in store.failed_deliveries(MODEL) if d.channel == hook]) == 4


def test_a_slow_channel_delays_the_next_models_run_by_at_most_the_bound(
    slow_server: SlowServer, store: MetricStore, tmp_path: Path
) -> None:
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load(loans, loan_frame(seed=3, n=3000))
    slow = [{"webhook": slow_server.url, "notify_on": "always"}]
    config = _config(
        loans,
        tmp_path,
        models={"first": slow, "second": []},
        delivery_timeout_seconds=30.0,
        run_timeout_seconds=2.0,
    )

    outcomes = run_models(config, [], AS_OF, store=store, report=False)

    assert [o.status for o in outcomes] == ["succeeded", "succeeded"]
    first, second = store.run("first", AS_OF), store.run("second", AS_OF)
    assert first is not None
    assert second is not None
    assert first.finished_at is not None
    assert second.started_at is not None
    waited = (second.started_at - first.finished_at).total_seconds()
    assert waited < 2.0 + BETWEEN_RUNS_SLACK_SECONDS
    assert slow_server.connections == 1
