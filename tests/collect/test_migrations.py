"""Property: the migration counts are the same from every database, by pushdown and by the
streaming reader, as a plain per-obligor reading of the rows computes them; and the rows that
cannot be linked (duplicates on a score date, no obligor) are counted, not double-counted."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskmon.collect import (
    CollectRequest,
    MigrationRequest,
    Migrations,
    MigrationTables,
    Population,
    Source,
    Variable,
    collect_migrations,
)
from riskmon.collect.migration import APPEARED, DEFAULTED, LEFT
from riskmon.errors import InvalidDataError, SourceError
from riskmon.metrics import migration_matrix
from riskmon.plan import DateWindow
from riskmon.records import ALL

from .loans import load, model_config
from .test_collect import GRADE_BINS, SCORE_BINS

START = DateWindow(dt.date(2024, 3, 1), dt.date(2024, 3, 31))
END = DateWindow(dt.date(2025, 3, 1), dt.date(2025, 3, 31))
ON_SCORE = Variable("pd_grade", "pd_score", SCORE_BINS)
ON_GRADE = Variable("pd_grade", "grade", GRADE_BINS)
LABELS = np.array([0, 1, None], dtype=object)


def rescored_book(seed: int, n_obligors: int, *, weighted: bool) -> pd.DataFrame:
    """Obligors re-scored on random dates around both snapshots (several a month, ties of
    dates, some scored twice on one date), entering and leaving, NULL grades, scores and
    obligors, labels 0, 1 and NULL, two segment values and NULL."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    months = [dt.date(2024, 2, 1), START.start, dt.date(2024, 4, 1), END.start, dt.date(2025, 4, 1)]
    for obligor in range(n_obligors):
        for month in months:
            if rng.random() < 0.35:
                continue  # not scored that month: obligors enter and leave
            for _ in range(int(rng.integers(1, 3))):
                day = month + dt.timedelta(days=int(rng.choice([0, 9, 9, 27])))
                copies = 2 if rng.random() < 0.03 else 1  # twice on one date: a duplicate
                for _ in range(copies):
                    rows.append(
                        {
                            "loan_id": None if rng.random() < 0.02 else obligor,
                            "score_date": day,
                            "pd_score": None if rng.random() < 0.04 else float(rng.beta(2, 8)),
                            "grade": None if rng.random() < 0.05 else int(rng.integers(1, 6)),
                            "bad": rng.choice(
                                np.array([0, 1, None], dtype=object), p=[0.8, 0.1, 0.1]
                            ),
                            "channel": rng.choice(np.array(["web", "branch", None], dtype=object)),
                            "exposure": float(np.round(rng.gamma(2.0, 500.0), 2)),
                            "income": 50.0,
                            "region": "N",
                        }
                    )
    names = ["loan_id", "score_date", "pd_score", "grade", "bad", "channel", "exposure"]
    frame = pd.DataFrame(rows, columns=[*names, "income", "region"])
    frame["bad"] = pd.array(frame["bad"], dtype="Int64")
    frame["grade"] = pd.array(frame["grade"], dtype="Int64")
    frame["pd_score"] = frame["pd_score"].astype(float)
    # typed even when no obligor was scored: an empty frame's columns are objects (TEXT)
    frame["income"] = frame["income"].astype(float)
    frame["exposure"] = frame["exposure"].astype(float)
    frame["loan_id"] = pd.array(frame["loan_id"], dtype="Int64")
    if not weighted:
        frame = frame.drop(columns="exposure")
    return frame


def migration_request(grade: Variable, *, weighted: bool) -> MigrationRequest:
    return MigrationRequest(
        CollectRequest(
            populations=[
                Population("start", START, labeled=True),
                Population("end", END, labeled=False),
            ],
            variables=[grade],
            score_date="score_date",
            label="bad",
            weight="exposure" if weighted else None,
            segments=("channel",),
        ),
        obligor="loan_id",
    )


def expected(frame: pd.DataFrame, grade: Variable, weighted: bool) -> MigrationTables:
    """The migrations read obligor by obligor, in plain Python."""
    assert grade.binning is not None
    bins = grade.binning.assign(frame[grade.column].to_numpy(object))
    latest: dict[tuple[int, int], list[tuple[dt.date, dict[str, Any]]]] = defaultdict(list)
    unlinked = [0, 0]
    for (_, row), grade_bin in zip(frame.iterrows(), bins, strict=True):
        snap = 0 if row["score_date"] in START else 1 if row["score_date"] in END else None
        if snap is None:
            continue
        if pd.isna(row["loan_id"]):
            unlinked[snap] += 1
            continue
        latest[(int(row["loan_id"]), snap)].append((row["score_date"], {**row, "g": grade_bin}))
    duplicates = [0, 0]
    kept: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
    doubled: set[int] = set()
    for (obligor, snap), entries in latest.items():
        last = max(d for d, _ in entries)
        on_last = [r for d, r in entries if d == last]
        if len(on_last) > 1:
            doubled.add(obligor)
        kept[obligor][snap] = {**on_last[0], "dup": len(on_last) > 1}
    segments: dict[str, Migrations] = {ALL: Migrations()}
    for obligor, snaps in kept.items():
        if obligor in doubled:
            for snap, row in snaps.items():
                duplicates[snap] += int(row["dup"])
            continue
        start, end = snaps.get(0), snaps.get(1)
        source = start if start is not None else end
        assert source is not None
        fro = APPEARED if start is None else int(start["g"])
        if start is not None and not pd.isna(start["bad"]) and int(start["bad"]) == 1:
            to = DEFAULTED
        else:
            to = LEFT if end is None else int(end["g"])
        w = float(source["exposure"]) if weighted else 1.0
        channel = source["channel"]
        names = [ALL, "channel IS NULL" if pd.isna(channel) else f"channel={channel}"]
        for segment in names:
            segments.setdefault(segment, Migrations()).add((fro, to), 1, w)
    windows = (str(START), str(END))
    return MigrationTables(
        segments, (duplicates[0], duplicates[1]), (unlinked[0], unlinked[1]), windows
    )


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_obligors=st.integers(1, 250),
    weighted=st.booleans(),
    on_grade=st.booleans(),
)
def test_migrations_agree_everywhere(
    database: tuple[str, str], seed: int, n_obligors: int, weighted: bool, on_grade: bool
) -> None:
    _, url = database
    frame = rescored_book(seed, n_obligors, weighted=weighted)
    load(url, frame)
    grade = ON_GRADE if on_grade else ON_SCORE
    req = migration_request(grade, weighted=weighted)
    want = expected(frame, grade, weighted)
    model = model_config(url, weighted=weighted, rating={"migration": True})
    with Source(model) as source:
        for strategy in ("auto", "stream"):
            got = collect_migrations(source, req, strategy=strategy)
            assert got.equals(want), (strategy, _plain(got), _plain(want))
    # the cells of the graded obligors are numpy's migration matrix of their grades
    whole = want.segments[ALL]
    k = SCORE_BINS.n_value_bins if not on_grade else GRADE_BINS.n_value_bins
    pairs = [(f, t, n) for (f, t), (n, _) in whole.cells.items() if 0 <= f < k and 0 <= t < k]
    if pairs:
        grades_from = np.repeat([f + 1 for f, _, _ in pairs], [n for *_, n in pairs])
        grades_to = np.repeat([t + 1 for _, t, _ in pairs], [n for *_, n in pairs])
        matrix = migration_matrix(grades_from, grades_to, n_grades=k)
        for i in range(k):
            for j in range(k):
                assert matrix[i, j] == got.segments[ALL].count((i, j))


def _plain(tables: MigrationTables) -> Any:
    cells = {s: {k: v for k, v in m.cells.items() if v[0]} for s, m in tables.segments.items()}
    return cells, tables.duplicates, tables.no_obligor


def test_duplicates_and_unlinked_rows_are_counted_not_doubled(sqlite_url: str) -> None:
    day, now = START.start, END.start
    frame = pd.DataFrame(
        {
            "loan_id": pd.array([1, 1, 1, 2, 2, 3, None, 4], dtype="Int64"),
            "score_date": [day, day, now, day, now, now, now, day],
            "pd_score": [0.05, 0.05, 0.12, 0.35, 0.5, 0.2, 0.2, 0.05],
            "bad": pd.array([0, 0, None, 0, None, None, None, 1], dtype="Int64"),
            "channel": ["web"] * 8,
            "exposure": [1.0] * 8,
            "income": [50.0] * 8,
            "region": ["N"] * 8,
            "grade": [1] * 8,
        }
    )
    load(sqlite_url, frame)
    model = model_config(sqlite_url, rating={"migration": True})
    with Source(model) as source:
        for strategy in ("auto", "stream"):
            got = collect_migrations(source, migration_request(ON_SCORE, weighted=True))
            assert got.duplicates == (1, 0), strategy  # obligor 1: twice on its latest date
            assert got.no_obligor == (0, 1)
            whole = got.segments[ALL]
            # obligor 2 moved from bin 4 (0.3, 0.4] to bin 5 (> 0.4); 3 appeared; 4 defaulted
            assert whole.count((4, 5)) == 1
            assert whole.count((APPEARED, 2)) == 1
            assert whole.count((0, DEFAULTED)) == 1
            assert sum(int(n) for n, _ in whole.cells.values()) == 3


def test_overlapping_snapshots_are_refused() -> None:
    req = migration_request(ON_SCORE, weighted=False)
    populations = [Population("start", START, labeled=True), Population("end", START, False)]
    with pytest.raises(InvalidDataError, match="overlap"):
        MigrationRequest(
            CollectRequest(populations, [ON_SCORE], "score_date", "bad"), obligor="loan_id"
        )
    assert req.grade is ON_SCORE


def test_invalid_labels_and_a_missing_obligor_column_name_the_column(sqlite_url: str) -> None:
    frame = rescored_book(3, 20, weighted=True)
    frame.loc[frame["score_date"].map(START.__contains__), "bad"] = 2
    load(sqlite_url, frame)
    req = migration_request(ON_SCORE, weighted=True)
    labels = r"column 'bad'.*label values 0, 1 or NULL"
    model = model_config(sqlite_url, rating={"migration": True})
    with Source(model) as source, pytest.raises(SourceError, match=labels):
        collect_migrations(source, req)
    model = model_config(sqlite_url, rating={"migration": True})
    model = model.model_copy(update={"columns": model.columns.model_copy(update={"obligor": "x"})})
    missing = r"column 'x' \(columns.obligor\): not found"
    with Source(model) as source, pytest.raises(SourceError, match=missing):
        collect_migrations(source, req)


@pytest.mark.parametrize("url_limit", [None, "300MB"])
def test_duckdb_counts_under_a_raised_memory_limit_then_restores_it(
    tmp_path: Path, url_limit: str | None
) -> None:
    pytest.importorskip("duckdb_engine", reason="DuckDB tests need duckdb-engine")
    url = f"duckdb:///{tmp_path / 'loans.duckdb'}"
    load(url, rescored_book(11, 50, weighted=True))
    model = model_config(url + (f"?memory_limit={url_limit}" if url_limit else ""))
    model = model.model_copy(update={"rating": model.rating.model_copy(update={"migration": True})})
    seen: list[str] = []
    with Source(model) as source:
        settings = source.profile.per_loan_settings
        assert settings is not None

        def spy(connection: Any) -> Any:
            manager = settings(connection)

            class Watch:
                def __enter__(self) -> None:
                    manager.__enter__()
                    seen.append(_memory_limit(connection))

                def __exit__(self, *exc: object) -> None:
                    manager.__exit__(*exc)

            return Watch()

        source.profile = dataclasses.replace(source.profile, per_loan_settings=spy)
        collect_migrations(source, migration_request(ON_SCORE, weighted=True))
        with source.reading() as connection:
            after = _memory_limit(connection)
    if url_limit is None:
        assert seen == ["122.0 MiB"]  # 128MB while counting
        assert after == "61.0 MiB"  # the 64MB of every other statement
    else:
        assert seen == ["286.1 MiB"]  # the URL's own, untouched
        assert after == "286.1 MiB"


def _memory_limit(connection: Any) -> str:
    return str(connection.exec_driver_sql("SELECT current_setting('memory_limit')").scalar())
