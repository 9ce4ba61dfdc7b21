"""A `riskmon run` killed (SIGKILL) after it read the stored cells, or while it was keeping its
new ones, leaves the cells as they were before it — none half-written — and the date, run
again, stores the figures a run reading its windows in full stores (SQLite and PostgreSQL
stores)."""

from __future__ import annotations

import datetime as dt
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text, update

from riskmon.run import run_model
from riskmon.store import MetricStore, models
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

from .. import forkserver
from .sources import MODEL, config_of, load_loans, loans_model, write_config

KILL_CELLS = Path(__file__).with_name("kill_cells.py")
PROCESS_TIMEOUT = 120
FIRST, NEXT = dt.date(2025, 3, 30), dt.date(2025, 3, 31)


def _riskmon(config: Path, as_of: dt.date, *, kill_at: str | None = None) -> int:
    prefix = [str(KILL_CELLS), kill_at, "--"] if kill_at else ["-m", "riskmon"]
    child = forkserver.run(
        [sys.executable, *prefix, "-c", str(config), "run", "--as-of", str(as_of), "--force"],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )
    return child.returncode


def _cells(store: MetricStore) -> list[tuple[Any, ...]]:
    with store.engine.connect() as connection:
        rows = connection.execute(
            text("SELECT population, day, digest, cells, read_at FROM day_cells")
        ).all()
    return sorted((p, str(d), g, str(c), str(r)) for p, d, g, c, r in rows)


def _figures(store: MetricStore, as_of: dt.date) -> dict[tuple[str, ...], float | None]:
    run = store.run(MODEL, as_of)
    assert run is not None
    assert run.status == "succeeded", run.error
    return {(f.name, f.population, f.variable, f.segment): f.value for f in store.figures(run.id)}


def _stale(store: MetricStore) -> None:
    """The killed process's claim, as it is half an hour later: stale, taken over."""
    long_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    with store.engine.begin() as connection:
        connection.execute(update(models.Run).values(heartbeat_at=long_ago))


@pytest.mark.parametrize("step", ["read", "keeping"])
def test_a_killed_run_leaves_the_cells_as_they_were(
    step: str, store_url: str, tmp_path: Path
) -> None:
    loans = f"sqlite:///{tmp_path / 'loans.db'}"
    load_loans(loans)
    path = tmp_path / "riskmon.yaml"
    write_config(path, config_of(store_url, [loans_model(loans)]))
    engine = store_engine(store_url)
    upgrade(engine)
    store = MetricStore(engine)
    try:
        assert _riskmon(path, FIRST) == 0
        before = _cells(store)
        assert before, "the first run kept its days"
        assert _riskmon(path, NEXT, kill_at=step) == -signal.SIGKILL
        assert _cells(store) == before  # nothing of the killed run's cells, nothing lost
        _stale(store)
        assert _riskmon(path, NEXT) == 0
        assert _cells(store) != before
        # the date run again stores what a run reading every day stores
        full = MetricStore(store_engine(f"sqlite:///{tmp_path / 'full.db'}"))
        upgrade(full.engine)
        assert run_model(loans_model(loans), NEXT, store=full, notify=False, full=True).ok
        ours, theirs = _figures(store, NEXT), _figures(full, NEXT)
        assert ours.keys() == theirs.keys()
        for key, value in theirs.items():
            assert ours[key] == pytest.approx(value, rel=1e-12, abs=1e-12, nan_ok=True), key
    finally:
        engine.dispose()
