"""A population none of whose loans is left out is read without testing each loan's score and
weight again (:func:`riskmon.collect.exclusions.known_usable`), where the engine's reading sees
one snapshot: the same tables and exclusions as where every statement tests them, and as the
in-memory reference."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import Column, Date, Float, Integer, MetaData, String, Table, event

from riskmon.collect import CollectedTables, Source, Strategy, collect
from riskmon.collect.engines import DUCKDB, MYSQL, POSTGRESQL, SQLITE
from riskmon.collect.exclusions import known_usable
from riskmon.collect.request import CollectRequest, Population
from riskmon.collect.selection import QueryColumns, statement_groups
from riskmon.collect.warehouses import SPARK
from riskmon.plan import DateWindow
from riskmon.records import Exclusions

from .loans import CURRENT, load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, VARIABLES, WEIGHT_RTOL, expected_tables

WIDE = DateWindow(dt.date(2025, 1, 1), dt.date(2025, 3, 31))


def _request(*, weighted: bool) -> CollectRequest:
    """The current window and a wider one holding it: they overlap, so each is read by
    statements of its own."""
    return CollectRequest(
        populations=[
            Population("current", DateWindow(*CURRENT), labeled=False),
            Population("wide", WIDE, labeled=True),
        ],
        variables=VARIABLES,
        score_date="score_date",
        label="bad",
        weight="exposure" if weighted else None,
        segments=("channel",),
        census=("region", "grade"),
        census_population="current",
        score="pd_score",
        exclude_invalid=True,
        id="loan_id",
    )


def _tests_the_score(statement: str) -> bool:
    """Whether a statement's ``WHERE`` tests the score (``finite``: a ``BETWEEN``), not only
    the score dates."""
    return any("BETWEEN" in where.upper() for where in re.split(r"\bWHERE\b", statement)[1:])


#: a statement's text, and the windows its bound dates open: "current", "wide" or both
Read = tuple[str, frozenset[str]]


def _collect(
    url: str, strategy: Strategy, req: CollectRequest, *, one_snapshot: bool = True
) -> tuple[CollectedTables, list[Read]]:
    """What ``req`` collects, and the statements reading the loans with the windows they
    read (known by the first day of each, bound as a parameter)."""
    starts = {p.window.start.isoformat(): p.name for p in req.populations}
    seen: list[Read] = []

    def record(_conn: object, _cursor: object, statement: str, parameters: Any, *_: object) -> None:
        if "SCORE_DATE" not in statement.upper():
            return
        values = parameters.values() if isinstance(parameters, dict) else parameters
        days = {str(v)[:10] for v in values}
        seen.append((statement, frozenset(name for day, name in starts.items() if day in days)))

    with Source(model_config(url, weighted=req.weight is not None)) as source:
        source.profile = dataclasses.replace(source.profile, one_snapshot=one_snapshot)
        event.listen(source.engine, "before_cursor_execute", record)
        try:
            collected = collect(source, req, strategy=strategy)
        finally:
            event.remove(source.engine, "before_cursor_execute", record)
    return collected, seen


def _expected_exclusions(frame: pd.DataFrame, req: CollectRequest) -> dict[str, Exclusions]:
    out = {}
    for population in req.populations:
        rows = frame[frame["score_date"].map(population.window.__contains__)]
        null = rows["pd_score"].isna()
        w = rows["exposure"] if req.weight else pd.Series(1.0, index=rows.index)
        invalid = ~null & (w.isna() | (w < 0))
        used = rows[~null & (w > 0)]
        out[population.name] = Exclusions(
            read=len(rows),
            null_score=int(null.sum()),
            invalid_weight=int(invalid.sum()) if req.weight else 0,
            duplicates=int(used.duplicated(["loan_id", "score_date"]).sum()),
        )
    return out


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_a_window_nothing_is_left_out_of_is_read_without_testing_its_loans(
    database: tuple[str, str], weighted: bool
) -> None:
    """The current window's loans are all usable; the wide window's hold loans without a score
    (and with a negative weight) outside the current window. Every strategy: the current
    window's statements do not test the score, the wide window's do, and the tables and
    exclusions are the in-memory reference's, as where every statement tests the loans."""
    dialect, url = database
    frame = loan_frame(seed=29, weighted=weighted)
    twice = frame.sample(n=30, random_state=29)  # repeats, counted among the used
    frame = pd.concat([frame, twice], ignore_index=True)
    outside = ~frame["score_date"].map(DateWindow(*CURRENT).__contains__)
    outside &= frame["score_date"].map(WIDE.__contains__)
    rng = np.random.default_rng(29)
    frame.loc[outside & (rng.random(len(frame)) < 0.05), "pd_score"] = np.nan
    if weighted:
        frame.loc[outside & (rng.random(len(frame)) < 0.05), "exposure"] = -1.0
    load(url, frame)
    req = _request(weighted=weighted)
    usable = frame["pd_score"].notna() & ((frame["exposure"] > 0) if weighted else True)
    expected = expected_tables(frame[usable], req)
    exclusions = _expected_exclusions(frame, req)
    assert exclusions["current"].used == exclusions["current"].read
    assert exclusions["wide"].used < exclusions["wide"].read
    assert exclusions["current"].duplicates
    assert exclusions["wide"].duplicates
    for strategy in STRATEGIES_BY_DIALECT[dialect]:
        rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
        untested, seen = _collect(url, strategy, req)
        tested, seen_checked = _collect(url, strategy, req, one_snapshot=False)
        for collected in (untested, tested):
            assert collected.exclusions == exclusions, strategy
            tables = collected.tables
            assert set(tables) == set(expected), strategy
            for key, table in expected.items():
                assert tables[key].equals(table, rtol=rtol), (strategy, key)
        # every statement reads one window (they overlap): the current window's census too
        assert all(len(windows) == 1 for _, windows in [*seen, *seen_checked]), strategy
        assert [w for _, w in seen] == [w for _, w in seen_checked], strategy
        assert sum(w == {"current"} for _, w in seen) > sum(w == {"wide"} for _, w in seen) > 1
        # each window's statements but its count of loans left out test the loans where every
        # statement tests them; else only the wide window's do
        for reads, untested_window in ((seen_checked, None), (seen, "current")):
            for window in ("current", "wide"):
                statements = [sql for sql, w in reads if w == {window}]
                tests = [_tests_the_score(sql) for sql in statements]
                expected_tests = 0 if window == untested_window else len(statements) - 1
                assert sum(tests) == expected_tests, (strategy, window, untested_window)


def test_only_a_window_nothing_is_left_out_of_goes_untested() -> None:
    """Per statement group: the loans are tested unless every population of the group had
    none left out; an engine without one snapshot for a reading tests them everywhere."""
    loans = Table(
        "loans",
        MetaData(),
        Column("score_date", Date),
        *(Column(n, Float) for n in ("pd_score", "exposure", "income")),
        *(Column(n, String) for n in ("region", "grade", "channel")),
        Column("bad", Integer),
        Column("loan_id", Integer),
    )
    req = _request(weighted=True)
    clean, dirty = Exclusions(read=10), Exclusions(read=10, null_score=1)
    assert clean.used == clean.read
    assert dirty.used < dirty.read
    for profile in (POSTGRESQL, MYSQL, SQLITE, DUCKDB):
        checked = known_usable(req, {"current": clean, "wide": dirty}, profile)
        assert checked.all_usable == {"current"}
        usable = {
            group[0].name: QueryColumns(loans, checked, group).usable
            for group in statement_groups(checked)
        }
        assert usable["current"] == []
        assert len(usable["wide"]) == 3
    assert known_usable(req, {"current": clean, "wide": clean}, SPARK) is req
    empty = Exclusions(read=0)
    assert known_usable(req, {"current": empty}, POSTGRESQL).all_usable == {"current"}
