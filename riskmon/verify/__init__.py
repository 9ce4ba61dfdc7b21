"""``riskmon verify``: does a stored run still follow from its data?

:func:`verify_run` recomputes a stored run from the source as it is now — the same windows,
the baseline the run was compared with, the configuration as it is now — without storing
anything, and compares the figures one by one with the stored ones (to :data:`RTOL`, the
golden test's tolerance). When they differ, it says why: the windows whose counts changed in
the source (from the counts the run stored with its provenance), a configuration whose
fingerprint changed, or another riskmon version.

:func:`verify_from_store` recomputes the figures from the run's stored count tables alone
(:mod:`._stored`), for the families whose figures the stored bins determine.
"""

from __future__ import annotations

import datetime as dt

from riskmon import __version__
from riskmon.baseline import of_stored
from riskmon.collect import Source, Strategy, collect
from riskmon.config import ModelConfig, config_changes, masked_config, model_fingerprint
from riskmon.plan import plan_run
from riskmon.provenance import window_counts
from riskmon.run import compute_run
from riskmon.store import MetricStore
from riskmon.verify._compare import (
    RTOL,
    FigureDifference,
    WindowChange,
    compare_figures,
    compare_windows,
)
from riskmon.verify._runs import NothingToVerify, Verification, run_baseline, stored_run
from riskmon.verify._stored import FromStore, verify_from_store


def verify_run(
    model: ModelConfig, as_of: dt.date, *, store: MetricStore, strategy: Strategy = "auto"
) -> Verification:
    """Recompute the run of ``model`` as of ``as_of`` from the source as it is now, and
    compare; nothing is stored."""
    run = stored_run(store, model.name, as_of)
    stored = run_baseline(store, run)
    baseline = of_stored(model, stored, plan_run(model, as_of))
    with Source(model) as source:
        collected = collect(
            source,
            baseline.request,
            strategy=strategy,
            migrations=baseline.migrations,
            vintages=baseline.vintages,
        )
    figures, _ = compute_run(model, collected, baseline.bins, baseline.frozen)
    before = (run.provenance or {}).get("windows")
    fingerprint = model_fingerprint(model)
    keys: tuple[str, ...] = ()
    if fingerprint != run.config_hash and run.provenance and "config" in run.provenance:
        changes = config_changes(run.provenance["config"], masked_config(model))
        keys = tuple(c.path for c in changes)
    return Verification(
        model=model.name,
        as_of=as_of,
        run_id=run.id,
        compared=len(figures),
        differences=compare_figures(store.figures(run.id), figures),
        windows=[] if before is None else compare_windows(before, window_counts(collected)),
        windows_unknown=before is None,
        config_change=None if run.config_hash == fingerprint else (run.config_hash, fingerprint),
        config_keys=keys,
        code_change=None
        if run.riskmon_version == __version__
        else (run.riskmon_version, __version__),
    )


__all__ = [
    "RTOL",
    "FigureDifference",
    "FromStore",
    "NothingToVerify",
    "Verification",
    "WindowChange",
    "run_baseline",
    "stored_run",
    "verify_from_store",
    "verify_run",
]
