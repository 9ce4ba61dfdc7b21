"""What the imports left is set aside from the garbage collector's walks once per process, at
the first run; what runs allocate after is collected as before."""

from __future__ import annotations

import datetime as dt
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


def test_a_run_sets_the_imports_aside(monkeypatch: pytest.MonkeyPatch, store: MetricStore) -> None:
    calls: list[str] = []
    monkeypatch.setattr(riskmon.run, "set_aside_imports", lambda: calls.append("set aside"))
    config = parse_config({"models": []}, source="test", env={})
    assert riskmon.run.run_models(config, [], dt.date(2024, 1, 31), store=store, report=False) == []
    assert calls == ["set aside"]
