"""Helpers of the run-level figure tests: a book of loans written to SQLite, a model of it, a
freshly migrated metric store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import create_engine

from riskmon.config import ModelConfig, RiskmonConfig, parse_config
from riskmon.store import MetricStore
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


def fresh_store(folder: Path) -> MetricStore:
    """A migrated SQLite metric store in ``folder``."""
    store = MetricStore.open(f"sqlite:///{folder / 'store.db'}")
    upgrade(store.engine)
    return store


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
