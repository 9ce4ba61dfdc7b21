"""Overrides: where the final decision on a loan differs from the policy decision the cut-off
implies (EBA, *Guide on the validation of internal models*: override rates, their materiality
and their performance).

With ``columns.decision`` (``accept`` / ``decline``) the policy decision is the score at
``calibration.cutoff``; with ``columns.override`` (``low_side`` / ``high_side`` / ``none``) the
column says it. A **low-side** override is declined by policy and accepted, a **high-side**
override accepted by policy and declined.

Figures, per segment: in the current population ``override_rate`` (overrides / loans with a
decision), ``low_side_override_rate`` (low-side / declined by policy),
``high_side_override_rate`` (high-side / accepted by policy) and ``override_exposure_share``
(the overrides' share of the summed weights: of the exposure with a weight column, of the
loans without); in the performance cohort ``override_bad_rate``, the bad rate of low-side
overrides, with the policy-accepted loans' bad rate beside it (accepted by policy and finally,
or, with ``columns.override`` and no cut-off, not overridden) and the one-sided Fisher exact
test (as ``scipy.stats.fisher_exact``, alternative "greater", on loan counts) that low-side
overrides default more.

Rules: ``override_rate`` (AMBER at ``thresholds.rules.override_rate.amber``, default 5 %, RED
at ``red``, default 10 %) and ``override_bad_rate`` (the test's p-value: AMBER below 0.05, RED
below 0.01, ``thresholds.rules.override_bad_rate``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.config import ModelConfig, Thresholds
from riskmon.figure_table import Figures
from riskmon.figures import _family as family
from riskmon.figures._family import Family, FigureSpec, Formula, Headline, Judge, Rule, Section
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import CountTable, fisher_exact_greater
from riskmon.records import (
    CURRENT,
    DECISIONS,
    OVERRIDE,
    OVERRIDES,
    PERFORMANCE,
    BinRecord,
    FigureRecord,
    Status,
)

RATE_LEVELS = {"amber": 0.05, "red": 0.10}
BAD_RATE_LEVELS = {"amber": 0.05, "red": 0.01}
#: the kinds of loan an override table tells apart
LOW, HIGH, ACCEPTED, DECLINED, UNKNOWN = "low_side", "high_side", "accepted", "declined", "?"
RATES = ("override_rate", "low_side_override_rate", "high_side_override_rate")


@dataclass(frozen=True)
class Kinds:
    """Per kind of loan (low-side, high-side, accepted or declined by both, unknown): loans,
    summed weights, bads (loan counts and weights; None unlabeled)."""

    n: dict[str, int]
    w: dict[str, float]
    n_bads: dict[str, int] | None
    bads: dict[str, float] | None

    @property
    def n_decided(self) -> int:
        return sum(v for k, v in self.n.items() if k != UNKNOWN)


def _kind(model: ModelConfig, policy: int, final: int) -> str:
    """The kind of loan in policy bin ``policy`` and decision bin ``final``."""
    cutoff = model.calibration.cutoff is not None
    riskier = model.higher_is_riskier
    policy_declined = None if not cutoff or policy == 2 else policy == (1 if riskier else 0)
    if model.columns.decision is not None:
        if policy_declined is None or final >= len(DECISIONS):
            return UNKNOWN
        accepted = DECISIONS[final] == "accept"
        if policy_declined:
            return LOW if accepted else DECLINED
        return ACCEPTED if accepted else HIGH
    if final >= len(OVERRIDES):
        return UNKNOWN
    if OVERRIDES[final] != "none":
        return LOW if OVERRIDES[final] == "low_side" else HIGH
    if policy_declined is None:
        return ACCEPTED  # not overridden, policy unknown: the loans an outcome is read of
    return DECLINED if policy_declined else ACCEPTED


def kinds(model: ModelConfig, table: CountTable) -> Kinds:
    """Unpack the joint table (policy bin · decision bins + decision bin) into kinds."""
    n_final = len(DECISIONS if model.columns.decision is not None else OVERRIDES) + 2
    keys = np.asarray(table.values, dtype=np.int64)
    names = (LOW, HIGH, ACCEPTED, DECLINED, UNKNOWN)
    n, w = dict.fromkeys(names, 0), dict.fromkeys(names, 0.0)
    n_bads = dict.fromkeys(names, 0) if table.n_bads is not None else None
    bads = dict.fromkeys(names, 0.0) if table.bads is not None else None
    for i, key in enumerate(keys):
        kind = _kind(model, *divmod(int(key), n_final))
        n[kind] += int(table.n_total[i])
        w[kind] += float(table.total[i])
        if n_bads is not None and bads is not None and table.bads is not None:
            assert table.n_bads is not None
            n_bads[kind] += int(table.n_bads[i])
            bads[kind] += float(table.bads[i])
    return Kinds(n, w, n_bads, bads)


def _current(model: ModelConfig, table: CountTable, segment: str) -> list[FigureRecord]:
    k = kinds(model, table)
    overridden = k.n[LOW] + k.n[HIGH]
    policy = model.calibration.cutoff is not None or model.columns.decision is not None
    params: dict[str, Any] = {
        "n_low_side": k.n[LOW],
        "n_high_side": k.n[HIGH],
        "n_decided": k.n_decided,
        "n_unknown": k.n[UNKNOWN],
    }
    declined, accepted = k.n[LOW] + k.n[DECLINED], k.n[HIGH] + k.n[ACCEPTED]
    values = {
        "override_rate": family.ratio(overridden, k.n_decided),
        "low_side_override_rate": family.ratio(k.n[LOW], declined) if policy else None,
        "high_side_override_rate": family.ratio(k.n[HIGH], accepted) if policy else None,
        "override_exposure_share": family.ratio(
            k.w[LOW] + k.w[HIGH], sum(v for name, v in k.w.items() if name != UNKNOWN)
        ),
    }
    out = []
    for name, value in values.items():
        reason = None
        if value is None:
            reason = "no cut-off: the policy decision is unknown" if not policy else "no loans"
        out.append(
            FigureRecord(name, value, CURRENT, segment=segment, reason=reason, params=params)
        )
    return out


def _performance(model: ModelConfig, table: CountTable, segment: str) -> FigureRecord:
    k = kinds(model, table)
    assert k.n_bads is not None
    assert k.bads is not None
    low_rate = family.ratio(k.bads[LOW], k.w[LOW])
    accepted_rate = family.ratio(k.bads[ACCEPTED], k.w[ACCEPTED])
    params: dict[str, Any] = {
        "accepted_bad_rate": accepted_rate,
        "n_low_side": k.n[LOW],
        "n_low_side_bads": k.n_bads[LOW],
        "n_accepted": k.n[ACCEPTED],
        "n_accepted_bads": k.n_bads[ACCEPTED],
    }
    if low_rate is None or accepted_rate is None:
        reason = "no low-side overrides or no policy-accepted loans in the matured cohort"
        return FigureRecord(
            "override_bad_rate", None, PERFORMANCE, segment=segment, reason=reason, params=params
        )
    counts = [
        [k.n_bads[LOW], k.n[LOW] - k.n_bads[LOW]],
        [k.n_bads[ACCEPTED], k.n[ACCEPTED] - k.n_bads[ACCEPTED]],
    ]
    params["p_value"] = fisher_exact_greater(counts)
    return FigureRecord("override_bad_rate", low_rate, PERFORMANCE, segment=segment, params=params)


def has_overrides(model: ModelConfig) -> bool:
    """Whether the model has a final-decision or an override column."""
    return model.columns.decision is not None or model.columns.override is not None


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """The override rates of the current population and the low-side overrides' bad rate in
    the performance cohort, per segment."""
    model = tables.model
    if not has_overrides(model):
        return [], []
    figures: list[FigureRecord] = []
    for segment in tables.segments():
        if tables.has(CURRENT, OVERRIDE, segment):
            figures += _current(model, tables.table(CURRENT, OVERRIDE, segment), segment)
        if tables.has(PERFORMANCE, OVERRIDE, segment):
            table = tables.table(PERFORMANCE, OVERRIDE, segment)
            figures.append(_performance(model, table, segment))
    return figures, []


# --------------------------------------------------------------------------- rules


def rate_levels(thresholds: Thresholds) -> dict[str, float]:
    """The most overrides a segment may have: ``thresholds.rules.override_rate``."""
    return thresholds.levels_of("override_rate", dict(RATE_LEVELS))


def bad_rate_levels(thresholds: Thresholds) -> dict[str, float]:
    return thresholds.levels_of("override_bad_rate", dict(BAD_RATE_LEVELS))


def _judge_rate(judge: Judge, segment: str) -> None:
    figure = judge.figures.get("override_rate", CURRENT, segment=segment)
    if figure is None:
        return
    chosen = rate_levels(judge.thresholds)
    if figure.value is None:
        reason = figure.reason or "override rate not available"
        judge.add("override_rate", Status.NOT_EVALUABLE, None, chosen, reason, segment=segment)
        return
    status = family.banded(figure.value, chosen["amber"], chosen["red"])
    message = f"override rate{family.where('', segment)} {figure.value:.1%}"
    judge.add("override_rate", status, figure.value, chosen, message, segment=segment)


def _judge_bad_rate(judge: Judge, segment: str) -> None:
    figure = judge.figures.get("override_bad_rate", PERFORMANCE, segment=segment)
    if figure is None:
        return
    chosen = bad_rate_levels(judge.thresholds)
    p = figure.params.get("p_value")
    if figure.value is None or p is None:
        reason = figure.reason or "low-side overrides' bad rate not available"
        judge.add("override_bad_rate", Status.NOT_EVALUABLE, None, chosen, reason, segment=segment)
        return
    status = Status.RED if p < chosen["red"] else Status.AMBER if p < chosen["amber"] else None
    message = (
        f"low-side overrides{family.where('', segment)} default at {figure.value:.1%}, "
        f"policy-accepted loans at {figure.params['accepted_bad_rate']:.1%} (Fisher p = {p:.3g})"
    )
    judge.add("override_bad_rate", status or Status.GREEN, p, chosen, message, segment=segment)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class OverrideRow:
    """One segment's override figures."""

    segment: str
    n_decided: int | None
    rates: tuple[float | None, ...]  # override, low-side, high-side
    exposure_share: float | None
    status: str | None
    low_side_bad_rate: float | None
    accepted_bad_rate: float | None
    p_value: float | None
    bad_rate_status: str | None
    reason: str | None


def section(run: RunView) -> tuple[OverrideRow, ...] | None:
    segments = run.figures.segments()
    rows = []
    for segment in segments:
        rate = run.figures.get("override_rate", CURRENT, segment=segment)
        if rate is None:
            continue
        bad = run.figures.get("override_bad_rate", PERFORMANCE, segment=segment)
        share = run.figures.get("override_exposure_share", CURRENT, segment=segment)
        rates = tuple(
            (f.value if f is not None else None)
            for f in (run.figures.get(n, CURRENT, segment=segment) for n in RATES)
        )
        rows.append(
            OverrideRow(
                segment or "all loans",
                rate.params.get("n_decided"),
                rates,
                share.value if share is not None else None,
                run.alerts.status("override_rate", segment=segment),
                bad.value if bad is not None else None,
                bad.params.get("accepted_bad_rate") if bad is not None else None,
                bad.params.get("p_value") if bad is not None else None,
                run.alerts.status("override_bad_rate", segment=segment),
                bad.reason if bad is not None else "no matured cohort",
            )
        )
    return tuple(rows) or None


def _shown(figures: Figures) -> tuple[str, str] | None:
    """The summary's override line, for a model with overrides only."""
    return ("Override rate", "") if figures.get("override_rate", CURRENT) else None


FAMILY = Family(
    name="overrides",
    order=110,
    figures=(
        FigureSpec("override_rate", CURRENT, "segment", "Override rate"),
        FigureSpec("low_side_override_rate", CURRENT, "segment", "Low-side override rate"),
        FigureSpec("high_side_override_rate", CURRENT, "segment", "High-side override rate"),
        FigureSpec("override_exposure_share", CURRENT, "segment", "Overrides' exposure share"),
        FigureSpec(
            "override_bad_rate",
            PERFORMANCE,
            "segment",
            "Low-side overrides' bad rate",
            rows_test=True,
        ),
    ),
    compute=compute,
    rules=(
        Rule(
            "override_rate",
            "segment",
            "Override rate",
            rate_levels,
            family.band_levels,
            _judge_rate,
            finding="Underwriters override the score's decision often",
            applies=has_overrides,
            worse="higher",
        ),
        Rule(
            "override_bad_rate",
            "segment",
            "Low-side overrides' bad rate against policy-accepted loans",
            bad_rate_levels,
            family.describe_p,
            _judge_bad_rate,
            population=PERFORMANCE,
            tested="p",
            finding="Loans accepted against the score's decision default more than its own",
            applies=has_overrides,
        ),
    ),
    sections=(Section("overrides", "Overrides", "overrides", 45, "_overrides.html", section),),
    headlines=(
        Headline(
            57,
            "override_rate",
            "",
            "override_rate",
            CURRENT,
            format="percent",
            rule="override_rate",
            with_baseline=False,
            choose=_shown,
        ),
    ),
    default_population={"override_bad_rate": PERFORMANCE},
    formulas=(
        Formula(
            66,
            "Overrides",
            (
                "low-side override: declined by the cut-off, accepted; high-side: accepted by "
                "the cut-off, declined. Override rate = overrides / loans with a decision; "
                "low-side rate = low-side / declined by policy; bad rate of low-side overrides "
                "against policy-accepted loans, one-sided Fisher exact test on loan counts."
            ),
        ),
    ),
)
