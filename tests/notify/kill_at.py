"""`riskmon run` as a process of its own that kills itself at one step of a run, for the outbox
tests.

Usage: python kill_at.py STEP SIGNAL -- RISKMON-ARGS. STEP is where the process signals itself
(with SIGKILL or SIGTERM, as SIGNAL says), after the run was stored:

- ``stored``: before the report is written;
- ``reported``: after the report, before any notification;
- ``taken``: a delivery taken from the outbox, before it is sent;
- ``sent``: a delivery sent, before it is recorded as sent.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import riskmon.notify._send as send
import riskmon.run as run
from riskmon.cli import main
from riskmon.store import MetricStore


def _dies(signum: int, function: Any) -> Any:
    def dying(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signum)
        return function(*args, **kwargs)  # SIGTERM may be handled: then the call goes on

    return dying


def _dies_after(signum: int, function: Any) -> Any:
    def dying(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        os.kill(os.getpid(), signum)
        return result

    return dying


if __name__ == "__main__":
    step, name, separator, *args = sys.argv[1:]
    assert separator == "--", "usage: kill_at.py STEP SIGNAL -- RISKMON-ARGS"
    signum = signal.Signals[name]
    if step == "stored":
        run._render_report = _dies(signum, run._render_report)  # type: ignore[attr-defined]
    elif step == "reported":
        run.notify_run = _dies(signum, run.notify_run)  # type: ignore[attr-defined]
    elif step == "taken":
        take = MetricStore.take_delivery
        MetricStore.take_delivery = _dies_after(signum, take)  # type: ignore[method-assign]
    elif step == "sent":
        send._send = _dies_after(signum, send._send)  # type: ignore[attr-defined]
    else:
        raise SystemExit(f"unknown step {step!r}")
    sys.argv = ["riskmon", *args]
    main()
