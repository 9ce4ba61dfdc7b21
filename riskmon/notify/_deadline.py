"""Deadlines for notifications: a total time for one delivery, and for all of a run's.

A socket timeout bounds each operation, not their sum: a server that answers one byte a second
never trips a 10 s timeout, and holds a run for as long as it likes. A :class:`Deadline` bounds
the sum. Connecting waits at most what is left of it; once it passes, a watchdog thread shuts
down every socket the delivery opened (:meth:`Deadline.watch`), which ends the read or write
blocked on it at once, and the delivery fails with :class:`DeliveryTimeout`.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from riskmon.notify._delivery import DeliveryError


class DeliveryTimeout(DeliveryError):
    """A delivery did not finish within its deadline (or none was left to start it)."""


class Deadline:
    """A moment, ``seconds`` from now, no later than ``within``'s."""

    def __init__(self, seconds: float, *, within: Deadline | None = None) -> None:
        if within is not None:
            seconds = min(seconds, within.remaining())
        #: how long it allowed, for messages
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.fired = False

    def remaining(self) -> float:
        """Seconds left, 0 once it has passed."""
        return max(0.0, self.at - time.monotonic())

    @property
    def passed(self) -> bool:
        return self.remaining() <= 0

    def timeout(self, per_operation: float) -> float:
        """A socket timeout that ends by the deadline; :class:`DeliveryTimeout` if none is left."""
        left = self.remaining()
        if left <= 0:
            raise DeliveryTimeout(f"the {self.seconds:.3g} s deadline had passed before it started")
        return min(per_operation, left)

    def watch(self, sock: socket.socket | None) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it already has)."""
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    @contextmanager
    def enforced(self) -> Iterator[Deadline]:
        """While in the block, a watchdog shuts the watched sockets down at the deadline."""
        watchdog = threading.Timer(self.remaining(), self._fire)
        watchdog.daemon = True
        watchdog.start()
        try:
            yield self
        finally:
            watchdog.cancel()
            watchdog.join()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    # shutdown, not close: it wakes a thread blocked in recv or send on the socket
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
