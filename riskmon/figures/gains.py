"""Gains: the cohort by score decile, riskiest first — bad rate, capture, lift, KS per group.

Figures (performance cohort, per segment): ``top_decile_lift`` (the riskiest group's bad rate
over the cohort's) and ``lift_order_breaks`` (how often a safer group has a higher bad rate);
the table itself as ``gains`` bins. No alert rule: the discrimination rules judge the ranking.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from riskmon.figures._chunks import Chunk
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Headline,
    Parameter,
    Section,
    finite,
    measured,
    ratio,
)
from riskmon.figures._formulas import GAINS_FORMULAS
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import CountTable, lift_columns_from_counts
from riskmon.records import GAINS, PERFORMANCE, BinRecord, FigureRecord

#: quantile groups of the gains table
GAIN_GROUPS = 10


def gains(
    scores: CountTable, *, higher_is_riskier: bool, segment: str = ""
) -> tuple[list[FigureRecord], list[BinRecord]]:
    """The gains (lift) table by score decile, riskiest first, and its order breaks."""
    lifted, reason = measured(
        lambda: lift_columns_from_counts(
            scores, n_groups=GAIN_GROUPS, higher_is_riskier=higher_is_riskier
        )
    )
    if lifted is None or lifted.empty:
        reason = reason or "no loans in the performance cohort"
        return [
            FigureRecord(name, None, PERFORMANCE, segment=segment, reason=reason)
            for name in ("lift_order_breaks", "top_decile_lift")
        ], []
    columns = ("group", "n_rows", "count", "score_min", "score_max", "bads")
    frame = lifted.columns
    # the columns as lists, zipped
    records = [
        BinRecord(
            variable=GAINS,
            population=PERFORMANCE,
            bin_index=i,
            label=str(int(group)),
            n_total=int(n_rows),
            total=float(count),
            segment=segment,
            lower=finite(float(score_min)),
            upper=finite(float(score_max)),
            bads=float(bads),
        )
        for i, (group, n_rows, count, score_min, score_max, bads) in enumerate(
            zip(*(frame[c].tolist() for c in columns), strict=True)
        )
    ]
    params = {"n_groups": GAIN_GROUPS}
    breaks = FigureRecord(
        "lift_order_breaks",
        float(lifted.order_breaks),
        PERFORMANCE,
        segment=segment,
        params=params,
    )
    lift = finite(float(frame["lift"][0]))
    top = FigureRecord(
        "top_decile_lift",
        lift,
        PERFORMANCE,
        segment=segment,
        params=dict(params),
        reason=None
        if lift is not None
        else "no bads in the performance cohort: the lift divides by its bad rate, 0"
        if float(frame["bads"].sum()) == 0
        else "the riskiest group's lift is not finite",
    )
    return [breaks, top], records


def compute(tables: RunTables) -> Iterator[Chunk]:
    """The gains table's figures and deciles of the cohort, segment by segment."""
    for segment in tables.segments():
        if tables.rows(PERFORMANCE, segment) is None:
            continue
        scores, _ = tables.ranking(PERFORMANCE, segment)
        yield gains(scores, higher_is_riskier=tables.model.higher_is_riskier, segment=segment)


@dataclass(frozen=True)
class GainsRow:
    """Section 6: one score decile, riskiest first."""

    group: str
    lower: float | None
    upper: float | None
    n_total: int
    weight: float  # the summed weights (the loans, unweighted)
    share: float
    bads: float
    bad_rate: float | None
    cum_share: float
    cum_bads: float
    cum_bad_rate: float | None
    lift: float | None
    cum_lift: float | None
    ks: float | None


def section(run: RunView) -> tuple[GainsRow, ...]:
    groups = run.bins.get(PERFORMANCE, GAINS)
    total = sum(b.total for b in groups)
    bads = sum(b.bads or 0.0 for b in groups)
    goods = total - bads
    overall = ratio(bads, total)
    rows = []
    cum_total = cum_bads = 0.0
    for b in groups:
        b_bads = b.bads or 0.0
        cum_total += b.total
        cum_bads += b_bads
        rate = ratio(b_bads, b.total)
        cum_rate = ratio(cum_bads, cum_total)
        rows.append(
            GainsRow(
                group=b.label,
                lower=b.lower,
                upper=b.upper,
                n_total=b.n_total,
                weight=b.total,
                share=b.total / total if total > 0 else 0.0,
                bads=b_bads,
                bad_rate=rate,
                cum_share=cum_total / total if total > 0 else 0.0,
                cum_bads=cum_bads / bads if bads > 0 else 0.0,
                cum_bad_rate=cum_rate,
                lift=rate / overall if rate is not None and overall else None,
                cum_lift=cum_rate / overall if cum_rate is not None and overall else None,
                ks=abs(cum_bads / bads - (cum_total - cum_bads) / goods)
                if bads > 0 and goods > 0
                else None,
            )
        )
    return tuple(rows)


FAMILY = Family(
    name="gains",
    order=80,
    figures=(
        FigureSpec("top_decile_lift", PERFORMANCE, "segment", "lift of the riskiest decile"),
        FigureSpec(
            "lift_order_breaks", PERFORMANCE, "segment", "decile bad-rate order breaks", count=True
        ),
    ),
    compute=compute,
    sections=(Section("gains", "Gains", "gains", 40, "_gains.html", section),),
    headlines=(
        Headline(
            70,
            "top_decile_lift",
            "Lift of the riskiest decile",
            "top_decile_lift",
            PERFORMANCE,
            format="ratio",
            with_baseline=False,
        ),
        Headline(
            80,
            "lift_order_breaks",
            "Decile bad-rate order breaks",
            "lift_order_breaks",
            PERFORMANCE,
            format="count",
            with_baseline=False,
        ),
    ),
    parameters=(Parameter(100, "top_decile_lift", "n_groups", "gains table groups"),),
    formulas=GAINS_FORMULAS,
)
