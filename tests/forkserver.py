"""`riskmon` processes for the tests, forked from an interpreter that has imported riskmon.

A test that starts ``python -m riskmon ...`` (or a script of the tests that runs riskmon) pays
the interpreter's start and riskmon's imports in every process: one to two seconds of CPU of the
two cores the suite shares, most of what such a process costs. Here one server per test process
imports riskmon and what its commands load, once; each process the tests start is then forked
from it and runs the command as ``python`` would (its own PID, arguments, environment, working
folder, standard streams, signal handlers and exit status), so that killing it, signalling it or
reading what it printed is the same as with :class:`subprocess.Popen`.

:func:`popen` and :func:`run` take the arguments of :class:`subprocess.Popen` and
:func:`subprocess.run` that the tests use; a command other than ``sys.executable -m MODULE``,
``sys.executable SCRIPT.py`` or ``sys.executable -c CODE`` is started by :mod:`subprocess`.
The tests of what a fresh interpreter imports or holds (tests/test_startup.py,
tests/test_cron.py, tests/run/test_heap.py), of the installed entry point (tests/test_cli.py,
tests/test_packaging.py) and of a process limit set before it starts (``preexec_fn``) start
their processes with :mod:`subprocess`.

Run as a script (``python forkserver.py SOCKET``) this is the server: it imports
:data:`PRELOADED`, listens on the Unix socket SOCKET, and for each request forks a watcher,
which forks the command's process, sends its PID, waits for it and sends its exit status. The
server exits when the process that started it is gone, or is stopped by its PID (:func:`stop`).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, TypeAlias

#: the modules the server imports before it forks: what `riskmon run`, `notify`, `schedule`,
#: `backfill`, `report` and `db` load, and the drivers of the databases the tests use
PRELOADED = (
    "riskmon.cli",
    "riskmon.cli.db",
    "riskmon.run",
    "riskmon.notify",
    "riskmon.report",
    "riskmon.schedule",
    "riskmon.store.migrate",
    "alembic.command",
    "psycopg",
    "pymysql",
    "duckdb_engine",
)
#: seconds the server may take to import them and listen
START_TIMEOUT = 120.0
_HEADER = struct.Struct("!I")


# -- the server ---------------------------------------------------------------------------


def _serve(path: str) -> None:
    import importlib

    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the watchers are reaped by the kernel
    import threading

    # forking copies only the thread that forks: the imports must have started none
    assert threading.active_count() == 1, threading.enumerate()
    print("ready", flush=True)
    while os.getppid() == parent:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        connection.settimeout(None)
        request, fds = _receive(connection)
        if os.fork() == 0:
            listener.close()
            _watch(connection, request, fds)  # never returns
        connection.close()
        for fd in fds:
            os.close(fd)


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        more = connection.recv(1 << 16)
        if not more:
            raise EOFError("the request was cut short")
        data += more
    (size,) = _HEADER.unpack_from(data)
    request: dict[str, Any] = json.loads(data[_HEADER.size : _HEADER.size + size])
    return request, list(fds)


def _watch(connection: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """The watcher: fork the command's process, send its PID, then its exit status."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _command(request, fds)  # never returns
        for fd in fds:
            os.close(fd)
        connection.sendall(f"pid {pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        connection.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
        code = 0
    finally:
        os._exit(code)


def _command(request: dict[str, Any], fds: list[int]) -> None:
    """The command's process: what ``python ARGS`` does, from an interpreter already started."""
    code: int = 1
    try:
        for target, fd in enumerate(fds):
            if fd != target:
                os.dup2(fd, target)
        for fd in set(fds) - {0, 1, 2}:
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        _fresh_streams(bool(os.environ.get("PYTHONUNBUFFERED")))
        for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM"):
            signum = signal.Signals[name]
            default = signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL
            signal.signal(signum, default)
        code = _execute(request["argv"])
    except SystemExit as stop:
        code = _exit_code(stop)
    except KeyboardInterrupt:
        import traceback

        traceback.print_exc()
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as python: die of the interrupt
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        _flush()
        os._exit(code)


def _execute(argv: list[str]) -> int:
    import runpy

    option, *rest = argv
    if option == "-m":
        module, *arguments = rest
        sys.argv = [module, *arguments]
        sys.path[0] = os.getcwd()
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    elif option == "-c":
        code, *arguments = rest
        sys.argv = ["-c", *arguments]
        sys.path[0] = ""
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = [option, *rest]
        sys.path[0] = str(Path(option).resolve().parent)
        runpy.run_path(option, run_name="__main__")
    return 0


def _exit_code(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _fresh_streams(unbuffered: bool) -> None:
    """Standard streams over the new descriptors 0-2, buffered as python buffers them."""
    sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False))  # noqa: SIM115
    out = open(1, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
    sys.stdout = io.TextIOWrapper(
        out, line_buffering=os.isatty(1), write_through=unbuffered, errors="strict"
    )
    err = open(2, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(
        err, line_buffering=True, write_through=unbuffered, errors="backslashreplace"
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


# -- the tests' side ----------------------------------------------------------------------


class _Server:
    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="riskmon-fork-")
        self.path = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen(
            [sys.executable, __file__, self.path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready, _, _ = select.select([self.process.stdout], [], [], START_TIMEOUT)
        assert self.process.stdout is not None
        if not ready or self.process.stdout.readline().strip() != "ready":
            self.stop()
            raise RuntimeError(f"the fork server did not start within {START_TIMEOUT} s")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.rmdir(self.folder)


_server: _Server | None = None


def _started() -> _Server:
    global _server
    if _server is None or _server.process.poll() is not None:
        if _server is None:
            atexit.register(stop)
        _server = _Server()
    return _server


def stop() -> None:
    """Stop this test process's server, by its PID (the end of the test session)."""
    global _server
    if _server is not None:
        _server.stop()
        _server = None


def _forkable(args: Sequence[str]) -> bool:
    if len(args) < 2 or args[0] != sys.executable:
        return False
    option = args[1]
    return (option in ("-m", "-c") and len(args) > 2) or (
        option.endswith(".py") and not option.startswith("-")
    )


class ForkedProcess:
    """A command forked from the server, with the part of :class:`subprocess.Popen`'s
    interface the tests use."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        text: bool = False,
    ) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self.stdin = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        opened: list[int] = []  # descriptors of ours to close once sent
        try:
            fds = [
                self._descriptor(stdin, 0, opened, text, reading=True),
                self._descriptor(stdout, 1, opened, text),
            ]
            if stderr == subprocess.STDOUT:
                fds.append(fds[1])
            else:
                fds.append(self._descriptor(stderr, 2, opened, text, name="stderr"))
            request = {
                "argv": self.args[1:],
                "env": dict(os.environ if env is None else env),
                "cwd": str(cwd if cwd is not None else os.getcwd()),
            }
            payload = json.dumps(request).encode()
            self._connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._connection.connect(_started().path)
            socket.send_fds(self._connection, [_HEADER.pack(len(payload)) + payload], fds)
        finally:
            for fd in opened:
                os.close(fd)
        self._replies = b""
        word, pid = self._reply(START_TIMEOUT)
        assert word == "pid", word
        self.pid = int(pid)

    def _descriptor(
        self,
        spec: Any,
        inherited: int,
        opened: list[int],
        text: bool,
        *,
        reading: bool = False,
        name: str = "stdout",
    ) -> int:
        if spec is None:
            return inherited
        if spec == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDONLY if reading else os.O_WRONLY)
            opened.append(fd)
            return fd
        if spec == subprocess.PIPE:
            if reading:
                raise ValueError("a forked process takes no input through a pipe")
            read, write = os.pipe()
            opened.append(write)
            stream = open(read, "r" if text else "rb")  # noqa: SIM115
            setattr(self, name, stream)
            return write
        if isinstance(spec, int):
            return spec
        return int(spec.fileno())

    def _reply(self, timeout: float | None) -> list[str]:
        """The watcher's next line, split; raises TimeoutExpired after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._replies:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._connection], [], [], left)
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            chunk = self._connection.recv(4096)
            if not chunk:
                raise RuntimeError(f"the fork server's watcher of {self.args} ended")
            self._replies += chunk
        line, self._replies = self._replies.split(b"\n", 1)
        return line.decode().split()

    def poll(self) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            word, code = self._reply(timeout)
            assert word == "exit", word
            self.returncode = int(code)
            self._connection.close()
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """What the process printed on its pipes, once it has exited."""
        deadline = None if timeout is None else time.monotonic() + timeout
        streams = [s for s in (self.stdout, self.stderr) if s is not None]
        chunks: dict[int, list[bytes]] = {s.fileno(): [] for s in streams}
        open_fds = set(chunks)
        while open_fds:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select(list(open_fds), [], [], left)
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    open_fds.discard(fd)
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(left)
        results: list[Any] = []
        for stream in (self.stdout, self.stderr):
            if stream is None:
                results.append(None)
                continue
            data = b"".join(chunks[stream.fileno()])
            results.append(data.decode() if isinstance(stream, io.TextIOBase) else data)
            stream.close()
        return results[0], results[1]

    def __enter__(self) -> ForkedProcess:
        return self

    def __exit__(self, *_: object) -> None:
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


#: what :func:`popen` returns
Process: TypeAlias = "subprocess.Popen[Any] | ForkedProcess"


def popen(args: Sequence[str], **kwargs: Any) -> Process:
    """:class:`subprocess.Popen` of ``args``: forked from the server where it runs riskmon."""
    if _forkable(args):
        return ForkedProcess(args, **kwargs)
    return subprocess.Popen(args, **kwargs)


def run(
    args: Sequence[str],
    *,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    text: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:
    """:func:`subprocess.run` of ``args``: forked from the server where it runs riskmon."""
    if not _forkable(args):
        return subprocess.run(
            args, capture_output=capture_output, timeout=timeout, check=check, text=text, **kwargs
        )
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    with ForkedProcess(args, text=text, **kwargs) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    code = process.returncode
    assert code is not None
    if check and code:
        raise subprocess.CalledProcessError(code, process.args, out, err)
    return subprocess.CompletedProcess(process.args, code, out, err)


if __name__ == "__main__":
    _serve(sys.argv[1])
