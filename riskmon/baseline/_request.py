"""What a collect pass reads for a model on its frozen bins: the variables (the score, its
ranking grid, the characteristics, the grades, the cut-off, the challengers crossed with the
score), where the PDs come from, and the migration pass."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from riskmon.baseline._bins import FrozenBins
from riskmon.collect import (
    CollectRequest,
    MigrationRequest,
    PdSource,
    Population,
    Variable,
    VintageRequest,
)
from riskmon.config import GradeColumn, ModelConfig, Period
from riskmon.errors import ConfigError
from riskmon.metrics import Binning, ccf_grid_binning, ecb_segment_binning
from riskmon.plan import DateWindow, subtract
from riskmon.records import (
    BACKTEST,
    BACKTEST_FLOOR,
    BACKTEST_GRADE,
    CHALLENGER_GRID,
    CURRENT,
    CUTOFF,
    DECISIONS,
    GRADE,
    OVERRIDE,
    OVERRIDES,
    SCORE,
    SCORE_RANKING,
    challenger_variable,
)


def pd_source(model: ModelConfig, bins: FrozenBins) -> PdSource | None:
    """Where a run of ``model`` reads each loan's PD, or None when it tests no calibration.

    A PD column or a points-to-PD mapping turns calibration on; without either, the score is
    the PD when it is one: higher is riskier and the baseline's scores lie within [0, 1].
    """
    calibration = model.calibration
    if calibration.enabled is False:
        return None
    if calibration.pd is not None:
        return PdSource(calibration.pd)
    points = calibration.points_to_pd
    if points is not None:
        return PdSource(model.columns.score, points.points, points.odds, points.pdo)
    low = bins.score_bottom if bins.score_bottom is not None else 0.0
    if model.higher_is_riskier and low >= 0.0 and bins.score_top <= 1.0:
        # taken for a PD by default: a later score outside [0, 1] says it is none
        return PdSource(model.columns.score, strict=calibration.enabled is True)
    if calibration.enabled:
        raise ConfigError(
            f"models[{model.name}].calibration: enabled, but the score {model.columns.score!r} "
            f"is not a PD (higher_is_riskier, within [0, 1]); name the PD column "
            f"(calibration.pd) or map the points (calibration.points_to_pd)"
        )
    return None


def grade_binning(model: ModelConfig) -> Binning | None:
    """The master scale's bins, when configured (None: the score's baseline bins)."""
    grades = model.calibration.grades
    if grades is None:
        return None
    if isinstance(grades, GradeColumn):
        return Binning("categorical", levels=tuple((g,) for g in grades.order))
    return Binning("numeric", edges=tuple(float(e) for e in grades))


def cutoff_binning(model: ModelConfig) -> Binning | None:
    """The score split at the configured cut-off: bin 0 below it, bin 1 at or above it."""
    cutoff = model.calibration.cutoff
    if cutoff is None:
        return None
    # bins are right-closed; an edge one step below the cut-off puts the cut-off in bin 1
    return Binning("numeric", edges=(float(np.nextafter(float(cutoff), -np.inf)),))


def override_variable(model: ModelConfig) -> Variable | None:
    """The joint table of the policy decision (the score at the cut-off; without a cut-off one
    bin of every score) and the final decision (``columns.decision``) or the override
    (``columns.override``), None when neither column is configured."""
    column = model.columns.decision or model.columns.override
    if column is None:
        return None
    levels = DECISIONS if model.columns.decision is not None else OVERRIDES
    decided = Variable(OVERRIDE, column, Binning("categorical", levels=tuple((v,) for v in levels)))
    policy = cutoff_binning(model) or Binning("numeric")
    return Variable(OVERRIDE, model.columns.score, policy, crossed=decided)


def backtest_variable(model: ModelConfig) -> Variable:
    """An LGD, CCF or EAD model's joint table: the estimate's ECB segment crossed with the
    realised value's (cut at the same edges; the open recoveries in its missing bin), the
    target's moments summed per cell."""
    segments = ecb_segment_binning()
    assert model.columns.realised is not None
    realised = Variable(f"{BACKTEST}:realised", model.columns.realised, segments)
    return Variable(BACKTEST, model.columns.score, segments, moments=True, crossed=realised)


def variables(model: ModelConfig, bins: FrozenBins) -> list[Variable]:
    """What a collect pass reads for ``model`` on frozen ``bins``."""
    score = model.columns.score
    if model.kind != "pd":
        out = [Variable(SCORE, score, bins.binnings[SCORE]), backtest_variable(model)]
        grades = bins.binnings.get(BACKTEST_GRADE)
        if grades is not None and model.columns.grade is not None:
            out.append(Variable(BACKTEST_GRADE, model.columns.grade, grades, moments=True))
        if model.kind == "ccf" and model.columns.realised is not None:
            # the realised CCF's grid: the floored share and the quantiles
            out.append(Variable(BACKTEST_FLOOR, model.columns.realised, ccf_grid_binning()))
        return out
    pd = pd_source(model, bins)
    grades = grade_binning(model)
    out = [
        Variable(SCORE, score, bins.binnings[SCORE], sums=pd is not None and grades is None),
        Variable(SCORE_RANKING, score, bins.ranking_grid),
    ]
    out += [Variable(c.name, c.source_column, bins.binnings[c.name]) for c in model.characteristics]
    if pd is not None and grades is not None:
        column = model.calibration.grades
        if isinstance(column, GradeColumn):
            out.append(Variable(GRADE, column.column, grades, sums=True))
        else:
            out.append(Variable(GRADE, pd.column, grades, sums=True, on_pd=True))
    cutoff = cutoff_binning(model)
    if cutoff is not None:
        out.append(Variable(CUTOFF, score, cutoff))
    overrides = override_variable(model)
    if overrides is not None:
        out.append(overrides)
    grid = bins.binnings.get(CHALLENGER_GRID)
    for challenger in model.challengers:
        name = challenger_variable(challenger.label)
        binning = bins.binnings.get(name)
        if grid is not None and binning is not None:
            crossed = Variable(name, challenger.column, binning)
            out.append(Variable(name, score, grid, crossed=crossed))
    return out


def collect_request(
    model: ModelConfig, bins: FrozenBins, populations: Sequence[Population]
) -> CollectRequest:
    """What a collect pass reads for ``model`` on frozen ``bins``: every variable of the
    model, for each of ``populations``, weighted and segmented as configured."""
    return CollectRequest(
        populations=list(populations),
        variables=variables(model, bins),
        score_date=model.columns.score_date,
        label=model.columns.label,
        weight=model.columns.weight or model.columns.exposure,
        segments=model.columns.segments,
        pd=pd_source(model, bins) if model.kind == "pd" else None,
        score=model.columns.score,
        exclude_invalid=model.on_invalid == "exclude",
        score_range=model.score_range,
        id=model.columns.id if model.source.count_duplicate_ids else None,
        census=[c.name for c in model.characteristics if c.kind == "categorical"],
        census_population=CURRENT,
        target=model.columns.realised,
        downturn=model.columns.downturn,
        ead_approach=model.columns.ead_approach,
    )


def migration_request(
    model: ModelConfig, bins: FrozenBins, end: DateWindow
) -> MigrationRequest | None:
    """What a migration pass reads for ``model`` (None unless ``rating.migration``): the grades
    of the obligors scored in ``end`` and in the same window one horizon earlier."""
    if not model.rating.migration:
        return None
    horizon = model.migration_horizon
    start = DateWindow(subtract(end.start, horizon), subtract(end.end, horizon))
    populations = [Population("start", start, labeled=True), Population("end", end, False)]
    request = collect_request(model, bins, populations)
    chosen = {v.name: v for v in request.variables}
    grade = replace(chosen.get(GRADE) or chosen[SCORE], sums=False)
    # the grades alone; the obligor is linked by its own column, not checked as a loan id
    request = replace(request, variables=[grade], id=None, census=())
    return MigrationRequest(request, obligor=model.columns.obligor_column)


def vintage_request(
    model: ModelConfig, bins: FrozenBins, last: dt.date, known_by: dt.date
) -> VintageRequest | None:
    """What a vintage pass reads for ``model`` (None without ``columns.default_date``): the
    vintages from ``vintages.max_mob`` months before ``last``'s month to ``last``, their events
    as known by ``known_by``."""
    columns = model.columns
    if columns.default_date is None:
        return None
    events = {"default": columns.default_date}
    if columns.delinquency is not None:
        events |= columns.delinquency.model_dump(exclude_none=True)
    max_mob = model.vintages.max_mob
    first = subtract(last, Period(count=max_mob, unit="month")).replace(day=1)
    request = collect_request(model, bins, [])
    return VintageRequest(request, DateWindow(first, last), known_by, events, max_mob)
