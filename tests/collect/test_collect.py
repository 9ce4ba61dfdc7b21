"""Pushdown, streaming and the in-memory functions give the same count tables and figures,
on every database."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine, text

from riskmon.collect import (
    ALL,
    CollectedTables,
    CollectRequest,
    Population,
    Source,
    Variable,
    collect,
    pushdown,
)
from riskmon.collect.aggregate import Aggregate
from riskmon.collect.checks import check_cells
from riskmon.errors import SourceError
from riskmon.metrics import (
    Binning,
    CountTable,
    fit_binning,
    ks_statistic,
    ks_statistic_from_counts,
    population_stability_index,
    population_stability_index_from_counts,
    roc_auc,
    roc_auc_from_counts,
)
from riskmon.plan import DateWindow
from riskmon.records import Exclusions

from .loans import CURRENT, PERFORMANCE, load, loan_frame, model_config

SCORE_BINS = Binning("numeric", edges=(0.1, 0.15, 0.2, 0.3, 0.4))
INCOME_BINS = Binning("numeric", edges=(35.0, 45.0, 50.0, 55.0, 65.0))
REGION_BINS = Binning("categorical", levels=(("N",), ("S",), ("E",)))  # "W" is unseen
GRADE_BINS = Binning("categorical", levels=(("1",), ("2",), ("3", "4")))  # 5 is unseen

VARIABLES = [
    Variable("score", "pd_score", SCORE_BINS),
    Variable("score_values", "pd_score"),
    Variable("income", "income", INCOME_BINS),
    Variable("region", "region", REGION_BINS),
    Variable("grade", "grade", GRADE_BINS),
]
STRATEGIES_BY_DIALECT = {
    "sqlite": ["stream", "packed", "union_all", "per_variable"],
    "postgresql": ["packed", "grouping_sets", "union_all", "per_variable", "stream"],
    "duckdb": ["packed", "grouping_sets", "union_all", "per_variable", "stream"],
    "mysql": ["packed", "union_all", "per_variable", "stream"],
}
#: relative tolerance on summed weights: MariaDB's text protocol sends doubles rounded to
#: about 15 digits, so weights summed from streamed rows differ from the server's own sums
WEIGHT_RTOL = {"mysql": 1e-9}


def request(*, weighted: bool = True, segments: tuple[str, ...] = ("channel",)) -> CollectRequest:
    return CollectRequest(
        populations=[
            Population("current", DateWindow(*CURRENT), labeled=False),
            Population("performance", DateWindow(*PERFORMANCE), labeled=True),
        ],
        variables=VARIABLES,
        score_date="score_date",
        label="bad",
        weight="exposure" if weighted else None,
        segments=segments,
    )


def fitted_on(frame: pd.DataFrame, req: CollectRequest, n_bins: int) -> CollectRequest:
    """``req`` with its binned variables' bins fitted on ``frame`` itself, so that edges fall
    exactly on stored values (ties at the edges)."""
    variables = [
        v
        if v.binning is None
        else dataclasses.replace(
            v,
            binning=fit_binning(
                frame[v.column].astype(object).where(frame[v.column].notna(), None),
                kind=v.binning.kind,
                n_bins=n_bins,
            ),
        )
        for v in req.variables
    ]
    return dataclasses.replace(req, variables=variables)


def expected_tables(
    frame: pd.DataFrame, req: CollectRequest
) -> dict[tuple[str, str, str], CountTable]:
    """The count tables computed in memory, straight from the loans."""
    out: dict[tuple[str, str, str], CountTable] = {}
    for population in req.populations:
        in_window = frame["score_date"].map(population.window.__contains__)
        rows = frame[in_window]
        subsets: list[tuple[str, pd.DataFrame]] = [(ALL, rows)]
        for column in req.segments:
            for value, part in rows.groupby(rows[column].fillna("\0"), dropna=False):
                key = f"{column} IS NULL" if value == "\0" else f"{column}={value}"
                subsets.append((key, part))
        for segment, part in subsets:
            if population.labeled:
                part = part[part["bad"].notna()]
            y = part["bad"].to_numpy(dtype=int) if population.labeled else None
            w = part[req.weight].to_numpy() if req.weight else None
            for variable in req.variables:
                values = part[variable.column]
                if variable.binning is None:
                    table = (
                        CountTable.from_scores(y, values, sample_weight=w)
                        if population.labeled
                        else CountTable.from_values(values, sample_weight=w)
                    )
                else:
                    index = variable.binning.assign(
                        values.astype(object).where(values.notna(), None)
                    )
                    table = CountTable.from_bins(index, variable.binning, y, sample_weight=w)
                out[(population.name, variable.name, segment)] = table
    return out


def _collect_all(
    url: str, dialect: str, req: CollectRequest, weighted: bool
) -> dict[str, CollectedTables]:
    with Source(model_config(url, weighted=weighted)) as source:
        return {s: collect(source, req, strategy=s) for s in STRATEGIES_BY_DIALECT[dialect]}


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_every_strategy_matches_the_in_memory_tables(
    database: tuple[str, str], weighted: bool
) -> None:
    dialect, url = database
    frame = loan_frame(seed=7, weighted=weighted)
    load(url, frame)
    req = request(weighted=weighted)
    expected = expected_tables(frame, req)
    results = _collect_all(url, dialect, req, weighted)
    for strategy, collected in results.items():
        assert set(collected.tables) == set(expected), strategy
        for key, table in expected.items():
            got = collected.tables[key]
            rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
            assert got.equals(table, rtol=rtol), (strategy, key, got.to_frame(), table.to_frame())


@pytest.mark.parametrize("cells", [1, 35, 49, 1225])
def test_packs_of_every_size_match_the_in_memory_tables(
    database: tuple[str, str], cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``packed`` with every variable alone, and with the packs of
    :func:`test_packs_keep_request_order_and_respect_the_cell_limit`."""
    _, url = database
    monkeypatch.setattr(pushdown, "PACK_CELLS", cells)
    frame = loan_frame(seed=11)
    load(url, frame)
    req = request()
    expected = expected_tables(frame, req)
    with Source(model_config(url)) as source:
        collected = collect(source, req, strategy="packed")
    assert set(collected.tables) == set(expected)
    for key, table in expected.items():
        assert collected.tables[key].equals(table, rtol=1e-12), (key, cells)


def test_packs_keep_request_order_and_respect_the_cell_limit() -> None:
    def names(cells: int) -> list[list[str]]:
        return [[v.name for v in pack] for pack in pushdown.packs(VARIABLES, cells)]

    # score 7 bins, score_values raw (alone, leaving the open pack open), income 7, region 5,
    # grade 5
    assert names(49) == [["score", "income"], ["score_values"], ["region", "grade"]]
    assert names(7 * 7 * 5 * 5) == [["score", "income", "region", "grade"], ["score_values"]]
    assert names(35) == [["score"], ["score_values"], ["income", "region"], ["grade"]]
    assert names(6) == [[v.name] for v in VARIABLES]  # only the 5-bin variables fit; no two
    assert names(4) == [[v.name] for v in VARIABLES]  # every binning larger than the limit
    assert pushdown.packs([]) == []


def test_row_counts_of_matured_and_unmatured_loans(database: tuple[str, str]) -> None:
    dialect, url = database
    frame = loan_frame(seed=3)
    load(url, frame)
    in_perf = frame["score_date"].map(lambda d: d in DateWindow(*PERFORMANCE))
    in_curr = frame["score_date"].map(lambda d: d in DateWindow(*CURRENT))
    for collected in _collect_all(url, dialect, request(), True).values():
        performance = collected.counts[("performance", ALL)]
        assert performance.n_rows == int(in_perf.sum())
        assert performance.n_unlabeled == int((in_perf & frame["bad"].isna()).sum())
        assert collected.counts[("current", ALL)].n_rows == int(in_curr.sum())
        web = collected.counts[("performance", "channel=web")]
        assert web.n_rows == int((in_perf & (frame["channel"] == "web")).sum())


def test_figures_from_collected_tables_equal_the_array_functions(database: tuple[str, str]) -> None:
    dialect, url = database
    frame = loan_frame(seed=11)
    load(url, frame)
    perf = frame[
        frame["score_date"].map(lambda d: d in DateWindow(*PERFORMANCE)) & frame["bad"].notna()
    ]
    curr = frame[frame["score_date"].map(lambda d: d in DateWindow(*CURRENT))]
    y, s, w = (
        perf["bad"].to_numpy(dtype=int),
        perf["pd_score"].to_numpy(),
        perf["exposure"].to_numpy(),
    )
    auc = float(roc_auc(y, s, sample_weight=w))
    ks = float(ks_statistic(y, s, sample_weight=w))
    psi = float(
        population_stability_index(
            perf["income"],
            curr["income"],
            binning=INCOME_BINS,
            expected_weight=perf["exposure"],
            actual_weight=curr["exposure"],
        )
    )
    for strategy, collected in _collect_all(url, dialect, request(), True).items():
        scores = collected.table("performance", "score_values")
        assert float(roc_auc_from_counts(scores)) == pytest.approx(auc, abs=1e-12), strategy
        assert float(ks_statistic_from_counts(scores)) == pytest.approx(ks, abs=1e-12), strategy
        got_psi = population_stability_index_from_counts(
            collected.table("performance", "income").unlabeled(),
            collected.table("current", "income"),
        )
        assert float(got_psi) == pytest.approx(psi, abs=1e-12), strategy


def test_overlapping_windows_count_a_loan_in_both_populations(database: tuple[str, str]) -> None:
    dialect, url = database
    frame = loan_frame(seed=5)
    load(url, frame)
    wide = DateWindow(dt.date(2025, 1, 1), dt.date(2025, 3, 31))
    req = CollectRequest(
        populations=[
            Population("current", DateWindow(*CURRENT), labeled=False),
            Population("baseline", wide, labeled=False),
        ],
        variables=VARIABLES[:1],
        score_date="score_date",
        label="bad",
        segments=(),
    )
    for collected in _collect_all(url, dialect, req, True).values():
        n_current = collected.counts[("current", ALL)].n_rows
        n_wide = collected.counts[("baseline", ALL)].n_rows
        assert n_current == int(frame["score_date"].map(lambda d: d in DateWindow(*CURRENT)).sum())
        assert n_wide == int(frame["score_date"].map(lambda d: d in wide).sum())
        assert n_wide > n_current > 0


def test_an_empty_window_gives_empty_tables(database: tuple[str, str]) -> None:
    dialect, url = database
    load(url, loan_frame(seed=1))
    req = CollectRequest(
        populations=[
            Population("current", DateWindow(dt.date(2030, 1, 1), dt.date(2030, 1, 31)), False)
        ],
        variables=VARIABLES,
        score_date="score_date",
        label="bad",
    )
    for collected in _collect_all(url, dialect, req, False).values():
        assert collected.counts[("current", ALL)].n_rows == 0
        assert collected.table("current", "score").n_total.sum() == 0


def _frame_with(seed: int, **changes: Any) -> pd.DataFrame:
    frame = loan_frame(seed=seed, n=400)
    for column, values in changes.items():
        frame[column] = values
    return frame


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"bad": pd.array([2] * 400, dtype="Int64")},
            r"column 'bad' \(columns.label\): expected label values 0, 1 or NULL, got \[2\]",
        ),
        (
            {"exposure": [-1.0] * 400},
            r"column 'exposure' \(columns.weight\): expected non-negative",
        ),
        (
            {"pd_score": [np.nan, *([0.2] * 399)]},
            r"column 'pd_score' \(columns.score\): expected a score on every loan",
        ),
    ],
)
def test_bad_values_name_the_model_and_column(
    database: tuple[str, str], changes: dict[str, Any], message: str
) -> None:
    dialect, url = database
    load(url, _frame_with(2, **changes))
    for strategy in STRATEGIES_BY_DIALECT[dialect]:
        with Source(model_config(url)) as source, pytest.raises(Exception, match=message) as info:
            collect(source, request(), strategy=strategy)
        assert "model 'retail_pd'" in str(info.value)


def test_one_pass_over_the_cells_finds_each_kind_of_bad_value() -> None:
    """Labels other than 0/1/NULL, raw scores that are NULL or not numbers, scores in the
    missing bin and each population's weights, found in one pass (no engine stores a text
    score in a numeric column, so the not-a-number case is built by hand)."""
    missing = SCORE_BINS.missing_index
    aggregate = Aggregate()
    for key, rows, weight in [
        (("current", "score", ("web",), None, 0), 3, 1.5),
        (("current", "score", ("web",), None, missing), 2, -4.0),
        (("current", "score_values", ("web",), None, 0.25), 3, 1.5),
        (("current", "score_values", ("web",), None, None), 4, 1.0),
        (("current", "score_values", ("web",), None, "0.3"), 1, 1.0),
        (("performance", "score", ("web",), 2, 1), 5, 2.0),
        (("performance", "score", ("web",), 1, 1), 1, 0.5),
        (("performance", "income", ("web",), "x", 1), 1, 0.5),
    ]:
        aggregate.add(key, rows, weight)
    found = check_cells(request(), aggregate, "pd_score")
    assert found.bad_labels == ["x", 2]  # sorted by their repr
    assert found.null_scores == 4 + 2  # the raw NULLs, and the rows in the score's missing bin
    assert found.not_numbers == ["0.3"]
    assert found.weights == {"current": 5.5, "performance": 2.5}  # the first variable's |w|
    unweighted = check_cells(request(weighted=False), aggregate, "pd_score")
    assert unweighted.weights == {}


def test_the_invalid_weight_count_counts_each_loan_once(database: tuple[str, str]) -> None:
    """Every strategy reports the number of loans in the windows with a negative or NULL
    weight, once however many variables (and packs) read them."""
    dialect, url = database
    frame = loan_frame(seed=4, n=400)
    in_windows = frame["score_date"].map(
        lambda d: any(p.window.__contains__(d) for p in request().populations)
    )
    chosen = frame.index[in_windows][:7]
    frame.loc[chosen[:4], "exposure"] = -2.5
    frame.loc[chosen[4:], "exposure"] = None
    load(url, frame)
    for strategy in STRATEGIES_BY_DIALECT[dialect]:
        with (
            Source(model_config(url)) as source,
            pytest.raises(SourceError, match=r"got 7 row\(s\) without"),
        ):
            collect(source, request(), strategy=strategy)


def test_a_pack_of_one_is_read_as_packed_rows_but_by_day_raw_values_row_by_row() -> None:
    """A variable alone in its pack is added as arrays (``packed`` rows: its SQL a tagged
    statement's without the variable's name); a pass by day keeps its raw variables' cells in
    columns, row by row, so their statements stay tagged."""
    from sqlalchemy import column as sql_column
    from sqlalchemy import table as sql_table

    from riskmon.collect.engines import profile_for

    names = ["score_date", "pd_score", "bad", "income", "region", "grade", "channel", "exposure"]
    loans = sql_table("loans", *(sql_column(n) for n in names))
    profile = profile_for("postgresql")

    def layouts(req: CollectRequest) -> list[tuple[str, tuple[str, ...]]]:
        return [
            (s.layout, tuple(v.name for v in s.variables))
            for s in pushdown.statements(loans, req, "packed", profile)
        ]

    binned = ("packed", ("score", "income", "region", "grade"))
    assert layouts(request()) == [binned, ("packed", ("score_values",))]
    by_day = dataclasses.replace(request(), by_day=True)
    assert by_day.columnar == {"score_values"}
    assert request().columnar == set()
    assert set(layouts(by_day)) == {binned, ("tagged", ())}  # a statement per group of days


def test_packed_groups_text_only_for_one_level_a_bin() -> None:
    region, grade = VARIABLES[3], VARIABLES[4]  # ("N",), ("S",), ("E",) / ..., ("3", "4")
    assert pushdown.by_text(region, raw_categories=True)
    assert not pushdown.by_text(grade, raw_categories=True)  # "3" and "4" share a bin
    assert not pushdown.by_text(region, raw_categories=False)


def test_a_text_score_column_is_refused(database: tuple[str, str]) -> None:
    dialect, url = database
    load(url, _frame_with(4, pd_score=["high"] * 400))
    for strategy in STRATEGIES_BY_DIALECT[dialect]:
        with (
            Source(model_config(url)) as source,
            pytest.raises(
                Exception, match=r"model 'retail_pd'(, column 'pd_score' \(columns.score\))?: .*"
            ) as info,
        ):
            collect(source, request(), strategy=strategy)
        assert "pd_score" in str(info.value) or "DOUBLE" in str(info.value), str(info.value)


def test_a_missing_table_or_column_is_named(database: tuple[str, str]) -> None:
    _, url = database
    load(url, loan_frame(seed=2, n=50).drop(columns=["income"]))
    with (
        Source(model_config(url, table="nope")) as source,
        pytest.raises(Exception, match=r"model 'retail_pd': table 'nope' not found"),
    ):
        collect(source, request())
    with (
        Source(model_config(url)) as source,
        pytest.raises(
            Exception,
            match=r"model 'retail_pd', column 'income' \(characteristics\[0\]\): not found in the",
        ),
    ):
        collect(source, request())


@pytest.mark.parametrize(
    ("weighted", "exclude"),
    [(True, True), (False, True), (True, False)],
    ids=["weighted", "unweighted", "zero-weights-only"],
)
def test_invalid_loans_are_left_out_and_counted_by_every_strategy(
    database: tuple[str, str], weighted: bool, exclude: bool
) -> None:
    """Loans without a score, or with a weight NULL or negative, are in no table and are
    counted, each once, in that order; a weight of 0 counts for nothing and is dropped (even
    where invalid loans fail the collect)."""
    dialect, url = database
    frame = loan_frame(seed=13, weighted=weighted)
    rng = np.random.default_rng(13)
    if exclude:
        frame.loc[rng.random(len(frame)) < 0.03, "pd_score"] = np.nan
    if weighted:
        weights = frame["exposure"].to_numpy(copy=True)
        u = rng.random(len(frame))
        if exclude:
            weights[u < 0.02] = np.nan
            weights[(u >= 0.02) & (u < 0.04)] = -5.0
        weights[(u >= 0.04) & (u < 0.07)] = 0.0
        frame["exposure"] = weights
    # a few loans delivered twice, one three times: counted among the used, not removed
    twice = frame.sample(n=40, random_state=13)
    frame = pd.concat([frame, twice, twice.iloc[:1]], ignore_index=True)
    load(url, frame)
    non_finite = pd.Series(False, index=frame.index)
    if exclude:
        non_finite = _non_finite_scores(dialect, url, frame)
    req = dataclasses.replace(
        request(weighted=weighted), score="pd_score", exclude_invalid=exclude, id="loan_id"
    )
    scored = frame["pd_score"].notna() & ~non_finite
    usable = scored & (frame["exposure"] > 0) if weighted else scored
    expected = expected_tables(frame[usable], req)
    for strategy, collected in _collect_all(url, dialect, req, weighted).items():
        assert set(collected.tables) == set(expected), strategy
        for key, table in expected.items():
            rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
            assert collected.tables[key].equals(table, rtol=rtol), (strategy, key)
        for population in req.populations:
            rows = frame[frame["score_date"].map(population.window.__contains__)]
            null = rows["pd_score"].isna()
            odd = non_finite.loc[rows.index]
            if weighted:
                w = rows["exposure"]
                invalid = ~null & ~odd & (w.isna() | (w < 0))
                zero = ~null & ~odd & (w == 0)
            else:
                invalid = zero = pd.Series(False, index=rows.index)
            used = rows[usable.loc[rows.index]]
            repeats = int(used.duplicated(["loan_id", "score_date"]).sum())
            assert collected.exclusions[population.name] == Exclusions(
                read=len(rows),
                null_score=int(null.sum()),
                non_finite_score=int(odd.sum()),
                invalid_weight=int(invalid.sum()),
                zero_weight=int(zero.sum()),
                duplicates=repeats,
            ), (strategy, population.name)


def _non_finite_scores(dialect: str, url: str, frame: pd.DataFrame) -> pd.Series:
    """Make some scores NaN (where the engine stores NaN) and some infinite (where it stores
    infinity): the rows, as a mask."""
    values = {
        "postgresql": ("'NaN'::float8", "'Infinity'::float8"),
        "duckdb": ("'nan'::DOUBLE", "'inf'::DOUBLE"),
        "sqlite": (None, "9e999"),
    }.get(dialect)
    mask = pd.Series(False, index=frame.index)
    if values is None:
        return mask  # MariaDB stores neither
    scored = frame["pd_score"].notna()
    for modulus, value in zip((53, 59), values, strict=True):
        if value is None:
            continue
        sql = (
            f"UPDATE loans SET pd_score = {value} "
            f"WHERE loan_id % {modulus} = 0 AND pd_score IS NOT NULL"
        )
        if dialect == "duckdb":
            import duckdb

            with duckdb.connect(url.removeprefix("duckdb:///")) as connection:
                connection.execute(sql)
        else:
            engine = create_engine(url)
            with engine.begin() as connection:
                connection.execute(text(sql))
            engine.dispose()
        mask |= scored & (frame["loan_id"] % modulus == 0)
    return mask


@pytest.mark.parametrize("column", ["income", "exposure"])
def test_text_in_a_numeric_sqlite_column_is_refused_by_every_strategy(
    tmp_path: Path, column: str
) -> None:
    """SQLite keeps text in a REAL column; binned as a number it would land in the top bin.
    Every strategy refuses it as the streaming reader does, naming the column."""
    import sqlite3

    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=21)
    load(url, frame)
    with sqlite3.connect(tmp_path / "loans.db") as connection:
        connection.execute(f"UPDATE loans SET {column} = 'n/a' WHERE loan_id % 97 = 0")
    req = request()
    key = r"characteristics\[0\]" if column == "income" else "columns.weight"
    said = "numeric values to bin, got ['n/a'" if column == "income" else "weights, got 24 row"
    with Source(model_config(url)) as source:
        for strategy in STRATEGIES_BY_DIALECT["sqlite"]:
            with pytest.raises(SourceError, match=rf"column '{column}' \({key}\)") as caught:
                collect(source, req, strategy=strategy)
            assert said in str(caught.value), strategy


def test_an_infinite_score_fails_the_collect_where_invalid_loans_fail(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=23)
    load(url, frame)
    mask = _non_finite_scores("sqlite", url, frame)
    req = dataclasses.replace(request(), score="pd_score", exclude_invalid=False)
    with Source(model_config(url)) as source:
        for strategy in STRATEGIES_BY_DIALECT["sqlite"]:
            collected = None
            with pytest.raises(SourceError, match=r"column 'pd_score' \(columns.score\)") as caught:
                collected = collect(source, req, strategy=strategy)
            assert collected is None
            windows = frame["score_date"].map(lambda d: any(d in p.window for p in req.populations))
            n = int((mask & windows).sum())
            assert f"expected a finite score on every loan, got {n} row(s)" in str(caught.value)


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_a_score_outside_its_range_is_left_out_and_counted_by_every_strategy(
    database: tuple[str, str], weighted: bool
) -> None:
    """score_range [0, 1]: PDs of 1.7 and -0.2 are in no table and counted after the NULL
    scores, each loan once (a loan scored out of range with a bad weight counts as out of
    range); with invalid loans failing the collect, they fail it, named and counted."""
    dialect, url = database
    frame = loan_frame(seed=29, weighted=weighted)
    rng = np.random.default_rng(29)
    u = rng.random(len(frame))
    frame.loc[u < 0.02, "pd_score"] = np.nan
    frame.loc[(u >= 0.02) & (u < 0.04), "pd_score"] = 1.7
    frame.loc[(u >= 0.04) & (u < 0.05), "pd_score"] = -0.2
    frame.loc[frame.index % 97 == 0, "pd_score"] = 1.0  # the bounds are valid
    if weighted:
        frame.loc[(u >= 0.03) & (u < 0.06), "exposure"] = -1.0
    load(url, frame)
    req = dataclasses.replace(
        request(weighted=weighted), score="pd_score", exclude_invalid=True, score_range=(0.0, 1.0)
    )
    score = frame["pd_score"]
    inside = score.between(0.0, 1.0)
    usable = inside & (frame["exposure"] > 0) if weighted else inside
    expected = expected_tables(frame[usable], req)
    for strategy, collected in _collect_all(url, dialect, req, weighted).items():
        assert set(collected.tables) == set(expected), strategy
        for key, table in expected.items():
            rtol = WEIGHT_RTOL.get(dialect, 1e-12) if strategy == "stream" else 1e-12
            assert collected.tables[key].equals(table, rtol=rtol), (strategy, key)
        for population in req.populations:
            rows = frame[frame["score_date"].map(population.window.__contains__)]
            scored, ok = rows["pd_score"].notna(), inside.loc[rows.index]
            bad_weight = ok & (rows["exposure"] <= 0) if weighted else ok & False
            assert collected.exclusions[population.name] == Exclusions(
                read=len(rows),
                null_score=int((~scored).sum()),
                out_of_range=int((scored & ~ok).sum()),
                invalid_weight=int(bad_weight.sum()),
            ), (strategy, population.name)


def test_a_score_outside_its_range_fails_the_collect_where_invalid_loans_fail(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=31)
    frame.loc[frame.index % 50 == 0, "pd_score"] = 1.7
    load(url, frame)
    req = dataclasses.replace(
        request(), score="pd_score", exclude_invalid=False, score_range=(0.0, 1.0)
    )
    windows = frame["score_date"].map(lambda d: any(d in p.window for p in req.populations))
    n = int(((frame["pd_score"] > 1) & windows).sum())
    assert n > 0
    with Source(model_config(url)) as source:
        for strategy in STRATEGIES_BY_DIALECT["sqlite"]:
            with pytest.raises(SourceError, match=r"column 'pd_score' \(columns.score\)") as caught:
                collect(source, req, strategy=strategy)
            assert f"expected scores within score_range [0, 1], got {n} row(s) outside" in str(
                caught.value
            )
