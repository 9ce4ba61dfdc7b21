"""What the imports left is set aside from the garbage collector's walks once per process, at
the first run; what runs allocate after is collected as before. The collector paused for the
imports runs again once they are set aside. (The ``riskmon`` command's use of both:
tests/test_startup.py.) The same first call fixes glibc's allocator thresholds, so that memory
a run frees goes back to the system."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
import sys

import pytest

import riskmon.run
from riskmon.config import parse_config
from riskmon.store import MetricStore

PROBE = """
import gc, weakref
from riskmon.heap import set_aside_imports

class Node:
    pass

before = gc.get_freeze_count()
first = set_aside_imports()
frozen = gc.get_freeze_count()
second = set_aside_imports()
cycle = Node()
cycle.me = cycle
alive = weakref.ref(cycle)
del cycle
gc.collect()
print(before, first, frozen, second, gc.get_freeze_count(), alive() is None)
"""


def test_the_objects_alive_at_the_first_call_are_frozen_once_and_later_cycles_collected() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True)
    before, first, frozen, second, after, collected = done.stdout.split()
    assert (before, first, second, collected) == ("0", "True", "False", "True")
    assert int(frozen) > 1_000  # what the interpreter has imported
    assert after == frozen  # the second call froze nothing more


PAUSED = """
import gc
from riskmon.heap import pause_for_imports, set_aside_imports

pause_for_imports()
paused = not gc.isenabled()
import riskmon.run
still = not gc.isenabled()
set_aside_imports()
resumed = gc.isenabled()
pause_for_imports()  # once set aside, a pause is not taken again
print(paused, still, resumed, gc.isenabled())
"""

DISABLED = """
import gc
from riskmon.heap import pause_for_imports, set_aside_imports

gc.disable()  # the program's own choice
pause_for_imports()
set_aside_imports()
print(gc.isenabled())
"""


def test_the_collector_paused_for_the_imports_resumes_once_they_are_set_aside() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PAUSED], check=True, capture_output=True, text=True
    )
    assert done.stdout.split() == ["True", "True", "True", "True"]


def test_a_collector_the_program_switched_off_stays_off() -> None:
    done = subprocess.run(
        [sys.executable, "-c", DISABLED], check=True, capture_output=True, text=True
    )
    assert done.stdout.split() == ["False"]


def test_a_run_sets_the_imports_aside(monkeypatch: pytest.MonkeyPatch, store: MetricStore) -> None:
    calls: list[str] = []
    monkeypatch.setattr(riskmon.run, "set_aside_imports", lambda: calls.append("set aside"))
    config = parse_config({"models": []}, source="test", env={})
    assert riskmon.run.run_models(config, [], dt.date(2024, 1, 31), store=store, report=False) == []
    assert calls == ["set aside"]


# glibc raises its mmap threshold to the size of a mapped block once it is freed: the 8 MiB
# block below lifts it so that, left alone, the 200 blocks of 256 KiB come from the heap, where
# the one kept on top holds the 49 MiB freed below it
GIVEN_BACK = """
import sys
from riskmon.heap import set_aside_imports

def rss_mib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))

big = bytearray(8 << 20)
del big
if sys.argv[1] == "run":
    set_aside_imports()
before = rss_mib()
blocks = [bytearray(256 << 10) for _ in range(200)]
kept = blocks[-1]
del blocks
print(rss_mib() - before)
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="the thresholds are glibc's; other C libraries keep their own policy",
)
def test_memory_a_run_frees_goes_back_to_the_system_after_the_first_call() -> None:
    def kept_mib(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", GIVEN_BACK, mode], check=True, capture_output=True, text=True
        )
        return int(done.stdout)

    assert kept_mib("alone") >= 40  # the allocator's own policy keeps what was freed
    assert kept_mib("run") <= 5
