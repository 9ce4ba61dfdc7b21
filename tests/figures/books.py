"""Helpers of the run-level figure tests: a book of loans written to SQLite, a model of it, a
freshly migrated metric store."""

from __future__ import annotations

import atexit
import functools
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import create_engine

from riskmon.config import ModelConfig, RiskmonConfig, parse_config
from riskmon.store import MetricStore
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade


def write_loans(url: str, book: pd.DataFrame) -> None:
    """``book`` as the table ``loans`` of the database at ``url``."""
    engine = create_engine(url)
    book.to_sql("loans", engine, index=False)
    engine.dispose()


def days_of(rng: Any, start: pd.Timestamp, n: int) -> list[Any]:
    """``n`` random score dates in the month of ``start``."""
    days = rng.integers(0, start.days_in_month, n)
    return [(start + pd.Timedelta(days=int(d))).date() for d in days]


def book_model(url: str, **model: Any) -> ModelConfig:
    """A model of the ``loans`` table at ``url``; ``model`` adds to or replaces its keys."""
    config: dict[str, Any] = {
        "name": "m",
        "source": {"url": url, "table": "loans"},
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2023-07-01", "end": "2023-12-31"},
        **model,
    }
    return parse_config({"models": [config]}, source="test", env={}).models[0]


@functools.cache
def _migrated_template() -> Path:
    """A SQLite store migrated to the head revision, once per test process (the migrations
    themselves are tested in tests/store); removed when the process exits."""
    folder = Path(tempfile.mkdtemp(prefix="riskmon-store-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "store.db"
    engine = store_engine(f"sqlite:///{path}")
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    return path


def migrated_sqlite(path: Path) -> None:
    """Make ``path`` a SQLite store at the head revision: a copy (SQLite's backup) of
    :func:`_migrated_template`, the schema and version a migration would leave, in a fraction
    of its time."""
    template = _migrated_template()
    with closing(sqlite3.connect(template)) as source, closing(sqlite3.connect(path)) as target:
        source.backup(target)


def fresh_store(folder: Path) -> MetricStore:
    """A migrated SQLite metric store in ``folder``."""
    path = folder / "store.db"
    migrated_sqlite(path)
    return MetricStore.open(f"sqlite:///{path}")


def report_config(store: MetricStore, model: ModelConfig, folder: Path) -> RiskmonConfig:
    """A configuration of ``model`` on ``store``, its reports written to ``folder/reports``."""
    return parse_config(
        {
            "store": {"url": str(store.engine.url), "reports_dir": str(folder / "reports")},
            "models": [model.model_dump(exclude_defaults=True)],
        },
        source="test",
        env={},
    )
