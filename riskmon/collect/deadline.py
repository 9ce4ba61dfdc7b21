"""riskmon's own wall-clock deadline on every source read, beside the server's statement timeout.

A server's statement timeout ends a statement the server is running; it cannot end one whose
server has stopped answering (a frozen backend or proxy, a network that drops packets without a
word): the driver then waits on its socket for ever, and the run with it. So each reading of a
source is watched (:class:`ReadWatch`): connecting, each statement from its start until the
next one starts, and each chunk of a streamed result (:func:`progressed`) has
``source.read_deadline_seconds``. When it passes, a watchdog thread cancels the statement where
the driver can (PostgreSQL's cancel request, DuckDB's and SQLite's interrupt), gives it
:data:`CANCEL_SECONDS`, then shuts down the connection's socket, waking the thread blocked on
it: the reading fails with the deadline error, its connection invalidated, never reused nor
waited on. A connection is opened in a helper thread (over the network), abandoned at the
deadline.

A reading whose thread does not come back even so (a driver whose socket riskmon cannot reach)
stays *overdue* (:func:`overdue`): the run's heartbeat stops refreshing its claim, so that
another process may take the run over once the claim has gone stale.
"""

from __future__ import annotations

import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from sqlalchemy import Connection, Dialect, Engine, event
from sqlalchemy.exc import DisconnectionError

from riskmon.collect.sockets import (
    CANCEL_SECONDS,
    canceller,
    connection_socket,
    duplicate_socket,
    socket_timeout,
    thrift_socket,
)

#: seconds past its deadline after which a reading still running stops its run's heartbeat
OVERDUE_GRACE_SECONDS = 30.0
#: engines that run inside riskmon's process: opened in the reading's own thread
IN_PROCESS = frozenset({"sqlite", "duckdb"})
#: marks a pooled connection opened for the current checkout: it needs no ping
_FRESH = "riskmon_fresh"
#: the engines :func:`watch_engine` has put under the deadline
_watched_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


class ReadOverdue(Exception):
    """A reading passed its deadline while riskmon was connecting for it."""


class ReadWatch:
    """The deadline of one reading: ``seconds`` from its start and from each statement's."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._connection: Any = None  # the DBAPI connection being read, once there is one
        self._socket: socket.socket | None = None  # a duplicate of its socket's descriptor
        self._canceller: threading.Thread | None = None
        self.fired = False  # the watchdog acted
        self.cancelled = False  # the driver took the cancel request
        self.abandoned = False  # the connection's socket was shut down

    def remaining(self) -> float:
        """Seconds left to the current statement (or to connecting), 0 once past."""
        with self._lock:
            return max(0.0, self._at - time.monotonic())

    @property
    def expired(self) -> bool:
        """The deadline has passed (whether or not the watchdog has acted yet)."""
        return self.fired or self.remaining() <= 0

    def overdue(self, grace: float) -> bool:
        """Still running ``grace`` seconds past the deadline."""
        with self._lock:
            return not self._ended.is_set() and time.monotonic() > self._at + grace

    def statement_started(self) -> None:
        """A statement starts: it has the whole deadline (unless the watchdog already acted)."""
        with self._lock:
            if not self.fired:
                self._at = time.monotonic() + self.seconds

    def attach(self, dbapi_connection: Any) -> None:
        """The DBAPI connection this reading uses: the one the watchdog cancels and abandons."""
        if dbapi_connection is self._connection:
            return
        socket_timeout(dbapi_connection, self.seconds)
        sock = duplicate_socket(connection_socket(dbapi_connection))
        with self._lock:
            old, self._socket, self._connection = self._socket, sock, dbapi_connection
            if sock is not None and self.fired and not self._ended.is_set():
                # attached after the deadline passed: nobody else will wake it
                self.abandoned = True
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        if old is not None:
            old.close()

    def describe(self) -> str:
        """What riskmon did at the deadline, in words."""
        if self.abandoned:
            first = "cancelled it and " if self.cancelled else ""
            return f"riskmon {first}abandoned its connection"
        if self.cancelled:
            return "riskmon cancelled it"
        return "riskmon stopped waiting for it"

    def settle(self) -> None:
        """Let a cancel request in flight end (at most :data:`CANCEL_SECONDS`) before the
        connection is closed under it."""
        canceller = self._canceller
        if canceller is not None:
            canceller.join(CANCEL_SECONDS)

    def close_leftovers(self) -> None:
        """Close what a driver's ``close()`` leaves open of an abandoned connection: PyHive's
        Thrift socket, which it closes only once the server has closed the session."""
        if type(self._connection).__module__.split(".")[0] == "pyhive":
            tsocket = thrift_socket(self._connection)
            if tsocket is not None:
                with suppress(Exception):
                    tsocket.close()

    # ------------------------------------------------------------------ the watchdog
    def watch(self) -> None:
        """The watchdog's loop: until the reading ends, act when a deadline passes."""
        while not self._ended.wait(self.remaining()):
            if self.remaining() <= 0:
                self._fire()
                return

    def end(self) -> None:
        """The reading is over: the watchdog stops, and no socket is shut down after this."""
        with self._lock:
            self._ended.set()
            sock, self._socket = self._socket, None
        if sock is not None:
            sock.close()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            connection = self._connection
        try:
            cancel = canceller(connection)
        except Exception:  # a driver riskmon cannot cancel on: the socket is still shut down
            cancel = None
        if cancel is not None:
            self._canceller = threading.Thread(
                target=self._cancel, args=(cancel,), name="riskmon-cancel", daemon=True
            )
            self._canceller.start()
            if self._ended.wait(CANCEL_SECONDS):
                return
        with self._lock:
            if self._ended.is_set() or self._socket is None:
                return
            self.abandoned = True
            # shutdown, not close: it wakes the thread blocked on the socket, whose descriptor
            # stays the driver's to close
            with suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)

    def _cancel(self, cancel: Callable[[], None]) -> None:
        try:
            cancel()
        except Exception:  # the server did not take it: the connection is abandoned anyway
            return
        self.cancelled = True


# ---------------------------------------------------------------------- readings by thread
_active: dict[int, list[ReadWatch]] = {}
_active_lock = threading.Lock()


@contextmanager
def watching(seconds: float) -> Iterator[ReadWatch]:
    """A reading of the calling thread under a deadline of ``seconds``, watched meanwhile."""
    watch = ReadWatch(seconds)
    thread = threading.get_ident()
    with _active_lock:
        _active.setdefault(thread, []).append(watch)
    watchdog = threading.Thread(target=watch.watch, name="riskmon-read-deadline", daemon=True)
    watchdog.start()
    try:
        yield watch
    finally:
        watch.end()
        watchdog.join()
        with _active_lock:
            _active[thread].remove(watch)
            if not _active[thread]:
                del _active[thread]


def current() -> ReadWatch | None:
    """The innermost reading of the calling thread, if any."""
    with _active_lock:
        watches = _active.get(threading.get_ident())
        return watches[-1] if watches else None


def progressed() -> None:
    """The calling thread's reading made progress — a chunk of a streamed result arrived — so
    its deadline starts again: the deadline bounds a wait for the source, not a long read."""
    watch = current()
    if watch is not None:
        watch.statement_started()


def overdue(thread: int, grace: float = OVERDUE_GRACE_SECONDS) -> bool:
    """Whether a reading of ``thread`` is still running ``grace`` seconds past its deadline."""
    with _active_lock:
        watches = list(_active.get(thread, ()))
    return any(w.overdue(grace) for w in watches)


def release(connection: Connection, watch: ReadWatch) -> None:
    """End a reading: its transaction rolled back and the connection back to the pool; one
    whose deadline passed is invalidated instead, never reused nor waited on."""
    if watch.expired:
        watch.settle()
        with suppress(Exception):
            connection.invalidate()
        with suppress(Exception):
            connection.close()
        watch.close_leftovers()
        return
    try:
        connection.rollback()
    finally:
        connection.close()


# ---------------------------------------------------------------------- an engine's connections
def watch_engine(engine: Engine) -> None:
    """Put ``engine``'s connections under the deadline of the reading that uses them: opening
    one (over the network: in a helper thread), the ping of a pooled one (which replaces the
    pool's own pre-ping, so that it too is watched), and each statement's start."""
    if engine in _watched_engines:
        return
    _watched_engines.add(engine)
    dialect = engine.dialect
    if dialect.name not in IN_PROCESS:
        event.listen(engine, "do_connect", _connect)
    event.listen(engine, "connect", _opened)
    event.listen(engine, "checkout", lambda conn, record, _proxy: _checkout(dialect, conn, record))
    event.listen(engine, "before_cursor_execute", _statement)


def _connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
    watch = current()
    if watch is None:
        return None  # not a reading: connected as usual
    connection = connect_within(lambda: dialect.connect(*cargs, **cparams), watch.remaining())
    watch.attach(connection)
    return connection


def _opened(_dbapi_connection: Any, record: Any) -> None:
    record.info[_FRESH] = True


def _checkout(dialect: Dialect, dbapi_connection: Any, record: Any) -> None:
    watch = current()
    if watch is not None:
        watch.attach(dbapi_connection)
    if record.info.pop(_FRESH, False):
        return
    try:
        dialect.do_ping(dbapi_connection)
    except Exception as exc:
        if watch is not None and watch.expired:
            raise ReadOverdue("the pooled connection did not answer its ping") from None
        # a connection the server dropped: the pool opens another
        raise DisconnectionError(f"ping failed: {type(exc).__name__}") from exc


def _statement(*_args: Any) -> None:
    watch = current()
    if watch is not None:
        watch.statement_started()


def connect_within(connect: Callable[[], Any], seconds: float) -> Any:
    """``connect()``'s connection, made in a helper thread and waited for ``seconds``;
    :class:`ReadOverdue` after that, the helper left to close what it may still open."""
    done = threading.Event()
    lock = threading.Lock()
    made: dict[str, Any] = {}

    def target() -> None:
        try:
            connection = connect()
        except BaseException as exc:  # handed to the waiting thread
            made["error"] = exc
        else:
            with lock:
                made["connection"] = connection
                if made.get("abandoned"):
                    with suppress(Exception):
                        connection.close()
        done.set()

    helper = threading.Thread(target=target, name="riskmon-connect", daemon=True)
    helper.start()
    if not done.wait(seconds):
        with lock:
            made["abandoned"] = True
            late = made.get("connection")
        if late is None:
            raise ReadOverdue("no connection was made")
        return late
    if "error" in made:
        raise made["error"]
    return made["connection"]


__all__ = [
    "CANCEL_SECONDS",
    "OVERDUE_GRACE_SECONDS",
    "ReadOverdue",
    "ReadWatch",
    "connect_within",
    "current",
    "overdue",
    "release",
    "watch_engine",
    "watching",
]
