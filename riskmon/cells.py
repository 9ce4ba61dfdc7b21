"""A run's daily cells: which days it reads, and keeping the days it read.

:func:`day_plan` looks up the cells the metric store holds for the run's windows
(:mod:`riskmon.collect.days`: per population and score day, for the request's digest) and
chooses the days to read: those without a cell, and those whose cell was read before the day
settled (``source.restatement_days`` after its outcome was due,
:func:`riskmon.collect.days.fresh_days`); of these, the collect reads only the days whose
rows changed since (:mod:`riskmon.collect.fingerprint`, where the engine hashes rows).
:func:`keep_cells` stores the days the run read (and those found unchanged) once the run itself
is stored, in a transaction of its own; a failure there is logged and costs the next run a
reading.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from riskmon.baseline import RunBaseline
from riskmon.collect import CollectRequest
from riskmon.collect.daycells import DayCells
from riskmon.collect.days import DayPlan, fresh_days, request_digest, settled
from riskmon.config import ModelConfig
from riskmon.errors import StoreError
from riskmon.records import SCORE_RANKING
from riskmon.store import MetricStore, StoredBaseline

log = logging.getLogger(__name__)


def reading_time() -> dt.datetime:
    """Now, in UTC: when a run reads its source (the date its cells are kept as read on)."""
    return dt.datetime.now(dt.timezone.utc)


@dataclass(frozen=True)
class RunDays:
    """A run's reading by day: the cells' digest, when the run read, and the plan."""

    digest: str
    read_at: dt.datetime
    plan: DayPlan


#: the cells a day may hold, estimated from the baseline's segments and the request's keys
#: (:func:`cells_per_day`), for a model to read by day: beyond it a day's sums are about as
#: many rows as its loans (thousands of segments), and the windows are read whole
MAX_CELLS_PER_DAY = 50_000


def cells_per_day(request: CollectRequest, baseline: StoredBaseline, *, raw: bool = False) -> int:
    """An upper estimate of a day's cells: segments (as many as the baseline's) × every
    binned variable's keys × label states; with ``raw``, the cells of the variables grouped on
    raw values too, each as many as the baseline's distinct scores × segments × label states,
    but no more than a day's loans (the baseline's, on average): a cell holds a loan at least."""
    segments = max((len(v.bins.segments()) for v in baseline.variables.values()), default=1)
    segments = max(segments, 1)
    ranking = baseline.variables.get(SCORE_RANKING)
    distinct = 0 if ranking is None else int(ranking.params.get("n_distinct_scores", 0))
    labels = 3 if request.label is not None else 1
    binned = segments * sum(v.n_keys or 0 for v in request.variables) * labels
    if not raw:
        return binned
    days = (baseline.window_end - baseline.window_start).days + 1
    loans = -(-baseline.n_rows // max(days, 1))
    each = min(segments * distinct * labels, loans)
    return binned + each * sum(1 for v in request.variables if not v.n_keys)


def day_plan(
    model: ModelConfig, store: MetricStore, baseline: RunBaseline, *, full: bool = False
) -> RunDays | None:
    """The days the run's request reads and the stored cells of the others; with ``full``,
    every day is read (and kept). None: the model reads its windows whole
    (``source.incremental`` off, or more cells a day than :data:`MAX_CELLS_PER_DAY`)."""
    request = baseline.request
    if not model.source.incremental:
        return None
    estimate = cells_per_day(request, baseline.stored)
    if estimate > MAX_CELLS_PER_DAY:
        log.info(
            "%s: reads its windows whole: about %d sums a day (segments x bins) would be kept "
            "against at most %d",
            model.name,
            estimate,
            MAX_CELLS_PER_DAY,
        )
        return None
    # the score's distinct values kept by day too where a day's cells stay as few with them
    # (a scorecard's points, a PD of 4 decimals at 30,000 loans a day); else read over the
    # whole windows (a day's cells about as many as its loans: benchmarks/incremental.md)
    raw_by_day = cells_per_day(request, baseline.stored, raw=True) <= MAX_CELLS_PER_DAY
    read_at = reading_time()
    digest = request_digest(request, raw_by_day=raw_by_day)
    windows = {p.name: (p.window.start, p.window.end) for p in request.populations}
    stored = {} if full else store.day_cells(model.name, digest, windows)
    newest = max((p.window.end for p in request.populations), default=read_at.date())
    # a cohort's days are due their labels this long after the current window's
    lag = {p.name: (newest - p.window.end).days for p in request.populations}
    fresh = {
        p.name: fresh_days(
            p.window,
            {day: read_on for (name, day), (_, read_on) in stored.items() if name == p.name},
            lag_days=lag[p.name],
            restatement_days=model.source.restatement_days,
            full=full,
        )
        for p in request.populations
    }
    reread = {(name, day) for name, days in fresh.items() for day in days}
    decoded = _decode(model.name, digest, stored)
    kept = {key: cells for key, cells in decoded.items() if key not in reread}
    recheck = {
        key: cell
        for key in reread & stored.keys()
        if (cell := decoded[key]).fingerprint is not None
    }
    # the days read now that a later night reads again: their fingerprint is kept with them
    restatement = model.source.restatement_days
    unsettled = {
        day for (name, day) in reread if not settled(day, read_at.date(), lag[name], restatement)
    }
    printed = frozenset(unsettled | {day for _, day in recheck})
    plan = DayPlan(fresh, kept, recheck, printed, raw_by_day=raw_by_day)
    return RunDays(digest, read_at, plan)


#: per model, the digest and the cells its last run in this process decoded, each with a hash
#: of the JSON text it was decoded from: the model's next run (the next day of a backfill, a
#: scheduler's next night) decodes only the days whose text differs (new days, days kept again
#: with other sums). Only the last run's days are held; cells are never changed once decoded.
_decoded: dict[str, tuple[str, dict[tuple[str, dt.date], tuple[bytes, DayCells]]]] = {}


def _decode(
    model: str, digest: str, stored: Mapping[tuple[str, dt.date], tuple[str, dt.date]]
) -> dict[tuple[str, dt.date], DayCells]:
    """The stored cells of ``model`` decoded, from the last run's where the text is the same."""
    held_digest, held = _decoded.get(model, ("", {}))
    before = held if held_digest == digest else {}
    now: dict[tuple[str, dt.date], tuple[bytes, DayCells]] = {}
    for key, (text, _) in stored.items():
        text_hash = hashlib.blake2b(text.encode(), digest_size=16).digest()
        seen = before.get(key)
        if seen is not None and seen[0] == text_hash:
            now[key] = seen
        else:
            now[key] = (text_hash, DayCells.from_json(json.loads(text)))
    _decoded[model] = (digest, now)
    return {key: cells for key, (_, cells) in now.items()}


def keep_cells(
    store: MetricStore,
    model: ModelConfig,
    days: RunDays | None,
    day_cells: Mapping[tuple[str, Any], DayCells],
) -> None:
    """Store the cells of the days the run read (``CollectedTables.day_cells``; nothing when
    it read none by day)."""
    if days is None or not day_cells:
        return
    try:
        rows = {key: cells.to_json() for key, cells in day_cells.items()}
        store.keep_day_cells(model.name, days.digest, rows, read_at=days.read_at)
    except (StoreError, TypeError) as exc:  # another process kept them first; a key JSON lacks
        log.warning(
            "%s: the days read were not kept (%s); a later run reads them again", model.name, exc
        )
