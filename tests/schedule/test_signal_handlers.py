"""The signal handlers themselves, with real signals sent to this process: the one-shot
commands' (riskmon.cli._signals) and SIGHUP under `riskmon schedule`'s StopSignals."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from riskmon.cli._signals import STOP_SIGNALS, Interrupted, abandoned_on_signal
from riskmon.schedule import StopSignals, stopping

from ..run.sources import wait_for

#: longer than any signal takes to be delivered: a sleep the signal must cut short
NEVER = 30.0

# a signal this process sends itself is handled in its main thread only
pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="the tests run outside the main thread, where no signal handler can be installed",
)


@pytest.mark.parametrize("signum", STOP_SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_stop_signal_exits_128_plus_it_and_restores_the_handlers(
    signum: int, capsys: pytest.CaptureFixture[str]
) -> None:
    @abandoned_on_signal("riskmon run")
    def command() -> None:
        os.kill(os.getpid(), signum)
        time.sleep(NEVER)

    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    with pytest.raises(SystemExit) as stopped:
        command()
    assert stopped.value.code == 128 + signum
    name = signal.Signals(signum).name
    assert f"riskmon run: stopped by {name}: the run in progress" in capsys.readouterr().err
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before


def test_signals_after_the_first_do_not_cut_short_the_recording_of_the_run() -> None:
    recorded = []

    @abandoned_on_signal("riskmon run")
    def command() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(NEVER)
        except Interrupted:  # as riskmon.run records an interrupted run, then re-raises
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # the handler has run by now, and raised nothing
            recorded.append("failed")
            raise

    with pytest.raises(SystemExit) as stopped:
        command()
    assert stopped.value.code == 128 + signal.SIGTERM
    assert recorded == ["failed"]


def test_nothing_is_installed_outside_the_main_thread() -> None:
    outcome: list[object] = []

    def body() -> None:
        with abandoned_on_signal("riskmon run"):
            outcome.append("ran")

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(timeout=NEVER)
    assert outcome == ["ran"]


def test_sighup_under_stop_signals_reloads_from_the_watcher_and_stops_nothing() -> None:
    reloads: list[str] = []
    announced: list[str] = []
    with StopSignals(announced.append, lambda: reloads.append(threading.current_thread().name)):
        os.kill(os.getpid(), signal.SIGHUP)
        wait_for(lambda: len(reloads) == 1, timeout=NEVER, what="the reload")
        assert not stopping.is_set()
        os.kill(os.getpid(), signal.SIGTERM)  # stopping: a later SIGHUP reloads nothing
        wait_for(lambda: len(announced) == 1, timeout=NEVER, what="the stop")
        os.kill(os.getpid(), signal.SIGHUP)
        wait_for(lambda: len(announced) == 2, timeout=NEVER, what="the refusal")
    assert reloads == ["riskmon-stop"]  # the watcher thread, not the signal handler
    assert "not reloading the configuration, the scheduler is stopping" in announced[1]


def test_a_reload_that_raises_leaves_the_watcher_able_to_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tried: list[bool] = []

    def reload() -> None:
        tried.append(True)
        raise RuntimeError("a defect in the reload")

    announced: list[str] = []
    with StopSignals(announced.append, reload):
        os.kill(os.getpid(), signal.SIGHUP)
        wait_for(lambda: tried == [True], timeout=NEVER, what="the reload")
        os.kill(os.getpid(), signal.SIGTERM)
        wait_for(lambda: len(announced) == 1, timeout=NEVER, what="the stop")
    assert announced[0].startswith("SIGTERM: finishing the run in progress")
    assert "SIGHUP: the configuration could not be reloaded" in caplog.text
