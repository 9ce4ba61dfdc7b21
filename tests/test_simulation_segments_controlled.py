"""The healthy book of tests/test_simulation_segments.py, its year with Benjamini-Hochberg:
few RED runs, none under ``consecutive: 2``, no portfolio RED (a module of its own, so that
another test worker runs it beside the year with the default thresholds)."""

from __future__ import annotations

import pytest

from riskmon.records import Status

from .test_simulation_segments import (
    MAX_FALSE_RED_RUNS_CONTROLLED,
    SEGMENT_RULES,
    Year,
    _book,
    _judged,
    _red_runs,
    _red_runs_consecutive,
    _year,
)


@pytest.fixture(scope="module")
def controlled(tmp_path_factory: pytest.TempPathFactory) -> Year:
    folder = tmp_path_factory.mktemp("healthy")
    return _year(folder, _book(drift=False), "controlled", multiple_testing="benjamini_hochberg")


@pytest.mark.slow
def test_benjamini_hochberg_leaves_a_healthy_model_over_200_segments_few_red_runs(
    controlled: Year,
) -> None:
    controlled_red = [a for a in _judged(controlled) if a.status == Status.RED]
    print(
        f"Benjamini-Hochberg: {len(controlled_red)} RED segment alerts; "
        f"runs RED {_red_runs(controlled)} of 12"
    )
    assert _red_runs(controlled) <= MAX_FALSE_RED_RUNS_CONTROLLED
    # a false alarm rarely strikes one segment two months in a row
    consecutive = _red_runs_consecutive(controlled)
    print(f"and consecutive: 2: runs RED {consecutive} of 12")
    assert consecutive == 0
    # the whole portfolio's own rules see no drift either
    portfolio = [a for alerts in controlled.values() for a in alerts if not a.segment]
    assert [a for a in portfolio if a.status == Status.RED and a.rule in SEGMENT_RULES] == []
