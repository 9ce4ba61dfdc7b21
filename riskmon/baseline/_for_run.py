"""What a run reads of its model's baseline, in one call: the stored version (frozen now if
the model has none), its figures and distributions, its bins, and the collect and migration
passes the run makes on those bins."""

from __future__ import annotations

from dataclasses import dataclass

from riskmon.baseline._bins import FrozenBins
from riskmon.baseline._freeze import latest_or_freeze
from riskmon.baseline._records import frozen_bins
from riskmon.baseline._request import collect_request, migration_request, vintage_request
from riskmon.collect import CollectRequest, MigrationRequest, Population, Source, VintageRequest
from riskmon.config import ModelConfig
from riskmon.figures import FrozenBaseline
from riskmon.plan import RunPlan
from riskmon.records import CURRENT, PERFORMANCE
from riskmon.store import MetricStore, StoredBaseline


@dataclass(frozen=True)
class RunBaseline:
    """A run's baseline: the stored version, as figures read it, its bins, and the passes."""

    stored: StoredBaseline
    frozen: FrozenBaseline
    bins: FrozenBins
    #: the current population's and the performance cohort's count tables, on ``bins``
    request: CollectRequest
    #: the obligors' migrations into the current window (None unless ``rating.migration``)
    migrations: MigrationRequest | None
    #: the vintage curves up to the run's date (None without ``columns.default_date``)
    vintages: VintageRequest | None = None


def for_run(model: ModelConfig, source: Source, store: MetricStore, plan: RunPlan) -> RunBaseline:
    """The baseline a run of ``model`` planned by ``plan`` compares with, and what it collects.

    The model's newest baseline, frozen now if it has none (:func:`latest_or_freeze`, which
    raises ConfigError when the configuration no longer matches it)."""
    return of_stored(model, latest_or_freeze(model, source, store), plan)


def of_stored(model: ModelConfig, stored: StoredBaseline, plan: RunPlan) -> RunBaseline:
    """What a run of ``model`` planned by ``plan`` reads of the stored baseline ``stored``
    (``riskmon verify`` recomputes a run against the baseline it was compared with)."""
    bins = frozen_bins(stored)
    populations = [
        Population(CURRENT, plan.current, labeled=False),
        Population(PERFORMANCE, plan.performance, labeled=model.kind == "pd"),
    ]
    return RunBaseline(
        stored=stored,
        frozen=FrozenBaseline(stored),
        bins=bins,
        request=collect_request(model, bins, populations),
        migrations=migration_request(model, bins, plan.current),
        vintages=vintage_request(model, bins, plan.as_of, known_by=plan.as_of),
    )
