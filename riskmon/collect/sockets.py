"""What each database driver lets riskmon do to a reading from another thread: cancel its
statement, find the socket under its connection (to shut it down), give it a socket timeout.

Kept apart from :mod:`riskmon.collect.deadline`, which decides *when* to do these things.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from contextlib import suppress
from typing import Any

#: seconds a cancelled statement is given to end before its connection is abandoned (and the
#: most a cancel request itself may take)
CANCEL_SECONDS = 2.0


def canceller(connection: Any) -> Callable[[], None] | None:
    """How to cancel the statement running on a DBAPI connection, from another thread."""
    if connection is None:
        return None
    module = type(connection).__module__.split(".")[0]
    if module == "psycopg":
        cancel_safe = getattr(connection, "cancel_safe", None)  # psycopg 3.2 and newer
        if cancel_safe is None:
            return connection.cancel  # type: ignore[no-any-return]
        return lambda: cancel_safe(timeout=CANCEL_SECONDS)
    if module == "psycopg2":
        return connection.cancel  # type: ignore[no-any-return]
    if module in ("sqlite3", "duckdb", "duckdb_engine"):
        return connection.interrupt  # type: ignore[no-any-return]
    return None


def connection_socket(connection: Any) -> int | None:
    """The descriptor of a DBAPI connection's socket, where riskmon knows how to find it:
    psycopg's and psycopg2's ``fileno()``, PyMySQL's socket, PyHive's Thrift socket."""
    module = type(connection).__module__.split(".")[0]
    sock: Any = None
    if module in ("psycopg", "psycopg2"):
        with suppress(Exception):
            return int(connection.fileno())
    elif module == "pymysql":
        sock = getattr(connection, "_sock", None)
    elif module == "pyhive":
        sock = getattr(thrift_socket(connection), "handle", None)
    if isinstance(sock, socket.socket) and sock.fileno() >= 0:
        return sock.fileno()
    return None


def thrift_socket(connection: Any) -> Any:
    """The ``TSocket`` under a PyHive connection's Thrift transport (SASL or buffered)."""
    transport = getattr(connection, "_transport", None)
    for _ in range(3):  # TSaslClientTransport or TBufferedTransport, then TSocket
        if isinstance(getattr(transport, "handle", None), socket.socket):
            return transport
        inner = getattr(transport, "_trans", None)  # thrift_sasl's
        if inner is None:
            inner = getattr(transport, "_TBufferedTransport__trans", None)
        transport = inner
    return None


def socket_timeout(connection: Any, seconds: float) -> None:
    """A socket timeout for a driver that has no setting for one (PyHive): a read waiting
    longer than the deadline (and the watchdog's own wait) fails."""
    if type(connection).__module__.split(".")[0] == "pyhive":
        tsocket = thrift_socket(connection)
        if tsocket is not None:
            tsocket.setTimeout((seconds + CANCEL_SECONDS + 1) * 1000)


def duplicate_socket(descriptor: int | None) -> socket.socket | None:
    """A socket on a duplicate of ``descriptor``: shutting it down ends the connection's reads,
    and it never reaches a socket the descriptor number is later reused for. (Only ever shut
    down and closed: a timeout set on it would make the driver's socket non-blocking too.)"""
    if descriptor is None:
        return None
    try:
        return socket.socket(fileno=os.dup(descriptor))
    except OSError:
        return None


__all__ = [
    "CANCEL_SECONDS",
    "canceller",
    "connection_socket",
    "duplicate_socket",
    "socket_timeout",
    "thrift_socket",
]
