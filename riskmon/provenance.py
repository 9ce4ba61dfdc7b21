"""Where a run's figures came from, as the run stores it beside them.

:func:`run_provenance` gathers, for one run: the code version, the configuration's fingerprint
and the configuration itself (secrets masked), every statement the source read ran (the
SHA-256 of its SQL text and bound values, and the rows it returned), each window's counts (the
loans read and used, the bads, and a digest of its count tables), and the baseline compared
with. ``riskmon verify`` recomputes the window counts from the source as it is now and names
the window whose rows changed (:func:`window_counts`).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Any

import numpy as np

from riskmon import __version__
from riskmon.collect import ALL, CollectedTables, Source
from riskmon.config import ModelConfig, masked_config, model_fingerprint
from riskmon.records import SCORE
from riskmon.store import StoredBaseline


def _tables_digest(collected: CollectedTables, population: str) -> str:
    """A digest of every count table of ``population``: the rows and bads per bin (and each
    score value of a score table), in the order of their keys."""
    digest = hashlib.sha256()
    for key in sorted(k for k in collected.tables if k[0] == population):
        table = collected.tables[key]
        digest.update(repr(key).encode("utf-8", "surrogatepass"))
        for array in (table.n_total, table.n_bads, table.values):
            if array is not None:
                digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def window_counts(collected: CollectedTables) -> dict[str, dict[str, Any]]:
    """Per population (window): its dates, the loans read and used, those without a label,
    the bads, and the digest of its count tables."""
    out: dict[str, dict[str, Any]] = {}
    for population, window in sorted(collected.windows.items()):
        counts = collected.counts.get((population, ALL))
        excluded = collected.exclusions.get(population)
        score = collected.tables.get((population, SCORE, ALL))
        bads = None
        if score is not None and score.n_bads is not None:
            bads = int(np.sum(score.n_bads))
        out[population] = {
            "start": window.start.isoformat(),
            "end": window.end.isoformat(),
            "read": None if excluded is None else excluded.read,
            "used": None if counts is None else counts.n_rows,
            "unlabeled": None if counts is None else counts.n_unlabeled,
            "bads": bads,
            "tables_sha256": _tables_digest(collected, population),
            "days": (window.end - window.start).days + 1,
            # read from the source; the window's other days were summed from stored cells
            "days_read": collected.days_read.get(population),
            # of the days not read, those checked against the source and found unchanged
            "days_unchanged": collected.days_unchanged.get(population),
        }
    return out


def collected_shape(collected: CollectedTables) -> dict[str, Any]:
    """Which count tables the run read (population, variable, segment), the loans of each
    population and segment (used, without a label) and each population's loans read and left
    out: what ``riskmon verify --from-store`` needs beside the stored bins."""
    return {
        # the tables' own keys (tuples, stored as JSON arrays): lists made of them took 8 MB
        # more at 5,000 segments, held until the run is stored
        "tables": sorted(collected.tables),
        "rows": sorted(
            [population, segment, c.n_rows, c.n_unlabeled]
            for (population, segment), c in collected.counts.items()
        ),
        "exclusions": {p: asdict(e) for p, e in sorted(collected.exclusions.items())},
        "invalid_pd": collected.invalid_pd,
        "levels": {
            v: {"n_levels": c.n_levels, "levels": [[x.level, x.n, x.weight] for x in c.levels]}
            for v, c in sorted(collected.levels.items())
        },
    }


def run_provenance(
    model: ModelConfig, source: Source, collected: CollectedTables, baseline: StoredBaseline
) -> dict[str, Any]:
    """The provenance of a run of ``model`` that read ``collected`` through ``source`` and
    compared it with ``baseline``."""
    return {
        "riskmon_version": __version__,
        "config_fingerprint": model_fingerprint(model),
        "config": masked_config(model),
        "source": source.masked_url,
        "snapshot": source.snapshot,
        "statements": source.ledger.to_json(),
        "windows": window_counts(collected),
        "collected": collected_shape(collected),
        "baseline": {
            "id": baseline.id,
            "version": baseline.version,
            "window": [baseline.window_start.isoformat(), baseline.window_end.isoformat()],
            "frozen_at": baseline.frozen_at.isoformat(),
            "config_hash": baseline.config_hash,
            "riskmon_version": baseline.riskmon_version,
        },
    }
