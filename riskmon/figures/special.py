"""Special values: how the share of each characteristic's special values (``special`` in the
configuration: ``-999`` "no bureau record", ``0`` "no history") moved since the baseline.

A special value is a bin of its own (never counted in an ordinary bin), so its share shows in
the CSI and WOE tables as its own row. A special value's share moving is often a data problem
(a bureau feed that stopped answering), so it is judged as the missing rate is.

Figure (current population, per characteristic with special values): ``special_share_change``,
the largest change, in rate points, of one of its special values' share against the
baseline's, each value's current and baseline share in its parameters.

Rule ``special_share_change``: AMBER when |change| reaches
``thresholds.rules.special_share_change.amber`` (default 0.05), RED at ``red`` (0.10).
"""

from __future__ import annotations

from typing import Any

from riskmon.config import ModelConfig, Thresholds
from riskmon.figures._family import Family, FigureSpec, Formula, Judge, Rule, band_levels, banded
from riskmon.figures._views import RunTables
from riskmon.records import CURRENT, BinRecord, FigureRecord, Status

RULE = "special_share_change"
DEFAULT_LEVELS = {"amber": 0.05, "red": 0.10}


def _with_special(model: ModelConfig) -> list[str]:
    return [c.name for c in model.characteristics if c.special]


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """Each special value's share now and in the baseline, per characteristic."""
    figures = []
    for name in _with_special(tables.model):
        now, base = tables.table(CURRENT, name), tables.baseline.table(name)
        binning = now.binning
        n_now, n_base = float(now.total.sum()), float(base.total.sum())
        if binning is None or not binning.special or n_now <= 0 or n_base <= 0:
            reason = "no loans now or in the baseline, or no special values frozen"
            figures.append(FigureRecord(RULE, None, CURRENT, variable=name, reason=reason))
            continue
        shares: dict[str, Any] = {}
        for i in binning.special_indices:
            label = binning.labels[i]
            shares[label] = {
                "current": float(now.total[i]) / n_now,
                "baseline": float(base.total[i]) / n_base,
            }
        change = max((s["current"] - s["baseline"] for s in shares.values()), key=abs, default=0.0)
        params = {"shares": shares}
        figures.append(FigureRecord(RULE, change, CURRENT, variable=name, params=params))
    return figures, []


def levels(thresholds: Thresholds) -> dict[str, float]:
    return thresholds.levels_of(RULE, dict(DEFAULT_LEVELS))


def _judge(judge: Judge, variable: str) -> None:
    figure = judge.figures.get(RULE, CURRENT, variable)
    if figure is None:
        return
    chosen = levels(judge.thresholds)
    if figure.value is None:
        reason = figure.reason or "special values' shares not available"
        judge.add(RULE, Status.NOT_EVALUABLE, None, chosen, reason, variable)
        return
    shares = figure.params.get("shares", {})
    moved = ", ".join(
        f"{label.removeprefix('special ')} {s['current']:.2%} (baseline {s['baseline']:.2%})"
        for label, s in shares.items()
    )
    message = f"special values of {variable}: {moved}"
    status = banded(abs(figure.value), chosen["amber"], chosen["red"])
    judge.add(RULE, status, abs(figure.value), chosen, message, variable)


FAMILY = Family(
    name="special",
    order=107,
    figures=(FigureSpec(RULE, CURRENT, "variable", "Largest change of a special value's share"),),
    compute=compute,
    rules=(
        Rule(
            RULE,
            "variable",
            "Share of each special value",
            levels,
            band_levels,
            _judge,
            finding="A special value's share has moved (a data feed or a policy change?)",
            worse="higher",
            applies=lambda model: bool(_with_special(model)),
        ),
    ),
    default_population={RULE: CURRENT},
    formulas=(
        Formula(
            67,
            "Special values",
            (
                "each configured special value is a bin of its own; its share change = current "
                "share − baseline share, in rate points (the largest of a characteristic's)."
            ),
        ),
    ),
)
