"""A PostgreSQL database holding both the loans and the metric store, for the signal tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from riskmon.store import MetricStore

from ..run.sources import postgres_store


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[MetricStore]:
    """A migrated store on PostgreSQL whose database also has the loans and a frozen baseline."""
    with postgres_store(postgres_url) as store:
        yield store
