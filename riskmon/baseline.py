"""Baselines: the frozen bins and distributions every later run is compared with.

Freezing a model's baseline (on first use, or by ``riskmon baseline freeze MODEL``):

1. one ``GROUP BY`` per variable over the development window counts the loans per distinct
   value (categorical columns by their text in the database), from which the bins are fitted:
   equal-frequency edges for the score and each numeric characteristic (by loan count; missing
   values in their own bin), one bin per level for categorical characteristics (plus the missing
   and unseen bins);
2. the score is ranked (KS, AUC, Gini, lift) on its distinct values when it has at most
   ``bins.max_distinct_scores`` of them, else on a grid of ``bins.score_grid`` equal-frequency
   cells, whose largest error is stored with every figure;
3. a collect pass over the development window gives every variable's distribution on its bins
   (all loans) and its goods and bads (loans with a label), per segment, and the headline
   figures: KS, AUC, Gini, bad rate, IV per characteristic;
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
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, func, select

from riskmon.collect import (
    ALL,
    CollectedTables,
    CollectRequest,
    MigrationRequest,
    PdSource,
    Population,
    Source,
    SourceColumn,
    Variable,
    category_text,
    collect,
    required_columns,
    usable_rows,
)
from riskmon.config import GradeColumn, ModelConfig, model_fingerprint
from riskmon.errors import ConfigError, InvalidDataError
from riskmon.figures import (
    CATALOG,
    FrozenBaseline,
    baseline_migration_figures,
    iv_figure,
    mark_row_tests,
    ranking_figures,
)
from riskmon.metrics import Binning, CountTable, fit_binning, numeric_values, score_grid_table
from riskmon.plan import DateWindow, subtract, window_ending
from riskmon.records import (
    BASELINE,
    CHALLENGER,
    CHALLENGER_GRID,
    CURRENT,
    CUTOFF,
    DEVELOPMENT,
    GRADE,
    SCORE,
    SCORE_RANKING,
    FigureRecord,
    challenger_variable,
)
from riskmon.store import (
    BaselineBinRecord,
    BaselineVariableRecord,
    MetricStore,
    StoreConflict,
    StoredBaseline,
)

log = logging.getLogger(__name__)

#: the version of a model's first baseline
FIRST_VERSION = 1


@dataclass(frozen=True)
class FrozenBins:
    """The bins a baseline freezes: the score's, the score's ranking grid, each characteristic's."""

    binnings: dict[str, Binning]  # variable -> binning, SCORE included
    ranking_grid: Binning | None  # None: rank the score on its distinct values
    score_top: float  # the largest baseline score (values the grid's last cell)
    n_distinct_scores: int
    score_bottom: float | None = None  # the smallest (None: a baseline frozen without it)
    #: a categorical characteristic's baseline levels beyond its ``bins.max_levels`` most
    #: frequent (in its "other" bin): a run tells them from levels the baseline never had
    other_levels: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _column(model: ModelConfig, characteristic: str) -> SourceColumn:
    index = [c.name for c in model.characteristics].index(characteristic)
    return next(c for c in required_columns(model) if c.key == f"characteristics[{index}]")


def _value_counts(
    source: Source, loans: Any, window: DateWindow, expression: ColumnElement[Any]
) -> tuple[list[Any], np.ndarray]:
    value = expression.label("v")
    model = source.model
    weight = loans.c[model.columns.weight] if model.columns.weight else None
    usable = usable_rows(
        loans.c[model.columns.score],
        weight,
        exclude=model.on_invalid == "exclude",
        score_range=model.score_range,
    )
    query = (
        select(value, func.count().label("n"))
        .select_from(loans)
        .where(window.contains(loans.c[model.columns.score_date]), *usable)
        .group_by(value)
    )
    with source.reading() as connection:
        rows = connection.execute(query).all()
    values = [row[0] for row in rows]
    counts = np.asarray([int(row[1]) for row in rows], dtype=np.float64)
    return values, counts


def fit_bins(model: ModelConfig, source: Source) -> FrozenBins:
    """Fit the score's and every characteristic's bins on the development window."""
    loans = source.check_columns()
    window = DateWindow(model.baseline.start, model.baseline.end)
    scores, counts = _value_counts(source, loans, window, loans.c[model.columns.score])
    score_column = next(c for c in required_columns(model) if c.key == "columns.score")
    if not scores:
        raise source.error(f"no loans scored in the baseline window {window}")
    if any(s is None for s in scores):
        n_null = int(sum(c for s, c in zip(scores, counts, strict=True) if s is None))
        raise source.error(
            f"expected a score on every baseline loan, got {n_null} with NULL", column=score_column
        )
    try:
        values = numeric_values(np.asarray(scores, dtype=object))
    except InvalidDataError as exc:
        raise source.error(str(exc), column=score_column) from None
    if model.score_range is not None:  # with on_invalid: exclude, the reading left them out
        low, high = model.score_range
        outside = (values < low) | (values > high)
        if outside.any():
            raise source.error(
                f"expected scores within score_range [{low:g}, {high:g}], got "
                f"{int(counts[outside].sum())} baseline loan(s) outside",
                column=score_column,
            )
    binnings = {
        SCORE: fit_binning(values, kind="numeric", n_bins=model.bins.score, sample_weight=counts)
    }
    grid = None
    if values.size > model.bins.max_distinct_scores:
        grid = fit_binning(
            values, kind="numeric", n_bins=model.bins.score_grid, sample_weight=counts
        )
    if model.challengers:
        binnings |= _challenger_binnings(model, source, loans, window, values, counts)
    other_levels: dict[str, tuple[str, ...]] = {}
    for characteristic in model.characteristics:
        column = loans.c[characteristic.source_column]
        if characteristic.kind == "categorical":
            levels, level_counts = _value_counts(source, loans, window, category_text(column))
            binning = fit_binning(
                np.asarray(levels, dtype=object),
                kind="categorical",
                sample_weight=level_counts,
                max_levels=model.bins.max_levels,
            )
            binnings[characteristic.name] = binning
            if binning.other:
                kept = {level for group in binning.levels for level in group}
                other_levels[characteristic.name] = tuple(
                    sorted({str(v) for v in levels if v is not None} - kept)
                )
        else:
            raw, raw_counts = _value_counts(source, loans, window, column)
            try:
                x = numeric_values(np.asarray(raw, dtype=object))
            except InvalidDataError as exc:
                raise source.error(str(exc), column=_column(model, characteristic.name)) from None
            binnings[characteristic.name] = fit_binning(
                x, kind="numeric", n_bins=model.bins.characteristics, sample_weight=raw_counts
            )
    return FrozenBins(
        binnings,
        grid,
        float(values.max()),
        int(values.size),
        float(values.min()),
        other_levels,
    )


def _challenger_binnings(
    model: ModelConfig,
    source: Source,
    loans: Any,
    window: DateWindow,
    scores: np.ndarray,
    counts: np.ndarray,
) -> dict[str, Binning]:
    """The coarse grid of the score and each challenger's, on which a run crosses them:
    ``bins.challenger_grid`` equal-frequency cells each. A challenger without a score in the
    baseline window gets none (its figures then say so)."""
    cells = model.bins.challenger_grid
    out = {CHALLENGER_GRID: fit_binning(scores, kind="numeric", n_bins=cells, sample_weight=counts)}
    for i, challenger in enumerate(model.challengers):
        raw, raw_counts = _value_counts(source, loans, window, loans.c[challenger.column])
        present = [j for j, value in enumerate(raw) if value is not None]
        if not present:
            log.warning(
                "%s: challenger %r has no score in the baseline window; it is not compared",
                model.name,
                challenger.label,
            )
            continue
        column = next(c for c in required_columns(model) if c.key == f"challengers[{i}].column")
        try:
            x = numeric_values(np.asarray([raw[j] for j in present], dtype=object))
        except InvalidDataError as exc:
            raise source.error(str(exc), column=column) from None
        out[challenger_variable(challenger.label)] = fit_binning(
            x, kind="numeric", n_bins=cells, sample_weight=raw_counts[present]
        )
    return out


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


def variables(model: ModelConfig, bins: FrozenBins) -> list[Variable]:
    """What a collect pass reads for ``model`` on frozen ``bins``."""
    score = model.columns.score
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
        weight=model.columns.weight,
        segments=model.columns.segments,
        pd=pd_source(model, bins),
        score=model.columns.score,
        exclude_invalid=model.on_invalid == "exclude",
        score_range=model.score_range,
        id=model.columns.id if model.source.count_duplicate_ids else None,
        census=[c.name for c in model.characteristics if c.kind == "categorical"],
        census_population=CURRENT,
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


def ranking_table(
    collected: CollectedTables, bins: FrozenBins, population: str, segment: str = ALL
) -> tuple[CountTable, CountTable | None]:
    """The score table a population is ranked on, and the grid table behind it (if any)."""
    table = collected.table(population, SCORE_RANKING, segment)
    if bins.ranking_grid is None:
        return table, None
    return score_grid_table(table, top=bins.score_top), table


def _bin_records(
    collected: CollectedTables, variable: str, segments: Sequence[str]
) -> tuple[BaselineBinRecord, ...]:
    records = []
    for segment in segments:
        everyone = collected.table(BASELINE, variable, segment)
        labeled = collected.table(DEVELOPMENT, variable, segment)
        grand = float(everyone.total.sum())
        assert labeled.bads is not None
        assert labeled.n_bads is not None
        for i, label in enumerate(everyone.labels):
            records.append(
                BaselineBinRecord(
                    bin_index=i,
                    label=label,
                    n_total=int(everyone.n_total[i]),
                    total=float(everyone.total[i]),
                    segment=segment,
                    n_goods=int(labeled.n_goods[i]),
                    goods=float(labeled.goods[i]),
                    n_bads=int(labeled.n_bads[i]),
                    bads=float(labeled.bads[i]),
                    share=float(everyone.total[i]) / grand if grand > 0 else None,
                )
            )
    return tuple(records)


def _characteristic_params(model: ModelConfig, bins: FrozenBins, name: str) -> dict[str, Any]:
    """What a characteristic's frozen binning was asked for; for a categorical one that kept
    only its most frequent levels, the baseline's other levels too."""
    params: dict[str, Any] = {"n_bins_requested": model.bins.characteristics}
    if name in bins.other_levels:
        params |= {
            "max_levels": model.bins.max_levels,
            "other_levels": list(bins.other_levels[name]),
        }
    return params


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
    populations = [
        Population(BASELINE, window, labeled=False),
        Population(DEVELOPMENT, window, labeled=True),
    ]
    request = collect_request(model, bins, populations)
    # a challenger is compared on the performance cohort of a run, not on the baseline
    request = replace(request, variables=[v for v in request.variables if v.crossed is None])
    # the migrations into the baseline's last stability window: what a run's are compared with
    migrating = migration_request(
        model, bins, window_ending(model.baseline.end, model.stability_window)
    )
    collected = collect(source, request, migrations=migrating)
    segments = [s for s in collected.segments() if (DEVELOPMENT, SCORE, s) in collected.tables]
    figures: list[FigureRecord] = []
    for segment in segments:
        scores, grid = ranking_table(collected, bins, DEVELOPMENT, segment)
        figures += ranking_figures(
            scores,
            higher_is_riskier=model.higher_is_riskier,
            population=BASELINE,
            segment=segment,
            grid=grid,
        )
        figures += [
            iv_figure(
                collected.table(DEVELOPMENT, c.name, segment),
                variable=c.name,
                population=BASELINE,
                segment=segment,
            )
            for c in model.characteristics
        ]
    if migrating is not None and collected.migrations is not None:
        grade = migrating.grade
        assert grade.binning is not None
        figures += baseline_migration_figures(
            model, collected.migrations, grade.name, grade.binning
        )
    if model.columns.weight:
        mark_row_tests(figures, CATALOG.row_tests)
    _check_direction(model, figures, force=force)
    ranking_params: dict[str, Any] = {
        "n_distinct_scores": bins.n_distinct_scores,
        "max_distinct_scores": model.bins.max_distinct_scores,
        "score_top": bins.score_top,
        "score_bottom": bins.score_bottom,
    }
    records = [
        BaselineVariableRecord(
            variable=name,
            kind="score" if name == SCORE else binning.kind,
            binning=binning.to_dict(),
            params=(
                {"n_bins_requested": model.bins.score, "score_direction": model.score_direction}
                if name == SCORE
                else _characteristic_params(model, bins, name)
            ),
            bins=_bin_records(collected, name, segments),
        )
        for name, binning in bins.binnings.items()
        if not _is_challenger(name)
    ]
    # the grids a challenger is crossed on, frozen with the baseline (no bins of their own)
    records += [
        BaselineVariableRecord(
            variable=name,
            kind=binning.kind,
            binning=binning.to_dict(),
            params={"from": "challengers", "n_bins_requested": model.bins.challenger_grid},
            bins=(),
        )
        for name, binning in bins.binnings.items()
        if _is_challenger(name)
    ]
    # the grades and the cut-off as configured at the freeze: what later runs compare with
    records += [
        BaselineVariableRecord(
            variable=v.name,
            kind=v.binning.kind,
            binning=v.binning.to_dict(),
            params={"from": "calibration"},
            bins=_bin_records(collected, v.name, segments),
        )
        for v in variables(model, bins)
        if v.name in (GRADE, CUTOFF) and v.binning is not None
    ]
    records.append(
        BaselineVariableRecord(
            variable=SCORE_RANKING,
            kind="score_values" if bins.ranking_grid is None else "score_grid",
            binning={"kind": "values"}
            if bins.ranking_grid is None
            else bins.ranking_grid.to_dict(),
            params=ranking_params,
        )
    )
    everyone = collected.counts[(BASELINE, ALL)]
    development = collected.table(DEVELOPMENT, SCORE)
    return store.save_baseline(
        model.name,
        score_direction=model.score_direction,
        window=(window.start, window.end),
        config_hash=model_fingerprint(model),
        n_rows=everyone.n_rows,
        n_bads=int(development.n_bads.sum()) if development.n_bads is not None else None,
        variables=records,
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


def _is_challenger(variable: str) -> bool:
    return variable == CHALLENGER_GRID or variable.startswith(CHALLENGER)


def frozen_bins(baseline: StoredBaseline) -> FrozenBins:
    """The bins of a stored baseline, ready for a collect pass."""
    binnings = {
        name: Binning.from_dict(var.binning)
        for name, var in baseline.variables.items()
        if name not in (SCORE_RANKING, GRADE, CUTOFF)  # those two come from the configuration
    }
    ranking = baseline.variables[SCORE_RANKING]
    grid = None if ranking.kind == "score_values" else Binning.from_dict(ranking.binning)
    return FrozenBins(
        binnings=binnings,
        ranking_grid=grid,
        score_top=float(ranking.params["score_top"]),
        n_distinct_scores=int(ranking.params["n_distinct_scores"]),
        score_bottom=ranking.params.get("score_bottom"),
    )


def baseline_table(baseline: StoredBaseline, variable: str, segment: str = ALL) -> CountTable:
    """A variable's baseline distribution (all loans) as an unlabeled count table."""
    return FrozenBaseline(baseline).table(variable, segment)


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


def check_matches(model: ModelConfig, baseline: StoredBaseline) -> None:
    """Raise ConfigError naming how ``model`` differs from what ``baseline`` froze."""
    problems = []
    direction = baseline.variables[SCORE].params.get("score_direction")
    if direction is not None and direction != model.score_direction:
        problems.append(f"score_direction is {model.score_direction}, the baseline's {direction}")
    for characteristic in model.characteristics:
        frozen = baseline.variables.get(characteristic.name)
        if frozen is None:
            problems.append(f"characteristic {characteristic.name!r} is not in it")
        elif frozen.kind != characteristic.kind:
            problems.append(
                f"characteristic {characteristic.name!r} is {characteristic.kind}, "
                f"frozen as {frozen.kind}"
            )
    if problems:
        raise ConfigError(
            f"model {model.name!r} no longer matches its baseline version {baseline.version}: "
            f"{'; '.join(problems)}. Run `riskmon baseline freeze {model.name}` to freeze a new "
            f"version"
        )
