"""A frozen baseline's records: each variable's binning, parameters and bins (all loans of the
development window, and its goods and bads) as the store keeps them, and the bins and tables
read back from a stored version."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from riskmon.baseline._bins import FrozenBins
from riskmon.baseline._request import variables
from riskmon.collect import ALL, CollectedTables
from riskmon.config import ModelConfig
from riskmon.errors import ConfigError
from riskmon.figures import FrozenBaseline
from riskmon.metrics import Binning, CountTable
from riskmon.records import (
    BASELINE,
    CHALLENGER,
    CHALLENGER_GRID,
    CUTOFF,
    DEVELOPMENT,
    GRADE,
    SCORE,
    SCORE_RANKING,
)
from riskmon.store import (
    BaselineBins,
    BaselineVariableRecord,
    StoredBaseline,
)


def frozen_segments(collected: CollectedTables) -> list[str]:
    """The segments a baseline freezes: those with labeled loans (the whole population first)."""
    return [s for s in collected.segments() if (DEVELOPMENT, SCORE, s) in collected.tables]


def _bin_records(
    collected: CollectedTables, variable: str, segments: Sequence[str]
) -> BaselineBins:
    """The variable's bins in every segment, made one segment at a time into columns."""
    return BaselineBins(
        values for segment in segments for values in _segment_bins(collected, variable, segment)
    )


def _segment_bins(
    collected: CollectedTables, variable: str, segment: str
) -> Iterator[tuple[Any, ...]]:
    """The segment's bins, each its values in :class:`BaselineBinRecord`'s field order."""
    everyone = collected.table(BASELINE, variable, segment)
    labeled = collected.table(DEVELOPMENT, variable, segment)
    grand = float(everyone.total.sum())
    # goods and bads of a binary outcome; none for an LGD, CCF or EAD model's
    outcome = labeled.bads is not None and labeled.n_bads is not None
    n_total, total = everyone.n_total.tolist(), everyone.total.tolist()
    n_goods = labeled.n_goods.tolist() if outcome else None
    goods = labeled.goods.tolist() if outcome else None
    n_bads = None if labeled.n_bads is None else labeled.n_bads.tolist()
    bads = None if labeled.bads is None else labeled.bads.tolist()
    for i, label in enumerate(everyone.labels):
        yield (
            i,
            label,
            n_total[i],
            total[i],
            segment,
            None if n_goods is None else n_goods[i],
            None if goods is None else goods[i],
            None if n_bads is None else n_bads[i],
            None if bads is None else bads[i],
            total[i] / grand if grand > 0 else None,
        )


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


def variable_records(
    model: ModelConfig, bins: FrozenBins, collected: CollectedTables
) -> list[BaselineVariableRecord]:
    """Every variable a baseline freezes, with its bins per segment: the score, each
    characteristic, the challengers' grids, the grades and the cut-off, the ranking grid."""
    segments = frozen_segments(collected)
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
            bins=BaselineBins(),
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
    return records


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
