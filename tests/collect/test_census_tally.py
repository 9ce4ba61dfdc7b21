"""The census of a categorical's last bin counted off the rows of the statements that grouped it
on its text (``packed`` where the engine's collation compares text exactly) equals the census
its own statement reads, and spares that statement."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from riskmon.collect import Source, collect
from riskmon.records import LevelCensus

from .loans import CURRENT, load, loan_frame, model_config, statements_with
from .test_collect import STRATEGIES_BY_DIALECT, request

#: levels of the current window the baseline never had: X01 to X14, level k on about k // 2 + 2
#: loans (ties, some across the 10 named), besides the region "W" the binning leaves out too
NEW_LEVELS = 14


def _close(a: LevelCensus, b: LevelCensus) -> bool:
    """The same levels, loans and levels in all; weights within 1e-12 (summed in another
    order)."""
    return (
        a.n_levels == b.n_levels
        and [(c.level, c.n) for c in a.levels] == [(c.level, c.n) for c in b.levels]
        and np.allclose([c.weight for c in a.levels], [c.weight for c in b.levels], rtol=1e-12)
    )


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_the_census_counted_off_the_rows_equals_its_statement(
    database: tuple[str, str], weighted: bool
) -> None:
    dialect, url = database
    frame = loan_frame(seed=23, n=4000, weighted=weighted)
    current = frame.index[frame["score_date"].between(*CURRENT)].to_numpy(copy=True)
    rng = np.random.default_rng(23)
    rng.shuffle(current)
    start = 0
    for k in range(1, NEW_LEVELS + 1):
        size = k // 2 + 2
        frame.loc[current[start : start + size], "region"] = f"X{k:02d}"
        start += size
    load(url, frame)
    req = dataclasses.replace(
        request(weighted=weighted), census=("region", "grade"), census_population="current"
    )
    censuses = {}
    with Source(model_config(url, weighted=weighted)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            with statements_with(source.engine, "OVER ()") as seen:  # census statements
                collected = collect(source, req, strategy=strategy)
            censuses[strategy] = collected.levels
            # the region's census counted off the rows where packed grouped it on its text;
            # the grade's bins merge two levels: it is grouped on its bin, its census read
            by_text = strategy == "packed" and dialect == "postgresql"
            assert len(seen) == (1 if by_text else 2), strategy
    region = censuses["union_all"]["region"]
    assert region.n_levels == NEW_LEVELS + 1  # X01..X14 and W
    assert len(region.levels) == 10
    assert [c.level for c in region.levels[:2]] == ["W", "X14"]
    grade = censuses["union_all"]["grade"]
    assert grade.n_levels == 1  # grade 5
    for strategy, levels in censuses.items():
        assert set(levels) == {"region", "grade"}, strategy
        for name in levels:
            assert _close(levels[name], censuses["union_all"][name]), (strategy, name)
