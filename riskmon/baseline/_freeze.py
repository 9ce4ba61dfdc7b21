"""Freezing a baseline, and the newest one a run compares with (frozen on first use, once).

Freezing a model's baseline (on first use, or by ``riskmon baseline freeze MODEL``) is a run of
the catalog over the development window:

1. the bins are fitted on the development window (:func:`fit_bins`);
2. one collect pass, the same a run makes, gives every variable's distribution on its bins
   (all loans: :data:`~riskmon.records.BASELINE`) and its goods and bads (loans with a label:
   :data:`~riskmon.records.DEVELOPMENT`), per segment, and the migrations into the baseline's
   last stability window;
3. every family computes the figures it freezes from those tables (``Family.freeze``, through
   :meth:`~riskmon.figures.Catalog.freeze`), through the same
   :class:`~riskmon.figures.RunTables` a run's families read;
4. all of it is stored as the model's next baseline version. Runs keep pointing at the version
   they used; a re-freeze never changes an earlier version.

A model's first baseline is frozen once, however many processes run it at once: each asks
for version 1 under the lock :meth:`MetricStore.freezing` holds (PostgreSQL: the others wait,
then read it) and the store's unique version (everywhere: a second version 1 is refused, and
its process reads the first).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from riskmon.baseline._bins import fit_bins
from riskmon.baseline._records import check_matches, variable_records
from riskmon.baseline._request import collect_request, migration_request, vintage_request
from riskmon.baseline._tables import CollectedRun, Unfrozen
from riskmon.collect import ALL, Population, Source, collect
from riskmon.config import ModelConfig, Period, model_fingerprint
from riskmon.errors import ConfigError
from riskmon.figures import CATALOG
from riskmon.plan import DateWindow, add, window_ending
from riskmon.records import BASELINE, CHALLENGER, DEVELOPMENT, SCORE, FigureRecord
from riskmon.store import MetricStore, StoreConflict, StoredBaseline

log = logging.getLogger(__name__)

#: the version of a model's first baseline
FIRST_VERSION = 1


def freeze(
    model: ModelConfig,
    source: Source,
    store: MetricStore,
    *,
    version: int | None = None,
    force: bool = False,
) -> StoredBaseline:
    """Fit, collect, measure and store a new baseline version of ``model``: ``version``, or
    the next one when None (:class:`StoreConflict` when ``version`` is taken meanwhile).

    A ConfigError, and nothing stored, when the baseline's AUC lies significantly below 0.5
    (its DeLong interval wholly below): the score ranks bads as safer than goods, most often a
    reversed ``score_direction``; ``force`` freezes it anyway, with a warning."""
    bins = fit_bins(model, source)
    window = DateWindow(model.baseline.start, model.baseline.end)
    # the baseline counts the development window's loans: read once, as the development's
    populations = [
        Population(BASELINE, window, labeled=False, copy_of=DEVELOPMENT),
        Population(DEVELOPMENT, window, labeled=model.kind == "pd"),
    ]
    request = collect_request(model, bins, populations)
    # a challenger is compared on the performance cohort of a run, not on the baseline
    request = replace(
        request, variables=[v for v in request.variables if not v.name.startswith(CHALLENGER)]
    )
    # the migrations into the baseline's last stability window: what a run's are compared with
    migrating = migration_request(
        model, bins, window_ending(model.baseline.end, model.stability_window)
    )
    # the development window's vintages, matured: the default timing σ(m) a run expects
    matured = add(model.baseline.end, Period(count=model.vintages.max_mob, unit="month"))
    curves = vintage_request(model, bins, model.baseline.end, known_by=matured)
    if curves is not None:
        curves = replace(curves, window=replace(curves.window, start=window.start))
    collected = collect(source, request, migrations=migrating, vintages=curves)
    figures = CATALOG.freeze(CollectedRun(model, collected, bins, Unfrozen()))
    _check_direction(model, figures, force=force)
    everyone = collected.counts[(BASELINE, ALL)]
    development = collected.table(DEVELOPMENT, SCORE)
    return store.save_baseline(
        model.name,
        score_direction=model.score_direction,
        window=(window.start, window.end),
        config_hash=model_fingerprint(model),
        n_rows=everyone.n_rows,
        n_bads=int(development.n_bads.sum()) if development.n_bads is not None else None,
        variables=variable_records(model, bins, collected),
        figures=figures,
        version=version,
    )


#: a baseline AUC this many standard errors below 0.5 ranks bads as safer than goods: a 99.9 %
#: interval wholly below 0.5, so that a score with no power refuses one freeze in 2,000, not
#: one in 40 (a 95 % interval)
_REVERSED_Z = 3.2905


def _check_direction(model: ModelConfig, figures: Sequence[FigureRecord], *, force: bool) -> None:
    """Refuse (or, forced, warn about) a baseline whose AUC is significantly below 0.5."""
    auc = next((f for f in figures if f.name == "auc" and not f.segment and not f.variable), None)
    se = auc.params.get("std_error") if auc is not None else None
    if auc is None or auc.value is None or not se or auc.value + _REVERSED_Z * se >= 0.5:
        return
    low, high = auc.value - _REVERSED_Z * se, auc.value + _REVERSED_Z * se
    message = (
        f"model {model.name!r}: the baseline's AUC is {auc.value:.4f} (99.9% interval "
        f"{low:.4f}–{high:.4f}), below 0.5 with score_direction {model.score_direction!r}: the "
        f"score ranks bads as safer than goods. Check score_direction"
    )
    if not force:
        raise ConfigError(
            f"{message}, or freeze it anyway with `riskmon baseline freeze --force "
            f"{model.name}`; nothing was frozen"
        )
    log.warning("%s; frozen anyway (--force)", message)


def latest_or_freeze(model: ModelConfig, source: Source, store: MetricStore) -> StoredBaseline:
    """The model's newest baseline, frozen now if it has none.

    Raises ConfigError when the configuration no longer matches that baseline (a characteristic
    added or changed, the score direction flipped): figures would be compared with a baseline
    that does not describe them. Processes freezing at once share the one version stored first.
    """
    baseline = store.latest_baseline(model.name)
    if baseline is None:
        with store.freezing(model.name, model.score_direction):
            baseline = store.latest_baseline(model.name)  # frozen while this one waited
            if baseline is None:
                try:
                    baseline = freeze(model, source, store, version=FIRST_VERSION)
                    log.info("%s: baseline version %s frozen", model.name, baseline.version)
                except StoreConflict:  # another process stored it first: use that one
                    baseline = store.latest_baseline(model.name)
                    if baseline is None:
                        raise
                    log.info(
                        "%s: another process froze baseline version %s first; using it",
                        model.name,
                        baseline.version,
                    )
            else:
                log.info(
                    "%s: using baseline version %s, frozen by another process meanwhile",
                    model.name,
                    baseline.version,
                )
    check_matches(model, baseline)
    return baseline
