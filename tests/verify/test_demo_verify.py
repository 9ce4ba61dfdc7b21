"""The demo's runs verify: from its stored count tables, every run; from its source, a run,
which fails, naming the window and its counts, once a month of the source is altered."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from pathlib import Path

from riskmon.config import load_config
from riskmon.store import MetricStore
from riskmon.verify import verify_from_store, verify_run

JUNE = dt.date(2024, 6, 30)


def test_every_demo_run_follows_from_its_stored_count_tables(demo: tuple[Path, str]) -> None:
    folder, _ = demo
    config = load_config(folder / "riskmon.yaml")
    store = MetricStore.open(config.store.url)
    checked = 0
    for model in config.models:
        for run in store.runs(model.name):
            found = verify_from_store(model, run.as_of, store=store)
            assert found.identical, found.lines()
            if model.kind == "pd":
                assert {"stability", "quality"} <= set(found.recomputed)
            else:  # the back-test's joint table of sums is not stored: said, not passed over
                assert found.recomputed == {}
                assert found.not_recomputable == {"backtest": "the target's moments"}
            checked += 1
    assert checked == 60
    store.engine.dispose()


def test_a_demo_run_fails_to_verify_once_its_month_is_altered(
    demo: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = demo
    config = load_config(folder / "riskmon.yaml")
    store = MetricStore.open(config.store.url)
    model = config.model("application_scorecard")
    copy = tmp_path / "loans.db"
    shutil.copy(folder / "loans.db", copy)
    moved = model.model_copy(
        update={"source": model.source.model_copy(update={"url": f"sqlite:///{copy}"})}
    )
    june = "score_date BETWEEN '2024-06-01' AND '2024-06-30'"
    with sqlite3.connect(copy) as connection:
        read = connection.execute(f"SELECT COUNT(*) FROM scored_loans WHERE {june}").fetchone()[0]
        connection.execute(f"UPDATE scored_loans SET app_points = app_points - 40 WHERE {june}")
        connection.execute(
            f"DELETE FROM scored_loans WHERE loan_id IN "
            f"(SELECT loan_id FROM scored_loans WHERE {june} LIMIT 5)"
        )
    found = verify_run(moved, JUNE, store=store)
    store.engine.dispose()
    assert not found.identical
    causes = found.causes()
    assert causes[0] == (
        f"the source's rows changed: current window 2024-06-01 to 2024-06-30: read {read} → "
        f"{read - 5}, used {read} → {read - 5}, unlabeled {read} → {read - 5}, count tables "
        "differ"
    ), causes
    # the copy's URL is the only change of configuration, and said so
    assert found.config_keys == ("source.url",)
    assert len(causes) == 2


def test_the_demos_runs_read_by_day_equal_a_reading_of_their_windows_whole(
    demo: tuple[Path, str],
) -> None:
    """The demo's runs read their windows by day (daily cells, each month's days once; the
    LGD and CCF models' year-long observation windows their new month only) but for the
    behaviour model's, whose segments and raw scores would make a day's sums too many;
    recomputed from the source reading every day of the windows at once, June's and the newest
    run of every model store the same figures and window counts."""
    folder, _ = demo
    config = load_config(folder / "riskmon.yaml")
    store = MetricStore.open(config.store.url)
    by_day = 0
    for model in config.models:
        runs = store.runs(model.name)
        for as_of in {runs[-1].as_of, JUNE}:
            stored = store.run(model.name, as_of)
            assert stored is not None
            assert stored.provenance is not None
            windows = stored.provenance["windows"].values()
            by_day += any(w.get("days_read") is not None for w in windows)
            if model.kind != "pd":  # the observation window's earlier months from the store
                assert stored.provenance["windows"]["performance"]["days_read"] <= 31
            found = verify_run(model, as_of, store=store)
            assert found.identical, (model.name, as_of, found.causes(), found.differences[:5])
    store.engine.dispose()
    assert by_day == 2 * (len(config.models) - 1)
