"""A PostgreSQL database holding both the loans and the metric store, for the fault tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from riskmon.store import MetricStore
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

from .sources import freeze_baseline, load_loans


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[MetricStore]:
    """A migrated store on PostgreSQL whose database also has the loans and a frozen baseline."""
    load_loans(postgres_url)
    engine = store_engine(postgres_url)
    upgrade(engine)
    store = MetricStore(engine)
    freeze_baseline(postgres_url, store)
    yield store
    engine.dispose()
