"""The demo stores and renders exactly what its reference snapshot holds.

``tests/golden/demo.json.gz`` is a snapshot (see :mod:`tests.golden.snapshot`) of every run,
figure, bin, alert and baseline the demo stores, and of every report page it writes. A
difference is either a regression or a deliberate change, listed in CHANGES.md with its
reason; after such a change, ``python -m tests.golden.snapshot FOLDER`` rewrites the snapshot
from a demo built in FOLDER.
"""

from __future__ import annotations

import difflib
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from .golden import snapshot


@pytest.fixture(scope="module")
def taken(demo: tuple[Path, str]) -> dict[str, Any]:
    return snapshot.take(demo[0])


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return snapshot.read()


TABLES = (
    "runs",
    "figures",
    "bin_stats",
    "alerts",
    "baseline_figures",
    "baseline_variables",
    "baseline_bins",
)


#: floats agree to this relative tolerance: numpy, scipy and pandas releases reorder sums and
#: change a figure's last digits (1e-16), which is not a change of behaviour
RTOL = 1e-9


def _close(a: Any, b: Any) -> bool:
    """Equal, floats (at any depth of dicts and lists) to :data:`RTOL`."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-300)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _skeleton(row: Any) -> str:
    """A row with its floats blanked: rows that can only differ in their floats share it."""
    if isinstance(row, float):
        return "f"
    if isinstance(row, dict):
        return "{" + ",".join(f"{k}:{_skeleton(v)}" for k, v in sorted(row.items())) + "}"
    if isinstance(row, list):
        return "[" + ",".join(_skeleton(v) for v in row) + "]"
    return repr(row)


def unmatched(before: list[Any], now: list[Any]) -> tuple[list[Any], list[Any]]:
    """The rows of ``before`` with no equal row in ``now`` (floats to :data:`RTOL`), and the
    rows of ``now`` left over."""
    exact = {json.dumps(r, sort_keys=True) for r in now}
    missing = [r for r in before if json.dumps(r, sort_keys=True) not in exact]
    known = {json.dumps(r, sort_keys=True) for r in before}
    added = [r for r in now if json.dumps(r, sort_keys=True) not in known]
    candidates: dict[str, list[Any]] = defaultdict(list)
    for row in added:
        candidates[_skeleton(row)].append(row)
    left: list[Any] = []
    for row in missing:
        pool = candidates[_skeleton(row)]
        match = next((i for i, other in enumerate(pool) if _close(row, other)), None)
        if match is None:
            left.append(row)
        else:
            pool.pop(match)
    return left, [r for pool in candidates.values() for r in pool]


def test_rows_differing_in_their_last_digits_match_and_others_do_not() -> None:
    before = [{"v": 0.7131357785622630, "p": {"ci": [0.1, 0.2]}}, {"v": 1.0, "name": "a"}]
    now = [
        {"v": 0.7131357785622628, "p": {"ci": [0.1, 0.2000000000000001]}},
        {"v": 1.1, "name": "a"},
    ]
    missing, added = unmatched(before, now)
    assert missing == [{"v": 1.0, "name": "a"}]
    assert added == [{"v": 1.1, "name": "a"}]


@pytest.mark.slow
@pytest.mark.parametrize("table", TABLES)
def test_the_demo_stores_what_it_stored_before(
    taken: dict[str, Any], golden: dict[str, Any], table: str
) -> None:
    now, before = taken[table], golden[table]
    missing, added = unmatched(before, now)
    assert (missing[:3], added[:3]) == ([], []), f"{len(missing)} rows changed in {table}"
    assert len(now) == len(before)


@pytest.mark.slow
def test_the_demo_reports_are_what_they_were(taken: dict[str, Any], golden: dict[str, Any]) -> None:
    now, before = taken["reports"], golden["reports"]
    assert sorted(now) == sorted(before)
    for name in sorted(before):
        if now[name] != before[name]:
            diff = difflib.unified_diff(
                before[name].splitlines(), now[name].splitlines(), "before", "now", lineterm=""
            )
            pytest.fail(f"report {name} changed:\n" + "\n".join(list(diff)[:40]))
