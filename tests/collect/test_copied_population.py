"""A population that is a copy of another over the same window (a freeze's baseline beside its
development window: :attr:`riskmon.collect.request.Population.copy_of`) is not read again: its
tables, row counts, PD sums, exclusions and census are those a reading of its own gives, on
every engine and strategy, and the loans are read by half the statements."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from riskmon.collect import CollectedTables, Source, Strategy, collect
from riskmon.collect.request import CollectRequest, PdSource, Population, Variable
from riskmon.metrics import Binning
from riskmon.plan import DateWindow
from riskmon.records import ALL

from .loans import PERFORMANCE, load, loan_frame, model_config, statements_with
from .test_collect import STRATEGIES_BY_DIALECT, VARIABLES, WEIGHT_RTOL

WINDOW = DateWindow(*PERFORMANCE)
GRADES = Binning("numeric", edges=(0.02, 0.05, 0.1, 0.2))


def _request(*, weighted: bool, copy: bool) -> CollectRequest:
    """The development window (labeled) and the baseline over the same window (unlabeled),
    read itself or as a copy of the development's rows; PD sums on the grades, a census of
    the baseline's unseen levels, loans without a score left out and counted."""
    return CollectRequest(
        populations=[
            Population("baseline", WINDOW, labeled=False, copy_of="development" if copy else None),
            Population("development", WINDOW, labeled=True),
        ],
        variables=[*VARIABLES, Variable("pd_grade", "pd_score", GRADES, sums=True)],
        score_date="score_date",
        label="bad",
        weight="exposure" if weighted else None,
        segments=("channel",),
        pd=PdSource("pd_score"),
        census=("region", "grade"),
        census_population="baseline",
        score="pd_score",
        exclude_invalid=True,
        id="loan_id",
    )


def _collect(
    url: str, strategy: Strategy, req: CollectRequest
) -> tuple[CollectedTables, Counter[str]]:
    """What ``req`` collects, and how many statements read the loans: the census of a
    variable's levels (one per variable, whatever the populations) and the others."""
    model = model_config(url, weighted=req.weight is not None)
    with Source(model) as source, statements_with(source.engine, "SCORE_DATE") as seen:
        collected = collect(source, req, strategy=strategy)
    return collected, Counter("census" if "n_levels" in sql else "others" for sql in seen)


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_a_copied_population_counts_what_a_reading_of_its_own_counts(
    database: tuple[str, str], weighted: bool
) -> None:
    dialect, url = database
    frame = loan_frame(seed=31, weighted=weighted)
    twice = frame.sample(n=25, random_state=31)  # repeats of an id and score date, counted
    frame = pd.concat([frame, twice], ignore_index=True)
    rng = np.random.default_rng(31)
    frame.loc[rng.random(len(frame)) < 0.03, "pd_score"] = np.nan  # left out and counted
    load(url, frame)
    copied_request, own_request = (_request(weighted=weighted, copy=c) for c in (True, False))
    for strategy in STRATEGIES_BY_DIALECT[dialect]:
        rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
        copied, copied_statements = _collect(url, strategy, copied_request)
        own, own_statements = _collect(url, strategy, own_request)
        assert copied.equals(own, rtol=rtol), strategy
        assert {k[0] for k in copied.tables} == {"baseline", "development"}
        assert {k[0] for k in copied.pd_tables} == {"baseline", "development"}
        # the copy is the unlabeled population it stands for, not the development's tables
        assert copied.table("baseline", "score").n_bads is None
        assert copied.table("development", "score").n_bads is not None
        assert copied.counts[("baseline", ALL)] == copied.counts[("development", ALL)]
        assert copied.counts[("baseline", ALL)].n_unlabeled > 0  # loans without a label
        assert copied.exclusions == own.exclusions, strategy
        assert copied.exclusions["baseline"].null_score > 0
        assert copied.exclusions["baseline"].duplicates > 0
        assert copied.levels == own.levels, strategy
        assert copied.windows == own.windows
        # each window is read once, not once per population
        assert copied_statements["census"] == own_statements["census"], strategy
        assert 2 * copied_statements["others"] == own_statements["others"], strategy
        assert copied_statements["others"] >= 3  # counts left out, repeats, the tables


def test_a_copy_is_of_a_population_read_over_the_same_window() -> None:
    other = DateWindow(WINDOW.start, WINDOW.end + dt.timedelta(days=1))
    base = _request(weighted=False, copy=True)
    for populations in (
        [Population("baseline", other, labeled=False, copy_of="development")],
        [Population("baseline", WINDOW, labeled=False, copy_of="elsewhere")],
        [
            Population("baseline", WINDOW, labeled=False, copy_of="twice"),
            Population("twice", WINDOW, labeled=False, copy_of="development"),
        ],
    ):
        with pytest.raises(ValueError, match="population 'baseline' is a copy of"):
            dataclasses.replace(
                base, populations=[*populations, Population("development", WINDOW, True)]
            )
    read = base.read()
    assert [p.name for p in read.populations] == ["development"]
    assert read.census_population == "development"
    assert base.copies() == {"development": ["baseline"]}
    own = _request(weighted=False, copy=False)
    assert own.read() is own
