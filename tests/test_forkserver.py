"""The processes of tests/forkserver.py behave as subprocess's do for what the tests use:
arguments, environment, working folder, streams, exit status, signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from . import forkserver

SHOW = """
import os, sys
print(sys.argv[1:], os.getcwd(), os.environ.get("FORKED_VALUE"), sys.path[0] == "")
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def test_a_forked_command_gets_its_arguments_environment_folder_and_exit_status(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "FORKED_VALUE": "seven"}
    done, real = (
        start(
            [sys.executable, "-c", SHOW, "7", "x"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        for start in (forkserver.run, subprocess.run)
    )
    assert (done.returncode, done.stdout, done.stderr) == (7, real.stdout, real.stderr)
    assert done.stdout == f"['7', 'x'] {tmp_path} seven True\n"
    with pytest.raises(subprocess.CalledProcessError):
        forkserver.run([sys.executable, "-c", SHOW, "3"], capture_output=True, check=True)


def test_a_forked_script_and_module_run_as_main(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text("import sys\nprint(__name__, sys.argv[1:])\nraise SystemExit('gone')\n")
    done = forkserver.run(
        [sys.executable, str(script), "a"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "__main__ ['a']\n", "gone\n")
    version = forkserver.run(
        [sys.executable, "-m", "riskmon", "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0
    assert version.stdout.startswith("riskmon, version ")


def test_a_forked_process_is_killed_and_signalled_as_a_process_is(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    waiting = "import signal, sys, time\n" + (
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(5))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    with out.open("wb") as stdout:
        process = forkserver.popen([sys.executable, "-c", waiting], stdout=stdout)
    assert isinstance(process, forkserver.ForkedProcess)
    deadline = time.monotonic() + 60
    while b"ready" not in out.read_bytes():
        assert process.poll() is None
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)
    process.send_signal(signal.SIGTERM)  # the handler the command installed
    assert process.wait(timeout=60) == 5
    sleeper = forkserver.popen([sys.executable, "-c", "import time; time.sleep(60)"])
    os.kill(sleeper.pid, signal.SIGKILL)  # by its PID, as the tests kill
    assert sleeper.wait(timeout=60) == -signal.SIGKILL
    interrupted = forkserver.popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stderr=subprocess.DEVNULL
    )
    time.sleep(0.2)
    interrupted.send_signal(signal.SIGINT)  # KeyboardInterrupt, then the death python dies
    assert interrupted.wait(timeout=60) == -signal.SIGINT


def test_a_command_not_run_by_this_python_is_left_to_subprocess() -> None:
    with forkserver.popen(["true"]) as process:
        assert isinstance(process, subprocess.Popen)
    assert forkserver.run(["sh", "-c", "exit 4"]).returncode == 4
