"""A TCP forwarder on 127.0.0.1, run as its own process, for tests that freeze a source.

``python tcp_proxy.py PORT`` listens on a free loopback port, prints it on one line, then
forwards every connection to 127.0.0.1:PORT, both ways, until it is killed or
:data:`LIFETIME_SECONDS` pass. A test freezes it with SIGSTOP — its clients' sockets stay open
and the kernel keeps accepting their bytes, but nothing answers: a source that stopped
answering — and ends it with SIGCONT and SIGKILL, by its PID (:class:`Proxy`).
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

#: the proxy ends by itself after this long, whatever its test did
LIFETIME_SECONDS = 300.0


class Proxy:
    """A forwarder process in front of 127.0.0.1:``port``, ended by its PID on exit."""

    def __init__(self, port: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(port)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def freeze(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Thaw and kill the proxy, by its PID, and reap it (again: nothing)."""
        if self.process.returncode is not None:
            return
        with suppress(ProcessLookupError):
            self.thaw()
            self.process.kill()
        self.process.wait(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve(target: int) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    peers: dict[socket.socket, socket.socket] = {}
    ends = time.monotonic() + LIFETIME_SECONDS
    while time.monotonic() < ends:
        for key, _ in selector.select(timeout=1.0):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is listener:
                client, _address = listener.accept()
                server = socket.create_connection(("127.0.0.1", target))
                peers[client], peers[server] = server, client
                selector.register(client, selectors.EVENT_READ)
                selector.register(server, selectors.EVENT_READ)
                continue
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            other = peers.get(sock)
            if data and other is not None:
                with suppress(OSError):
                    other.sendall(data)
                continue
            for end in (sock, other):
                if end is not None and end in peers:
                    selector.unregister(end)
                    del peers[end]
                    end.close()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
