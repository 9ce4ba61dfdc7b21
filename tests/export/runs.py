"""A run stored through the store's own API, with the figures a test gives it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from riskmon.records import FigureRecord, RunCounts
from riskmon.store import MetricStore

AS_OF = dt.date(2025, 6, 30)
PLAN = {"current": ["2024-07-01", "2025-06-30"], "performance": ["2024-07-01", "2025-06-30"]}


def stored_run(
    store: MetricStore, model: str, figures: Sequence[FigureRecord], as_of: dt.date = AS_OF
) -> int:
    """Claim and complete a run of ``model`` as of ``as_of`` holding ``figures``."""
    run_id = store.claim_run(
        model, as_of, score_direction="higher_is_riskier", config_hash="test", plan=PLAN
    )
    counts = RunCounts(n_current=40, n_matured=40, n_unmatured=0)
    store.complete_run(run_id, counts=counts, figures=figures, plan=PLAN)
    return run_id
