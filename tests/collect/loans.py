"""Synthetic scored-loan tables for the collect tests, loaders for each database, and a record
of the statements a collect sends."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine

from riskmon.config import ModelConfig, parse_config

CURRENT = (dt.date(2025, 3, 1), dt.date(2025, 3, 31))
PERFORMANCE = (dt.date(2025, 1, 1), dt.date(2025, 1, 31))


def loan_frame(seed: int, n: int = 3000, *, weighted: bool = True) -> pd.DataFrame:
    """Loans scored between 2024-12-15 and 2025-04-15: heavy score ties, NULL labels,
    NULL characteristics, categories the baseline binning has never seen, two segments."""
    rng = np.random.default_rng(seed)
    start = dt.date(2024, 12, 15)
    days = rng.integers(0, 122, n)
    frame = pd.DataFrame(
        {
            "loan_id": np.arange(n),
            "score_date": [start + dt.timedelta(days=int(d)) for d in days],
            "pd_score": np.round(rng.beta(2, 8, n), 2),
            "bad": pd.array(
                np.where(rng.random(n) < 0.08, pd.NA, (rng.random(n) < 0.15).astype(int)),
                dtype="Int64",
            ),
            "income": np.where(rng.random(n) < 0.1, np.nan, np.round(rng.normal(50, 12, n), 0)),
            "region": rng.choice(np.array(["N", "S", "E", "W", None], dtype=object), n),
            "grade": pd.array(
                np.where(rng.random(n) < 0.05, pd.NA, rng.integers(1, 6, n)), dtype="Int64"
            ),
            "channel": rng.choice(np.array(["web", "branch", None], dtype=object), n),
        }
    )
    if weighted:
        frame["exposure"] = np.round(rng.gamma(2.0, 500.0, n), 2)
    return frame


def model_config(
    url: str, *, weighted: bool = True, table: str = "loans", **overrides: Any
) -> ModelConfig:
    columns: dict[str, Any] = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": "pd_score",
        "label": "bad",
        "segments": ["channel"],
    }
    if weighted:
        columns["weight"] = "exposure"
    config = parse_config(
        {
            "models": [
                {
                    "name": "retail_pd",
                    "source": {"url": url, "table": table},
                    "columns": columns,
                    "score_direction": "higher_is_riskier",
                    "characteristics": [
                        {"name": "income", "kind": "numeric"},
                        {"name": "region", "kind": "categorical"},
                        {"name": "grade", "kind": "categorical"},
                    ],
                    "baseline": {"start": "2024-12-15", "end": "2024-12-31"},
                    **overrides,
                }
            ]
        },
        source="test",
        env={},
    )
    return config.models[0]


def load(url: str, frame: pd.DataFrame, table: str = "loans") -> None:
    """Write ``frame`` as ``table`` into the database at ``url`` (replacing it)."""
    if url.startswith("duckdb"):
        import duckdb

        with duckdb.connect(url.removeprefix("duckdb:///")) as connection:
            connection.register("frame", frame)
            connection.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM frame")
        return
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            frame.to_sql(table, connection, index=False, if_exists="replace", chunksize=5000)
    finally:
        engine.dispose()


@contextmanager
def statements_with(engine: Engine, marker: str) -> Iterator[list[str]]:
    """The statements run on ``engine`` meanwhile whose text holds ``marker`` (upper case)."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if marker in statement.upper():
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)
