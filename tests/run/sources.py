"""Shared by the fault tests: slow PostgreSQL sources, configuration files, bounded waits."""

from __future__ import annotations

import datetime as dt
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.engine import make_url

from riskmon.baseline import freeze
from riskmon.collect import Source
from riskmon.config import ModelConfig, RiskmonConfig, parse_config
from riskmon.store import MetricStore
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

from ..collect.loans import load, loan_frame, model_config

MODEL = "retail_pd"
#: an as-of date the synthetic loans cover (current and matured populations both non-empty)
AS_OF = dt.date(2025, 3, 31)
#: every query on a slow source sleeps this long once: a run makes about six of them
SLOW_SECONDS = 0.4
#: the PostgreSQL application_name of a slow source's connections, to find their backends
SLOW_APPLICATION = "riskmon_slow_source"


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def slow_query(seconds: float = SLOW_SECONDS) -> str:
    """A source query that reads the loans table after sleeping ``seconds`` on the server, in
    every statement that reads it: the sleep is a one-time filter, evaluated before any row
    (joined as a table instead, the planner may never run it when no loan is in the window)."""
    return f"SELECT loans.* FROM loans WHERE (SELECT pg_sleep({seconds})) IS NOT NULL"


def loans_model(url: str, **overrides: Any) -> ModelConfig:
    """The test model on the ``loans`` table at ``url``, scheduled nightly at 02:00."""
    options: dict[str, Any] = {"performance_window": "2 months", "schedule": "0 2 * * *"}
    return model_config(url, **{**options, **overrides})


def slow_model(url: str, seconds: float = SLOW_SECONDS, **overrides: Any) -> ModelConfig:
    """The test model reading the loans at ``url`` through :func:`slow_query`, its connections
    named :data:`SLOW_APPLICATION`."""
    named = str(make_url(url).update_query_dict({"application_name": SLOW_APPLICATION}))
    return loans_model(url, source={"url": named, "query": slow_query(seconds)}, **overrides)


def load_loans(url: str, *, seed: int = 7, n: int = 3000) -> None:
    load(url, loan_frame(seed, n))


def freeze_baseline(url: str, store: MetricStore) -> None:
    """Freeze the model's baseline from the plain table, so that a slow run only collects."""
    model = loans_model(url)
    with Source(model) as source:
        freeze(model, source, store)


@contextmanager
def postgres_store(url: str) -> Iterator[MetricStore]:
    """A migrated store at ``url`` whose database also has the loans and a frozen baseline."""
    load_loans(url)
    engine = store_engine(url)
    try:
        upgrade(engine)
        store = MetricStore(engine)
        freeze_baseline(url, store)
        yield store
    finally:
        engine.dispose()


def config_of(store_url: str, models: Sequence[ModelConfig], **scheduler: Any) -> dict[str, Any]:
    """A configuration document (as YAML would give it) with ``models`` and ``scheduler``."""
    return {
        "store": {"url": store_url},
        "scheduler": scheduler,
        "models": [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in models],
    }


def write_config(path: Path, document: dict[str, Any]) -> RiskmonConfig:
    """Write ``document`` as YAML to ``path`` and return it validated."""
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return parse_config(document, source=str(path), env={})


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)


def run_status(store: MetricStore, as_of: dt.date = AS_OF, model: str = MODEL) -> str | None:
    run = store.run(model, as_of)
    return None if run is None else run.status
