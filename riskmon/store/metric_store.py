"""The one entry to the metric store: :class:`MetricStore`, made of the store's parts.

Each part owns one responsibility and the tables it writes; they share one engine and one way
of running a transaction (:mod:`riskmon.store._session`):

- :mod:`riskmon.store.runs` — claims, heartbeats, completion and failure of runs;
- :mod:`riskmon.store.baselines` — frozen baseline versions;
- :mod:`riskmon.store.reads` — runs, figures, bins, alerts and history, read back;
- :mod:`riskmon.store.deliveries` — notification attempts and alert notification state;
- :mod:`riskmon.store.reviews` — reviews of runs, only ever appended;
- :mod:`riskmon.store.cells` — each model's daily collect sums, kept between runs.
"""

from __future__ import annotations

from riskmon.store.baselines import Baselines
from riskmon.store.cells import DayCellStore
from riskmon.store.deliveries import Deliveries
from riskmon.store.engine import store_engine
from riskmon.store.reads import Reads
from riskmon.store.reviews import Reviews
from riskmon.store.runs import Runs


class MetricStore(Runs, Baselines, Reads, Deliveries, Reviews, DayCellStore):
    """Reads and writes runs, figures, bins, alerts and baselines."""

    @classmethod
    def open(cls, url: str) -> MetricStore:
        """A store on the database at ``url`` (which ``riskmon db upgrade`` has migrated)."""
        return cls(store_engine(url))
