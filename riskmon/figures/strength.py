"""Strength: does each characteristic still separate bads from goods? WOE per bin and IV.

Figures (performance cohort, whole population): ``iv`` of every characteristic with its
strength band, and one bin record per bin with its counts, WOE and IV contribution — and, in
the bin's ``extra``, the baseline's labeled loans, bad rate and WOE in that bin, so that a
report shows both without recomputing either.

Frozen with a baseline: ``iv`` of every characteristic per segment, on the development
sample's labeled loans (population ``baseline``).

Rule: ``iv_drop``: relative drop of a characteristic's IV against the baseline's
(``thresholds.iv_drop``); not judged when the baseline IV is below ``min_baseline_iv``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from riskmon.figures._drops import judge_drop
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Judge,
    Parameter,
    Rule,
    Section,
    amber_red,
    as_note,
    characteristics,
    drop_levels,
    edges,
    finite,
    measured,
    ratio,
)
from riskmon.figures._formulas import STRENGTH_FORMULAS
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import (
    DEFAULT_SMOOTHING,
    CountTable,
    information_value_from_counts,
)
from riskmon.records import BASELINE, DEVELOPMENT, PERFORMANCE, SCORE, BinRecord, FigureRecord


def iv_figure(
    table: CountTable,
    *,
    variable: str,
    population: str,
    segment: str = "",
    smoothing: float = DEFAULT_SMOOTHING,
) -> FigureRecord:
    """The information value of one characteristic's labeled table, with its band."""
    iv, reason = measured(lambda: information_value_from_counts(table, smoothing=smoothing))
    params: dict[str, Any] = {"smoothing": smoothing}
    if iv is not None:
        params |= {"band": iv.band, "n_bins": int(iv.n_bins)}
        as_note(params, reason)
        reason = None
    return FigureRecord(
        "iv",
        None if iv is None else float(iv),
        population=population,
        variable=variable,
        segment=segment,
        reason=reason,
        params=params,
    )


def _woe(table: CountTable, smoothing: float) -> list[tuple[float | None, float | None, bool]]:
    """(WOE, IV contribution, smoothed) per bin; Nones when WOE is not defined on the table.

    Read off the per-bin columns :func:`~riskmon.metrics.woe_table_from_counts` would put in its
    frame, without building the frame (a run asks for these three columns of every table)."""
    per_bin, _ = measured(lambda: information_value_from_counts(table, smoothing=smoothing).per_bin)
    columns = (per_bin["woe"], per_bin["iv_contribution"], per_bin["smoothed"])
    return [
        (finite(float(woe)), finite(float(contribution)), bool(smoothed))
        for woe, contribution, smoothed in zip(*columns, strict=True)
    ]


def baseline_woe(baseline: CountTable, smoothing: float) -> list[dict[str, Any]]:
    """Per bin of the baseline's labeled table: its labeled loans, bad rate and WOE."""
    woe = _woe(baseline, smoothing)
    assert baseline.bads is not None
    assert baseline.n_bads is not None
    out = []
    for i in range(len(baseline.labels)):
        goods, bads = float(baseline.goods[i]), float(baseline.bads[i])
        out.append(
            {
                "base_n": int(baseline.n_goods[i]) + int(baseline.n_bads[i]),
                "base_bad_rate": ratio(bads, goods + bads),
                "base_woe": woe[i][0],
            }
        )
    return out


def woe_bins(
    table: CountTable,
    *,
    variable: str,
    baseline: CountTable | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
) -> list[BinRecord]:
    """One bin record per bin of a labeled characteristic table: counts, WOE, IV contribution,
    and the same bin of the ``baseline``'s labeled table in ``extra``."""
    now = _woe(table, smoothing)
    base = baseline_woe(baseline, smoothing) if baseline is not None else None
    lower, upper = edges(table)
    assert table.bads is not None
    assert table.n_bads is not None
    records = []
    for i, label in enumerate(table.labels):
        woe, contribution, smoothed = now[i]
        extra: dict[str, Any] = base[i] if base is not None else {}
        records.append(
            BinRecord(
                variable=variable,
                population=PERFORMANCE,
                bin_index=i,
                label=label,
                n_total=int(table.n_total[i]),
                total=float(table.total[i]),
                lower=lower[i],
                upper=upper[i],
                n_bads=int(table.n_bads[i]),
                bads=float(table.bads[i]),
                woe=woe,
                contribution=contribution,
                smoothed=smoothed,
                extra=extra,
            )
        )
    return records


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """IV and WOE bins of every characteristic on the cohort (whole population)."""
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    for name in characteristics(tables.model):
        labeled = tables.table(PERFORMANCE, name)
        figures.append(iv_figure(labeled, variable=name, population=PERFORMANCE))
        bins += woe_bins(labeled, variable=name, baseline=tables.baseline.labeled_table(name))
    return figures, bins


def freeze(tables: RunTables) -> list[FigureRecord]:
    """Every characteristic's IV on the development sample, per segment with labeled loans:
    what the IV drop compares with."""
    return [
        iv_figure(
            tables.table(DEVELOPMENT, name, segment),
            variable=name,
            population=BASELINE,
            segment=segment,
        )
        for segment in tables.segments()
        if tables.has(DEVELOPMENT, SCORE, segment)
        for name in characteristics(tables.model)
    ]


def _judge_iv(judge: Judge, variable: str) -> None:
    judge_drop(judge, "iv_drop", "iv", judge.thresholds.iv_drop, variable=variable)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class WoeRow:
    """One bin of a characteristic, baseline (development sample) against the cohort."""

    index: int
    label: str
    base_n: int | None
    base_bad_rate: float | None
    base_woe: float | None
    n_total: int
    n_bads: int | None
    weight: float  # the summed weights (the loans, unweighted)
    weighted_bads: float
    bad_rate: float | None
    woe: float | None
    contribution: float | None
    smoothed: bool


@dataclass(frozen=True)
class CharacteristicStrength:
    """Section 7: one characteristic's WOE per bin and its IV, baseline against now."""

    name: str
    iv: float | None
    reason: str | None
    strength: str | None
    base_iv: float | None
    base_strength: str | None
    status: str | None
    rows: tuple[WoeRow, ...]


def section(run: RunView) -> tuple[CharacteristicStrength, ...]:
    out = []
    for name in run.figures.variables("iv"):
        figure = run.figures.get("iv", PERFORMANCE, name)
        assert figure is not None
        base = run.base("iv", name)
        bins = run.bins.get(PERFORMANCE, name)
        extras = [b.extra for b in bins]
        if run.baseline is not None and bins and not any(extras):
            # a run stored before its bins carried the baseline's WOE: take it from the baseline
            smoothing = float((base.params if base else {}).get("smoothing", DEFAULT_SMOOTHING))
            extras = baseline_woe(run.baseline.labeled_table(name), smoothing)
        rows = tuple(
            WoeRow(
                index=b.bin_index + 1,
                label=b.label,
                base_n=extra.get("base_n"),
                base_bad_rate=extra.get("base_bad_rate"),
                base_woe=extra.get("base_woe"),
                n_total=b.n_total,
                n_bads=b.n_bads,
                weight=b.total,
                weighted_bads=b.bads or 0.0,
                bad_rate=ratio(b.bads or 0.0, b.total),
                woe=b.woe,
                contribution=b.contribution,
                smoothed=b.smoothed,
            )
            for b, extra in zip(bins, extras, strict=True)
        )
        out.append(
            CharacteristicStrength(
                name=name,
                iv=figure.value,
                reason=figure.reason,
                strength=figure.params.get("band"),
                base_iv=base.value if base else None,
                base_strength=base.params.get("band") if base else None,
                status=run.alerts.status("iv_drop", name),
                rows=rows,
            )
        )
    return tuple(out)


FAMILY = Family(
    name="strength",
    order=90,
    figures=(
        FigureSpec("iv", PERFORMANCE, "variable", "IV of a characteristic"),
        FigureSpec("iv", BASELINE, "variable", "IV of a characteristic at the baseline"),
    ),
    compute=compute,
    freeze=freeze,
    rules=(
        Rule(
            "iv_drop",
            "variable",
            "IV of each characteristic",
            lambda t: amber_red(t.iv_drop),
            drop_levels,
            _judge_iv,
            baseline=("iv",),
            finding="Characteristics have lost information value since the baseline",
            worse="higher",
        ),
    ),
    sections=(Section("strength", "WOE/IV", "woe-iv", 50, "_strength.html", section),),
    parameters=(Parameter(30, "iv", "smoothing", "WOE/IV pseudo-count for empty cells"),),
    formulas=STRENGTH_FORMULAS,
)
