"""The outbox: a run's notifications are queued with the run, so a process killed at any step
after storing it loses none of them — the next process sends each once.

Each test runs `riskmon run` as a process that kills itself (SIGKILL, or SIGTERM) at one step
(tests/notify/kill_at.py), then starts the next process — `riskmon notify --pending`, or the
model's next run — and counts what a real webhook server on 127.0.0.1 received.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from riskmon.store import MetricStore

from .. import forkserver
from ..run.sources import AS_OF, MODEL, config_of, load_loans, loans_model, write_config
from .conftest import HookServer

KILL_AT = Path(__file__).with_name("kill_at.py")
PROCESS_TIMEOUT = 120
#: the notifications' shared deadline in these tests, long enough for a loaded machine: a
#: delivery left "sending" by a killed process stays taken this long plus the margin, which
#: holds it across the start of a new process (importing riskmon can take seconds)
LONG_RUN_TIMEOUT = 60.0
#: the deadline a test switches to once it wants a taken delivery free again soon: a process
#: judges a delivery stale by its own configuration, after this plus the margin
SHORT_RUN_TIMEOUT = 4.0
#: how long after a delivery was taken it is stale under SHORT_RUN_TIMEOUT, with a half-second
#: to spare
SHORT_STALE_AFTER = SHORT_RUN_TIMEOUT + 5.5
NEXT = dt.date(2025, 4, 1)


def _setup(
    tmp_path: Path, hook: HookServer, store_url: str, run_timeout: float = LONG_RUN_TIMEOUT
) -> Path:
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load_loans(loans)
    model = loans_model(loans, notify=[{"webhook": hook.url(), "notify_on": "always"}])
    document = config_of(store_url, [model])
    document["notifications"] = {
        "delivery_timeout_seconds": run_timeout,
        "run_timeout_seconds": run_timeout,
    }
    document["store"]["reports_dir"] = str(tmp_path / "reports")
    path = tmp_path / "riskmon.yaml"
    write_config(path, document)
    return path


def _shorten_run_timeout(config: Path) -> None:
    """Rewrite ``config`` with SHORT_RUN_TIMEOUT, for the processes that start after this."""
    document = yaml.safe_load(config.read_text(encoding="utf-8"))
    document["notifications"] = {
        "delivery_timeout_seconds": SHORT_RUN_TIMEOUT,
        "run_timeout_seconds": SHORT_RUN_TIMEOUT,
    }
    write_config(config, document)


def _riskmon(config: Path, *args: str, kill_at: tuple[str, str] | None = None) -> int:
    prefix = [str(KILL_AT), *kill_at, "--"] if kill_at else ["-m", "riskmon"]
    child = forkserver.run(
        [sys.executable, *prefix, "-c", str(config), *args],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )
    return child.returncode


def _states(store: MetricStore, as_of: dt.date) -> tuple[list[str], set[str]]:
    run = store.run(MODEL, as_of)
    assert run is not None
    assert run.status == "succeeded"
    return [d.state for d in store.deliveries(run.id)], {
        a.notify_state for a in store.alerts(run.id)
    }


@pytest.mark.parametrize(
    ("step", "signum"),
    [
        ("stored", "SIGKILL"),
        ("stored", "SIGTERM"),
        ("reported", "SIGKILL"),
        ("taken", "SIGKILL"),
    ],
)
def test_a_run_killed_before_it_notified_leaves_its_notification_to_the_next_process(
    tmp_path: Path,
    hook_server: Callable[..., HookServer],
    store_url: str,
    store: MetricStore,
    step: str,
    signum: str,
) -> None:
    hook = hook_server()
    config = _setup(tmp_path, hook, store_url)

    code = _riskmon(config, "run", "--as-of", str(AS_OF), kill_at=(step, signum))
    taken = time.monotonic()

    assert code in (-signal.Signals[signum], 128 + signal.Signals[signum]), code
    assert hook.requests == []
    owed = "sending" if step == "taken" else "pending"
    assert _states(store, AS_OF) == ([owed], {"pending"})  # stored, and owed
    if step == "taken":  # taken by the killed process: free again once its deadline is past
        _shorten_run_timeout(config)
        time.sleep(max(0.0, SHORT_STALE_AFTER - (time.monotonic() - taken)))

    assert _riskmon(config, "notify", "--pending") == 0
    assert len(hook.requests) == 1
    assert hook.requests[0].body["riskmon"]["as_of"] == AS_OF.isoformat()
    assert hook.requests[0].body["riskmon"]["late"] is True
    assert _states(store, AS_OF) == (["sent"], {"sent"})
    assert _riskmon(config, "notify", "--pending") == 0
    assert len(hook.requests) == 1  # sent once


def test_the_models_next_run_sends_what_a_killed_run_owed_first(
    tmp_path: Path,
    hook_server: Callable[..., HookServer],
    store_url: str,
    store: MetricStore,
) -> None:
    hook = hook_server()
    config = _setup(tmp_path, hook, store_url)
    _riskmon(config, "run", "--as-of", str(AS_OF), kill_at=("stored", "SIGKILL"))

    assert _riskmon(config, "run", "--as-of", str(NEXT)) == 0

    sent = [(r.body["riskmon"]["as_of"], r.body["riskmon"]["late"]) for r in hook.requests]
    assert sent == [(AS_OF.isoformat(), True), (NEXT.isoformat(), False)]
    assert _states(store, AS_OF) == (["sent"], {"sent"})
    assert _states(store, NEXT) == (["sent"], {"sent"})


def test_a_process_killed_after_sending_before_recording_sends_again_never_never(
    tmp_path: Path,
    hook_server: Callable[..., HookServer],
    store_url: str,
    store: MetricStore,
) -> None:
    hook = hook_server()
    config = _setup(tmp_path, hook, store_url)
    _riskmon(config, "run", "--as-of", str(AS_OF), kill_at=("sent", "SIGKILL"))
    taken = time.monotonic()
    assert len(hook.requests) == 1
    assert _states(store, AS_OF) == (["sending"], {"pending"})

    assert _riskmon(config, "notify", "--pending") == 0  # still taken: not sent again yet
    assert time.monotonic() - taken < LONG_RUN_TIMEOUT, "the machine was too slow to tell"
    assert len(hook.requests) == 1
    _shorten_run_timeout(config)  # the next process takes it again once it is stale to it
    time.sleep(max(0.0, SHORT_STALE_AFTER - (time.monotonic() - taken)))
    assert _riskmon(config, "notify", "--pending") == 0

    # the one case a channel hears of a run twice: whether the message left before the kill
    # cannot be known; the alternative would be to risk that it never hears of it
    assert len(hook.requests) == 2
    assert _states(store, AS_OF) == (["sent"], {"sent"})


def test_a_date_that_succeeded_is_not_computed_or_notified_again(
    tmp_path: Path,
    hook_server: Callable[..., HookServer],
    store_url: str,
    store: MetricStore,
) -> None:
    hook = hook_server()
    config = _setup(tmp_path, hook, store_url)
    assert _riskmon(config, "run", "--as-of", str(AS_OF)) == 0
    first = store.run(MODEL, AS_OF)
    assert first is not None
    assert len(hook.requests) == 1

    assert _riskmon(config, "run", "--as-of", str(AS_OF)) == 0  # done already: exit 0

    again = store.run(MODEL, AS_OF)
    assert again is not None
    assert again.started_at == first.started_at
    assert len(hook.requests) == 1
    assert _riskmon(config, "run", "--as-of", str(AS_OF), "--force") == 0
    assert len(hook.requests) == 1  # computed again, the same status: nobody told twice
    recomputed = store.run(MODEL, AS_OF)
    assert recomputed is not None
    assert recomputed.started_at > first.started_at


def test_a_delivery_just_queued_by_a_live_process_is_left_to_it(
    tmp_path: Path, hook_server: Callable[..., HookServer], store_url: str, store: MetricStore
) -> None:
    # another process stored a run and is writing its report: its message is its own to send,
    # on time, not another process's to send "late" (perhaps before the report exists)
    from riskmon.config import load_config
    from riskmon.notify import send_pending
    from riskmon.records import RunCounts

    hook = hook_server()
    config = load_config(_setup(tmp_path, hook, store_url))
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as alive:
        try:
            owner = f"{socket.gethostname()}:{alive.pid}"
            run_id = store.claim_run(
                MODEL, AS_OF, score_direction="higher_is_riskier", config_hash="h", owner=owner
            )
            counts = RunCounts(n_current=1, n_matured=1, n_unmatured=0)
            key = f"webhook:{hashlib.sha256(hook.url().encode()).hexdigest()[:12]}"
            store.complete_run(run_id, counts=counts, figures=[], owner=owner, notify=[key])
            assert send_pending(config, store) == []
            assert hook.requests == []
        finally:
            alive.kill()
    (attempt,) = send_pending(config, store)  # its process is gone: owed to whoever comes
    assert attempt.ok
    assert len(hook.requests) == 1
