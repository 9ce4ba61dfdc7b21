"""The demo stores and renders exactly what its reference snapshot holds.

``tests/golden/demo.json.gz`` is a snapshot (see :mod:`tests.golden.snapshot`) of every run,
figure, bin, alert and baseline the demo stores, and of every report page it writes. A
difference is either a regression or a deliberate change, listed in CHANGES.md with its
reason; after such a change, ``python -m tests.golden.snapshot FOLDER`` rewrites the snapshot
from a demo built in FOLDER.
"""

from __future__ import annotations

import difflib
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


@pytest.mark.slow
@pytest.mark.parametrize("table", TABLES)
def test_the_demo_stores_what_it_stored_before(
    taken: dict[str, Any], golden: dict[str, Any], table: str
) -> None:
    now, before = taken[table], golden[table]
    missing = [row for row in before if row not in now]
    added = [row for row in now if row not in before]
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
