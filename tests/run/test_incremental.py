"""Daily cells: a run that reads only its fresh days stores what a run reading its windows in
full stores — figures, bins and alerts — night after night, on every engine, while late rows
arrive and rows are corrected within the restatement days; and a store upgraded from the
release before the cells reads incrementally from its next run on."""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from riskmon import cells
from riskmon.collect import daycells
from riskmon.collect.daycells import DayCells
from riskmon.collect.days import fresh_days, ranges
from riskmon.config import ModelConfig
from riskmon.plan import DateWindow
from riskmon.records import SCORE, SCORE_RANKING, Exclusions, LevelCount
from riskmon.run import run_model
from riskmon.store import MetricStore, upgrade
from riskmon.store.engine import store_engine

from ..collect.loans import load, loan_frame, model_config

NIGHTS = [dt.date(2025, 3, d) for d in (3, 4, 5, 9, 10)]


def _store(path: Path) -> MetricStore:
    engine = store_engine(f"sqlite:///{path}")
    upgrade(engine)
    return MetricStore(engine)


def _night(
    frame: pd.DataFrame, night: dt.date, rng: np.random.Generator
) -> tuple[pd.DataFrame, set[dt.date]]:
    """The book on ``night`` and the days it touched: loans scored on two of its last six days
    arrive late, and rows of two of the newest six days of the current window and of the
    performance cohort are corrected (the other days left as they were)."""
    late_days = [night - dt.timedelta(days=int(d)) for d in rng.choice(6, 2, replace=False)]
    late = loan_frame(int(rng.integers(1 << 30)), n=60)
    late["loan_id"] += int(frame["loan_id"].max()) + 1
    late["score_date"] = [late_days[int(i)] for i in rng.integers(0, 2, 60)]
    # with regions the baseline never had: the census of the unseen bin, by day
    late["region"] = rng.choice(np.array(["N", "NE", "SW", "Z", None], dtype=object), 60)
    book = pd.concat([frame, late], ignore_index=True)
    dates = pd.to_datetime(book["score_date"]).dt.date
    cohort_end = dt.date(2025, 2, night.day) if night.day <= 28 else dt.date(2025, 2, 28)
    touched = set(late_days)
    for end in (night, cohort_end):
        days = [end - dt.timedelta(days=int(d)) for d in rng.choice(6, 2, replace=False)]
        touched |= set(days)
        changed = dates.isin(days) & (rng.random(len(book)) < 0.3)
        book.loc[changed, "pd_score"] = np.round(rng.beta(2, 8, int(changed.sum())), 2)
        book.loc[changed, "bad"] = pd.array(rng.integers(0, 2, int(changed.sum())), dtype="Int64")
        book.loc[changed, "exposure"] = np.round(rng.gamma(2.0, 500.0, int(changed.sum())), 2)
    return book, touched


def _stored(store: MetricStore, model: str, day: dt.date) -> dict[str, Any]:
    run = store.run(model, day)
    assert run is not None
    assert run.status == "succeeded", run.error
    return {
        "figures": {
            (f.name, f.population, f.variable, f.segment): f for f in store.figures(run.id)
        },
        "bins": sorted(
            store.bins(run.id), key=lambda b: (b.population, b.variable, b.segment, b.bin_index)
        ),
        "alerts": sorted(
            (a.rule, a.variable, a.segment, str(a.status)) for a in store.alerts(run.id)
        ),
        "counts": (run.n_current, run.n_matured, run.n_unmatured),
    }


def _same_value(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _assert_same(incremental: dict[str, Any], full: dict[str, Any], night: dt.date) -> None:
    assert incremental["counts"] == full["counts"], night
    assert incremental["figures"].keys() == full["figures"].keys(), night
    for key, figure in full["figures"].items():
        other = incremental["figures"][key]
        assert _same_value(other.value, figure.value), (night, key, other.value, figure.value)
        assert other.reason == figure.reason, (night, key)
        # the parameters too: the unseen levels named (summed from the days' censuses), ...
        assert _same(other.params, figure.params), (night, key, other.params, figure.params)
    assert incremental["alerts"] == full["alerts"], night
    assert len(incremental["bins"]) == len(full["bins"]), night
    for a, b in zip(incremental["bins"], full["bins"], strict=True):
        for field in fields(a):
            mine, theirs = getattr(a, field.name), getattr(b, field.name)
            assert _same(mine, theirs), (night, a, field.name, mine, theirs)


def _same(a: Any, b: Any) -> bool:
    """Equal, floats (in dicts too) to 1e-12."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return _same_value(a, b)
    return bool(a == b)


def test_nightly_incremental_runs_store_what_full_runs_store(
    database: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each night runs the morning after its as-of date, as a scheduled run does: its newest
    days are not settled yet and are read again on the following nights."""
    incremental, model = _nights(database, tmp_path, monkeypatch)
    # the score's distinct values (101 in the baseline) were kept by day with the bins
    assert SCORE_RANKING in _kept_variables(incremental, model.name)


def test_nights_whose_every_column_is_kept_packed_store_what_full_runs_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A day's columns of many cells are kept packed (base64 of their 8-byte values) and read
    back as arrays; with every column packed, however small, the nights still store what the
    full runs store, and the cells kept are packed."""
    monkeypatch.setattr(daycells, "PACKED_MIN", 1)
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    incremental, model = _nights(("sqlite", url), tmp_path, monkeypatch)
    kept = incremental.day_cells(model.name, _digest_of(incremental), _windows(NIGHTS[-1]))
    columns = [c for data, _ in kept.values() for c in json.loads(data)["cells"]]
    assert columns
    assert all(type(keys) is str for *_, keys, _, _ in columns)


def test_a_day_is_estimated_no_more_raw_cells_than_its_loans() -> None:
    """A day's cells of the score's values: distinct scores × segments × label states, but no
    more than the baseline's loans a day (a cell holds a loan at least)."""
    ranking = SimpleNamespace(
        bins=SimpleNamespace(segments=lambda: ["a", "b"]), params={"n_distinct_scores": 5000}
    )
    request: Any = SimpleNamespace(
        label="bad", variables=[SimpleNamespace(n_keys=10), SimpleNamespace(n_keys=None)]
    )

    def baseline(rows: int) -> Any:
        start = dt.date(2024, 1, 1)
        return SimpleNamespace(
            variables={SCORE_RANKING: ranking},
            n_rows=rows,
            window_start=start,
            window_end=start + dt.timedelta(days=29),
        )

    assert cells.cells_per_day(request, baseline(3_000_000)) == 2 * 10 * 3
    assert cells.cells_per_day(request, baseline(3_000_000), raw=True) == 60 + 2 * 5000 * 3
    assert cells.cells_per_day(request, baseline(300_000), raw=True) == 60 + 10_000
    assert cells.cells_per_day(request, baseline(29), raw=True) == 60 + 1


def test_a_score_with_many_distinct_values_is_ranked_on_its_whole_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the baseline's distinct scores would make a day's cells too many, the score's
    values are read over the whole windows each night (the bins still by day), and the
    figures are those of ``--full`` all the same."""
    real = cells.cells_per_day

    def many(request: Any, baseline: Any, *, raw: bool = False) -> int:
        # as if the baseline had a thousand times as many distinct scores
        return real(request, baseline, raw=raw) * (1000 if raw else 1)

    monkeypatch.setattr(cells, "cells_per_day", many)
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    incremental, model = _nights(("sqlite", url), tmp_path, monkeypatch)
    kept = _kept_variables(incremental, model.name)
    assert SCORE_RANKING not in kept
    assert SCORE in kept


def _kept_variables(store: MetricStore, model: str) -> set[str]:
    """The variables of the cells the store keeps for ``model``; a binned variable's keys are
    its bins' integers (read apart from the score's values, whose type they would take)."""
    windows = _windows(NIGHTS[-1])
    kept = store.day_cells(model, _digest_of(store), windows)
    variables = set()
    for data, _ in kept.values():
        for (variable, _, _), column in DayCells.from_json(json.loads(data)).cells.items():
            variables.add(variable)
            keys, _, _ = column.lists()
            if variable != SCORE_RANKING:
                assert {type(k) for k in keys} == {int}, (variable, keys[:3])
    return variables


def _nights(
    database: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[MetricStore, ModelConfig]:
    """Run every night of :data:`NIGHTS` incrementally and with ``--full`` into two stores,
    checking that they store the same; the incremental store and the model."""
    dialect, url = database
    model = model_config(url, performance_window="1 month")
    rng = np.random.default_rng(31)
    book = loan_frame(seed=31, n=2500)
    incremental, full = _store(tmp_path / "incremental.db"), _store(tmp_path / "full.db")
    whole = _store(tmp_path / "whole.db")
    source = model.source.model_copy(update={"incremental": False})
    whole_model = model.model_copy(update={"source": source})
    before = None
    for night in NIGHTS:
        book, touched = _night(book, night, rng)
        load(url, book)
        morning = dt.datetime.combine(night + dt.timedelta(days=1), dt.time(2), dt.timezone.utc)
        monkeypatch.setattr(cells, "reading_time", lambda morning=morning: morning)
        # and a run reading its windows whole, keeping no cell: shares only the figures' code
        runs = ((incremental, model, False), (full, model, True), (whole, whole_model, False))
        for store, config, every_day in runs:
            outcome = run_model(config, night, store=store, notify=False, full=every_day)
            assert outcome.ok, outcome.error
        stored = _stored(incremental, model.name, night)
        _assert_same(stored, _stored(full, model.name, night), night)
        _assert_same(stored, _stored(whole, model.name, night), night)
        if before is not None and dialect != "mysql":
            # the restatement days nobody touched were fingerprinted, not read (MariaDB has
            # no exact row hash: it reads them all)
            start, _ = _windows(night)["current"]
            new = set(_days(before + dt.timedelta(days=1), night))
            expected = new | {d for d in touched if start <= d <= night}
            read, unchanged = _days_read(incremental, model.name, night)
            assert len(new) <= read <= len(expected), (night, read, sorted(expected))
            assert unchanged >= 1, night  # and said so in the provenance
        before = night
    last = NIGHTS[-1]
    # the new regions were counted and named (the same in both stores, compared above)
    figures = _stored(full, model.name, last)["figures"]
    unseen = figures[("unseen_rate", "current", "region", "")]
    assert {level for level, _ in unseen.params["largest"]} == {"NE", "SW", "Z"}
    # the incremental store read each night only its fresh days: its cells cover both windows
    kept = incremental.day_cells(model.name, _digest_of(incremental), _windows(last))
    assert {d for p, d in kept if p == "current"} == set(_days(dt.date(2025, 2, 11), last))
    return incremental, model


def _windows(night: dt.date) -> dict[str, tuple[dt.date, dt.date]]:
    """The run's current window (a month ending at ``night``)."""
    return {"current": (dt.date(2025, 2, night.day + 1), night)}


def _days(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


def _digest_of(store: MetricStore) -> str:
    with store.engine.connect() as connection:
        return str(connection.execute(text("SELECT DISTINCT digest FROM day_cells")).scalar_one())


def test_a_night_reads_only_its_fresh_days(tmp_path: Path) -> None:
    """After a first run, the next night's statements read the restatement days and the new
    day of each window, not the windows: the loans read are counted per statement."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=5, n=3000))
    model = model_config(url, performance_window="1 month")
    store = _store(tmp_path / "store.db")
    first = run_model(model, dt.date(2025, 3, 10), store=store, notify=False)
    second = run_model(model, dt.date(2025, 3, 11), store=store, notify=False)
    assert first.ok
    assert second.ok
    read = [
        _rows_read(store, model.name, day) for day in (dt.date(2025, 3, 10), dt.date(2025, 3, 11))
    ]
    # the first run read both windows in full; the second only 8 days of each
    assert read[1] < read[0] / 2, read


def _days_read(store: MetricStore, model: str, day: dt.date) -> tuple[int, int]:
    """The current window's days the run read from the source, and those it found unchanged,
    from its provenance."""
    run = store.run(model, day)
    assert run is not None
    assert run.provenance is not None
    window = run.provenance["windows"]["current"]
    return int(window["days_read"]), int(window["days_unchanged"])


def _rows_read(store: MetricStore, model: str, day: dt.date) -> int:
    """The rows the run's statements returned, from its provenance."""
    run = store.run(model, day)
    assert run is not None
    assert run.provenance is not None
    return sum(int(s["rows"]) for s in run.provenance["statements"])


def test_a_store_upgraded_from_the_release_before_reads_incrementally_on(tmp_path: Path) -> None:
    """A store at the release before the cells (0008) is upgraded; its next run reads in full
    and keeps its days, and the run after it reads only its fresh days."""
    from riskmon.store.migrate import upgrade as upgrade_to

    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=6, n=2000))
    model = model_config(url, performance_window="1 month")
    engine = store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    upgrade_to(engine, revision="0008")
    upgrade_to(engine)
    store = MetricStore(engine)
    assert run_model(model, dt.date(2025, 3, 10), store=store, notify=False).ok
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM day_cells")).scalar_one() > 0
    assert run_model(model, dt.date(2025, 3, 11), store=store, notify=False).ok
    assert (
        _rows_read(store, model.name, dt.date(2025, 3, 11))
        < _rows_read(store, model.name, dt.date(2025, 3, 10)) / 2
    )


# ------------------------------------------------------------------------- the days module
def test_fresh_days_are_the_unread_and_those_read_before_they_settled() -> None:
    window = DateWindow(dt.date(2025, 3, 1), dt.date(2025, 3, 31))
    days = _days(window.start, window.end)
    # read the morning after 03-30: the days up to 03-25 had settled (read 7 days on), the
    # newer ones are read again, and 03-31 for the first time
    nightly = {d: dt.date(2025, 4, 1) for d in days[:-1]}
    assert fresh_days(window, nightly, lag_days=0, restatement_days=7) == days[-6:]
    # a backfill read today: every day settled, only the unread ones
    today = {d: dt.date(2026, 11, 26) for d in days[:10] + days[20:]}
    assert fresh_days(window, today, lag_days=0, restatement_days=7) == days[10:20]
    # a cohort's days settle 7 days after their outcome was due (here 365 days on)
    cohort = {d: d + dt.timedelta(days=365 + 3) for d in days}
    assert fresh_days(window, cohort, lag_days=365, restatement_days=7) == days
    cohort = {d: d + dt.timedelta(days=365 + 7) for d in days}
    assert fresh_days(window, cohort, lag_days=365, restatement_days=7) == []
    assert fresh_days(window, today, lag_days=0, restatement_days=7, full=True) == days
    assert ranges([dt.date(2025, 1, 3), dt.date(2025, 1, 1), dt.date(2025, 1, 2)]) == [
        DateWindow(dt.date(2025, 1, 1), dt.date(2025, 1, 3))
    ]


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.dates(),
    st.datetimes().map(lambda d: d.replace(fold=0)),  # a driver's datetimes have no fold
    st.decimals(allow_nan=False, allow_infinity=False, places=4),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    segment=_values,
    key=_values,
    label=st.sampled_from([None, 0, 1]),
    weight=st.floats(0, 1e9) | st.sampled_from([math.inf, -math.inf, math.nan, -0.0]),
)
def test_a_cell_reads_back_from_json_as_it_was(
    segment: Any, key: Any, label: Any, weight: float
) -> None:
    cell_key = ("v", (segment,), label, key)
    cells = DayCells(
        sums={cell_key: [0.5, float("inf"), -0.0]},
        exclusions=Exclusions(4, null_score=1, duplicates=None),
        levels={"region": [LevelCount(str(key), 2, weight)], "grade": []},
    )
    cells.add(cell_key, np.int64(3), weight)  # type: ignore[arg-type]  # as numpy hands it
    back = DayCells.from_json(json.loads(json.dumps(cells.to_json())))
    ((k, v),) = back.items()
    assert repr(v) == repr((3, weight))  # NaN and -0.0 included
    assert repr(k) == repr(cell_key)  # equal, and of the same types (NaN included)
    assert list(back.sums.values()) == [[0.5, float("inf"), -0.0]]
    assert back.exclusions == cells.exclusions
    assert repr(back.levels) == repr(cells.levels)


def test_a_model_with_thousands_of_segments_reads_its_windows_whole(tmp_path: Path) -> None:
    """Where a day's sums would be about as many as its loans (a segment of a level per few
    loans), the run reads its windows whole and keeps no cell: by day they would cost more."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    book = loan_frame(seed=8, n=6000)
    book["branch"] = [f"b{i}" for i in range(len(book))]  # a level per loan
    load(url, book)
    model = model_config(url, performance_window="1 month")
    columns = model.columns.model_copy(update={"segments": ["branch"]})
    model = model.model_copy(update={"columns": columns})
    store = _store(tmp_path / "store.db")
    assert run_model(model, dt.date(2025, 3, 10), store=store, notify=False).ok
    run = store.run(model.name, dt.date(2025, 3, 10))
    assert run is not None
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM day_cells")).scalar_one() == 0
        stored = connection.execute(
            text("SELECT provenance FROM runs WHERE id = :id"), {"id": run.id}
        ).scalar_one()
    data = json.loads(stored) if isinstance(stored, str) else stored
    assert {w["days_read"] for w in data["windows"].values()} == {None}


def test_riskmon_run_full_reads_every_day_again(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from riskmon.cli import cli

    from .sources import config_of, write_config

    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=9, n=2000))
    path = tmp_path / "riskmon.yaml"
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    write_config(path, config_of(store_url, [model_config(url, performance_window="1 month")]))
    _store(tmp_path / "store.db").engine.dispose()
    runner = CliRunner()
    for args in (["run", "--as-of", "2025-03-10"], ["run", "--as-of", "2025-03-11"]):
        result = runner.invoke(cli, ["-c", str(path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    forced = ["run", "--as-of", "2025-03-11", "--force", "--full"]
    result = runner.invoke(cli, ["-c", str(path), *forced], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    store = MetricStore.open(store_url)
    run = store.run("retail_pd", dt.date(2025, 3, 11))
    assert run is not None
    assert run.provenance is not None
    windows = run.provenance["windows"].values()
    assert [w["days_read"] for w in windows] == [w["days"] for w in windows]
    store.engine.dispose()


def test_a_run_decodes_only_the_stored_days_whose_text_changed() -> None:
    """The next run of a model in the same process (a backfill's next day) reuses the cells
    decoded by the last one where a day's stored text is the same, and decodes a day kept
    again with other sums, or any day of another digest."""

    def text(rows: int) -> str:
        day = DayCells()
        day.add((SCORE, (), 0, 3), rows, float(rows))
        return json.dumps(day.to_json())

    first_day, second_day = ("current", dt.date(2025, 3, 1)), ("current", dt.date(2025, 3, 2))
    read_on = dt.date(2025, 3, 4)
    before = cells._decode(
        "cached", "d1", {first_day: (text(2), read_on), second_day: (text(5), read_on)}
    )
    after = cells._decode(
        "cached", "d1", {first_day: (text(2), read_on), second_day: (text(7), read_on)}
    )
    assert after[first_day] is before[first_day]
    assert after[second_day] is not before[second_day]
    assert list(after[second_day].items()) == [((SCORE, (), 0, 3), (7, 7.0))]
    other = cells._decode("cached", "d2", {first_day: (text(2), read_on)})
    assert other[first_day] is not after[first_day]
    assert list(other[first_day].items()) == list(after[first_day].items())
