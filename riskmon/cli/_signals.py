"""Stop signals in the one-shot commands (``riskmon run``, ``riskmon backfill``).

SIGTERM, SIGINT (Ctrl-C) and SIGHUP abandon the run in progress and end the command with exit
code 128 + the signal number, saying so on stderr. A one-shot command has no configuration to
reload, so SIGHUP (its terminal closed, say) stops it as SIGTERM does.

The handler raises :class:`Interrupted`, a :class:`KeyboardInterrupt`, in the main thread,
where the runs execute: :func:`~riskmon.run.run_model` records the run it interrupts as failed
("interrupted before it finished") before letting it through, a PostgreSQL source cancels its
query, and no further model or date is started. Signals received after the first are ignored,
so that a second Ctrl-C cannot cut short the recording of the first and leave the run
"running" in the store until its claim goes stale. (``riskmon schedule`` has its own signals:
:class:`riskmon.schedule.StopSignals`.)
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

#: the signals that stop a one-shot command
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal reached a one-shot command: its run in progress is abandoned."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"{signal.Signals(signum).name} received")
        self.signum = signum


@contextmanager
def abandoned_on_signal(command: str) -> Iterator[None]:
    """While in the block, a stop signal abandons the run in progress and exits 128 + signal.

    Also a decorator (of a click command's function, below its ``pass_obj``). Outside the main
    thread, where no signal handler can be installed, the signals are left as they are.

    Parameters
    ----------
    command
        How the command is named on stderr, as ``riskmon run``.
    """
    received: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            raise Interrupted(signum)

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        previous = {signum: signal.signal(signum, handle) for signum in STOP_SIGNALS}
    try:
        yield
    except Interrupted as exc:
        click.echo(
            f"{command}: stopped by {signal.Signals(exc.signum).name}: the run in progress, if "
            f'any, is recorded as failed ("interrupted before it finished"); no other was started',
            err=True,
        )
        raise SystemExit(128 + exc.signum) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
