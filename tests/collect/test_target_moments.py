"""Property: a continuous target's moments per cell are the same from every database, every
collect strategy and the loans themselves (numpy on the arrays), with or without PD sums."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from riskmon.baseline import CollectedRun
from riskmon.collect import Source, collect
from riskmon.collect.request import CollectRequest, PdSource, Variable
from riskmon.errors import SourceError
from riskmon.metrics import TARGET_MOMENTS, Binning, TargetTable, fit_binning
from riskmon.records import ALL

from . import test_pd_sums
from .loans import CURRENT, load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, WEIGHT_RTOL, request

#: the relative tolerance of the moments (MariaDB's text protocol rounds streamed doubles)
MOMENT_RTOL = 1e-9


def _with_moments(
    req: CollectRequest, target: str = "lgd", downturn: str | None = None
) -> CollectRequest:
    """``req`` summing ``target``'s moments against the score (and ``downturn``, the second
    prediction) on every binned variable."""
    variables = [
        v if v.binning is None else dataclasses.replace(v, moments=True) for v in req.variables
    ]
    return dataclasses.replace(
        req, variables=variables, target=target, score="pd_score", downturn=downturn
    )


def _with_downturn(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """``frame`` with ``lgd_dt``, an estimate without downturn below the score, NULL for about
    a tenth of the loans."""
    values = (frame["pd_score"].to_numpy(float) * rng.uniform(0.6, 1.0, len(frame))).round(4)
    frame["lgd_dt"] = pd.array(values, dtype="Float64")
    frame.loc[rng.random(len(frame)) < 0.1, "lgd_dt"] = pd.NA
    return frame


def _with_target(frame: pd.DataFrame, rng: np.random.Generator, share: float) -> pd.DataFrame:
    """``frame`` with a realised LGD: NULL (not realised) for about ``1 - share`` of the loans,
    the others near their prediction."""
    n = len(frame)
    realised = rng.random(n) < share
    lgd = np.clip(frame["pd_score"].to_numpy(float) + rng.normal(0, 0.2, n), 0, 1.2).round(3)
    frame["lgd"] = pd.array(np.where(realised, lgd, np.nan), dtype="Float64")
    frame.loc[~realised, "lgd"] = pd.NA
    return frame


def _parts(frame: pd.DataFrame, req: CollectRequest) -> list[tuple[str, str, pd.DataFrame]]:
    """(population, segment, loans) as the count tables count them."""
    out = []
    for population in req.populations:
        rows = frame[frame["score_date"].map(population.window.__contains__)]
        if population.labeled:
            rows = rows[rows["bad"].notna()]
        out.append((population.name, ALL, rows))
        if not req.segments:
            continue
        for value, part in rows.groupby(rows["channel"].fillna("\0")):
            segment = "channel IS NULL" if value == "\0" else f"channel={value}"
            out.append((population.name, segment, part))
    return out


def expected_moments(
    frame: pd.DataFrame, req: CollectRequest
) -> dict[tuple[str, str, str], TargetTable]:
    """The target's moments computed from the loans, with numpy."""
    assert req.target is not None
    assert req.score is not None
    out = {}
    for population, segment, part in _parts(frame, req):
        y = part[req.target].astype(object).where(part[req.target].notna(), None)
        w = part[req.weight].to_numpy(float) if req.weight else None
        for variable in req.variables:
            binning = variable.binning
            if not variable.moments or binning is None:
                continue
            values = part[variable.column]
            out[(population, variable.name, segment)] = TargetTable.from_arrays(
                y.to_numpy(object),
                part[req.score].to_numpy(float),
                binning.assign(values.astype(object).where(values.notna(), None)),
                n_bins=binning.n_bins,
                sample_weight=w,
                labels=binning.labels,
                downturn=None
                if req.downturn is None
                else part[req.downturn].to_numpy(float, na_value=np.nan),
            )
    return out


def _assert_moments(
    collected: dict[tuple[str, str, str], TargetTable],
    expected: dict[tuple[str, str, str], TargetTable],
    context: object,
) -> None:
    assert set(collected) == set(expected), context
    for key, table in expected.items():
        assert collected[key].equals(table, rtol=MOMENT_RTOL), (context, key)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(20, 1200),
    weighted=st.booleans(),
    segmented=st.booleans(),
    share=st.sampled_from([0.0, 0.3, 0.8, 1.0]),
    downturn=st.booleans(),
)
def test_moments_agree_everywhere(
    database: tuple[str, str],
    seed: int,
    n: int,
    weighted: bool,
    segmented: bool,
    share: float,
    downturn: bool,
) -> None:
    dialect, url = database
    rng = np.random.default_rng(seed)
    frame = _with_target(loan_frame(seed=seed, n=n, weighted=weighted), rng, share)
    frame = _with_downturn(frame, rng)
    load(url, frame)
    req = _with_moments(
        request(weighted=weighted, segments=("channel",) if segmented else ()),
        downturn="lgd_dt" if downturn else None,
    )
    expected = expected_moments(frame, req)
    with Source(model_config(url, weighted=weighted)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            _assert_moments(collected.target_tables, expected, (dialect, strategy))


def test_moments_and_pd_sums_ride_together(database: tuple[str, str]) -> None:
    """PD sums and moments asked at once, on one variable and on others apart: each as when
    asked alone (the statements' NULL columns of a UNION ALL included)."""
    dialect, url = database
    frame = _with_target(loan_frame(seed=11, n=900, weighted=True), np.random.default_rng(11), 0.6)
    load(url, frame)
    grades = fit_binning(frame["pd_score"].to_numpy(float), kind="numeric", n_bins=5)
    base = request(weighted=True)
    both = test_pd_sums._with_sums(base, grades, PdSource("pd_score"), "pd_score")
    # the grades sum both; the score's bins and income only the moments; region and grade none
    variables = [
        dataclasses.replace(v, moments=v.name in {"pd_grade", "score", "income"})
        for v in both.variables
    ]
    both = dataclasses.replace(both, variables=variables, target="lgd", score="pd_score")
    expected_pd = test_pd_sums._expected(frame, both, grades, "pd_score")
    expected = expected_moments(frame, both)
    assert {v for _, v, _ in expected} == {"pd_grade", "score", "income"}
    with Source(model_config(url, weighted=True)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, both, strategy=strategy)
            _assert_moments(collected.target_tables, expected, (dialect, strategy))
            assert set(collected.pd_tables) == set(expected_pd), strategy
            rtol = max(WEIGHT_RTOL.get(dialect, 1e-12), 1e-9)
            for key, table in expected_pd.items():
                assert collected.pd_tables[key].equals(table, rtol=rtol), (strategy, key)


def _four_loans() -> pd.DataFrame:
    frame = loan_frame(seed=1, n=4, weighted=True)
    frame["score_date"] = CURRENT[0]
    frame["region"] = ["N", "N", "S", "S"]
    frame["pd_score"] = [0.2, 0.4, 0.5, 0.6]
    frame["lgd"] = pd.array([0.1, None, 0.3, 0.5], dtype="Float64")
    frame["exposure"] = [2.0, 1.0, 3.0, 1.0]
    frame["channel"] = "web"
    return frame


def test_four_loans_by_hand(database: tuple[str, str]) -> None:
    dialect, url = database
    load(url, _four_loans())
    region = Variable("region", "region", Binning("categorical", levels=(("N",), ("S",))))
    base = dataclasses.replace(request(weighted=True, segments=()), variables=[region])
    req = _with_moments(base)
    # bins N, S, then the unseen and missing bins: N holds loans 1 and 2 (2's LGD not realised)
    by_hand = {
        "n": [2, 2],
        "w": [3, 4],
        "n_y": [1, 2],
        "y": [0.1, 0.8],
        "y2": [0.01, 0.34],
        "s": [0.2, 1.1],
        "s2": [0.04, 0.61],
        "sy": [0.02, 0.45],
        "w_y": [2, 4],
        "wy": [0.2, 1.4],
        "wy2": [0.02, 0.52],
        "ws": [0.4, 2.1],
        "ws2": [0.08, 1.11],
        "wsy": [0.04, 0.75],
        "w2_y": [4, 10],
    }
    with Source(model_config(url, weighted=True)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            table = collect(source, req, strategy=strategy).target_tables[
                ("current", "region", ALL)
            ]
            for name, values in by_hand.items():
                got = getattr(table, name)
                assert got[:2] == pytest.approx(values, rel=1e-12), (strategy, name)
                assert not got[2:].any(), (strategy, name)
            assert table.mean_realised()[:2] == pytest.approx([0.1, 0.4])
            assert table.mean_realised(weighted=True)[:2] == pytest.approx([0.1, 0.35])
            assert table.mean_predicted()[:2] == pytest.approx([0.2, 0.55])
            assert table.mean_predicted(weighted=True)[:2] == pytest.approx([0.2, 0.525])
            assert table.mean_realised()[2:] == [None, None]
            # the performance cohort has no loans: empty moments, not missing ones
            empty = collect(source, req, strategy=strategy).target_tables[
                ("performance", "region", ALL)
            ]
            assert not empty.n.any()
            assert empty.mean_realised() == [None] * len(empty.labels)

    # a family reads them through the run's tables, as it reads PD sums
    with Source(model_config(url, weighted=True)) as source:
        collected = collect(source, req)
    model = model_config(url, weighted=True)
    run = CollectedRun(model, collected, None, None)  # type: ignore[arg-type]
    moments = run.target_table("current", "region")
    assert moments is not None
    assert list(moments.y[:2]) == pytest.approx(by_hand["y"])
    assert run.target_table("current", "income") is None  # no moments asked of it


def test_no_target_realised(database: tuple[str, str]) -> None:
    """Every target NULL: the loans are counted, every moment is 0 and no mean is available."""
    dialect, url = database
    frame = loan_frame(seed=5, n=300, weighted=True)
    frame["lgd"] = pd.array([None] * len(frame), dtype="Float64")
    load(url, frame)
    req = _with_moments(request(weighted=True))
    with Source(model_config(url, weighted=True)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            assert collected.target_tables, strategy
            for key, table in collected.target_tables.items():
                counts = collected.tables[key]
                assert table.n.tolist() == counts.n_total.tolist(), (strategy, key)
                assert table.w == pytest.approx(counts.total), (strategy, key)
                for name in TARGET_MOMENTS:
                    assert not getattr(table, name).any(), (strategy, key, name)
                portfolio = table.portfolio()
                assert portfolio.mean_realised() == [None]
                assert portfolio.mean_predicted(weighted=True) == [None]


def test_a_text_target_fails_naming_the_column(database: tuple[str, str]) -> None:
    dialect, url = database
    frame = loan_frame(seed=7, n=200, weighted=False)
    frame["lgd_text"] = np.where(np.arange(200) % 3 == 0, "high", "0.25")
    load(url, frame)
    req = _with_moments(request(weighted=False), target="lgd_text")
    with Source(model_config(url, weighted=False)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            with pytest.raises(SourceError, match=r"column 'lgd_text' \(target\)"):
                collect(source, req, strategy=strategy)


def test_text_in_an_untyped_target_fails_naming_the_column(tmp_path: object) -> None:
    """SQLite: a column declared without a type may hold text beside numbers; every strategy
    refuses it, as it refuses text in a binned column."""
    url = f"sqlite:///{tmp_path}/loans.db"
    load(url, loan_frame(seed=8, n=300, weighted=False))
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE loans ADD COLUMN lgd_any"))
        connection.execute(text("UPDATE loans SET lgd_any = 0.5"))
        connection.execute(text("UPDATE loans SET lgd_any = 'n/a' WHERE loan_id % 7 = 0"))
    engine.dispose()
    req = _with_moments(request(weighted=False), target="lgd_any")
    with Source(model_config(url, weighted=False)) as source:
        for strategy in STRATEGIES_BY_DIALECT["sqlite"]:
            with pytest.raises(SourceError, match=r"'lgd_any' \(target\).*numeric target"):
                collect(source, req, strategy=strategy)


def test_a_target_needs_the_score_and_binned_variables() -> None:
    base = request(weighted=False)
    with pytest.raises(ValueError, match="needs the request's score"):
        dataclasses.replace(base, target="lgd")
    raw = dataclasses.replace(base, variables=[Variable("score_values", "pd_score", moments=True)])
    with pytest.raises(ValueError, match="unbinned"):
        dataclasses.replace(raw, target="lgd", score="pd_score")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_target_nan_or_infinite_fails_naming_the_column(
    database: tuple[str, str], value: str
) -> None:
    """A realised target must be a number: NaN or ±infinity (which PostgreSQL and DuckDB
    store) fails every strategy, as a PD outside [0, 1] does, instead of summing to NaN."""
    dialect, url = database
    if dialect == "mysql" or (dialect == "sqlite" and value == "nan"):
        pytest.skip(f"{dialect} stores no {value} double (MariaDB none; SQLite no NaN)")
    frame = _with_target(loan_frame(seed=9, n=400, weighted=False), np.random.default_rng(9), 0.7)
    load(url, frame)
    update = f"UPDATE loans SET lgd = CAST('{value}' AS DOUBLE PRECISION) WHERE loan_id % 5 = 0"
    if dialect == "sqlite":  # an overflowing literal is how SQLite writes an infinity
        update = f"UPDATE loans SET lgd = {value.replace('inf', '9e999')} WHERE loan_id % 5 = 0"
    if dialect == "duckdb":
        import duckdb

        with duckdb.connect(url.removeprefix("duckdb:///")) as connection:
            connection.execute(update.replace("DOUBLE PRECISION", "DOUBLE"))
    else:
        engine = create_engine(url)
        with engine.begin() as connection:
            connection.execute(text(update))
        engine.dispose()
    req = _with_moments(request(weighted=False))
    with Source(model_config(url, weighted=False)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            with pytest.raises(SourceError, match=r"'lgd' \(target\).*NaN or infinite"):
                collect(source, req, strategy=strategy)


def test_a_joint_table_carries_the_moments_on_its_keys(database: tuple[str, str]) -> None:
    """A variable crossed with another (a joint table) sums the moments on its integer keys,
    ``bin * crossed bins + crossed bin``."""
    dialect, url = database
    frame = _with_target(loan_frame(seed=4, n=600, weighted=True), np.random.default_rng(4), 0.5)
    load(url, frame)
    score, region = request().variables[0], request().variables[3]
    assert score.binning is not None
    assert region.binning is not None
    joint = Variable("joint", score.column, score.binning, crossed=region, moments=True)
    req = dataclasses.replace(
        request(weighted=True, segments=()), variables=[joint], target="lgd", score="pd_score"
    )
    n_keys = score.binning.n_bins * region.binning.n_bins
    expected = {}
    for population, segment, part in _parts(frame, req):
        first = score.binning.assign(part["pd_score"].to_numpy(object))
        second = region.binning.assign(part["region"].to_numpy(object))
        expected[(population, "joint", segment)] = TargetTable.from_arrays(
            part["lgd"].astype(object).where(part["lgd"].notna(), None).to_numpy(object),
            part["pd_score"].to_numpy(float),
            first * region.binning.n_bins + second,
            n_bins=n_keys,
            sample_weight=part["exposure"].to_numpy(float),
            labels=[str(k) for k in range(n_keys)],
        )
    with Source(model_config(url, weighted=True)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            _assert_moments(collected.target_tables, expected, (dialect, strategy))


def test_a_query_source_selects_the_target(tmp_path: object) -> None:
    """A source defined by a query selects the columns a run reads: the target too, which the
    model's configuration does not name."""
    url = f"sqlite:///{tmp_path}/loans.db"
    frame = _with_target(loan_frame(seed=6, n=500, weighted=True), np.random.default_rng(6), 0.6)
    load(url, frame)
    req = _with_moments(request(weighted=True))
    query = {"url": url, "query": "SELECT * FROM loans WHERE loan_id >= 0"}
    with Source(model_config(url, source=query)) as source:
        collected = collect(source, req, strategy="union_all")
    _assert_moments(collected.target_tables, expected_moments(frame, req), "query")
    missing = _with_moments(request(weighted=True), target="realised_lgd")
    with (
        Source(model_config(url, source=query)) as source,
        pytest.raises(SourceError, match=r"'realised_lgd' \(target\)"),
    ):
        collect(source, missing)
