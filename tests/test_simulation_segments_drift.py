"""The book of tests/test_simulation_segments.py with 20 segments drifting from July: the
Benjamini-Hochberg control still turns them RED (a module of its own, another test worker)."""

from __future__ import annotations

import pytest

from riskmon.records import Status

from .test_simulation_segments import (
    DRIFTED,
    MONTH_ENDS,
    Year,
    _book,
    _year,
)


@pytest.fixture(scope="module")
def drifting(tmp_path_factory: pytest.TempPathFactory) -> Year:
    """June (before the drift) and December (six months into it); a run's PSI reads no other
    run."""
    folder = tmp_path_factory.mktemp("drifting")
    return _year(
        folder,
        _book(drift=True),
        "controlled",
        months=(MONTH_ENDS[5], MONTH_ENDS[-1]),
        multiple_testing="benjamini_hochberg",
    )


@pytest.mark.slow
def test_the_control_still_turns_a_drifted_segment_red(drifting: Year) -> None:
    december = drifting[MONTH_ENDS[-1]]
    psi = {a.segment: a for a in december if a.rule == "psi" and a.segment}
    drifted = [psi[f"channel={s}"] for s in DRIFTED]
    others = [a for segment, a in psi.items() if segment.removeprefix("channel=") not in DRIFTED]
    red_drifted = sum(a.status == Status.RED for a in drifted)
    print(f"\nDecember, PSI RED in {red_drifted} of {len(drifted)} drifted segments")
    assert red_drifted >= 0.8 * len(drifted)
    assert sum(a.status == Status.RED for a in others) <= 1
    # before the drift, June: no segment is RED on its PSI
    june = drifting[MONTH_ENDS[5]]
    assert [a for a in june if a.rule == "psi" and a.status == Status.RED] == []
