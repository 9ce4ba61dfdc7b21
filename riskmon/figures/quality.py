"""Data quality: how many loans came, which were left out and why, how many are unmatured,
how many values are missing or were never seen in the baseline.

Figures: ``n_rows`` of the current population and ``unmatured_share`` of the cohort (per
segment); ``excluded_share`` of the current population and of the cohort, the share left out
for invalid data, with the whole waterfall in its params (read; no score; a score NaN or
infinite; a weight NULL or negative; a weight of 0; used; used loans repeating an id and score
date); ``cohort_in_sample``, the share of the cohort's days inside the development window;
``missing_rate`` and ``unseen_rate`` of every characteristic (current population).

Rules: ``volume_change`` (``|now / previous run − 1|`` of the current population's size against
the last run whose current population had loans, ``thresholds.volume_change``; an empty current
population is RED: a feed that stopped must not read as a quiet month); ``exclusions``
(``thresholds.excluded_share``); ``duplicate_ids`` (``thresholds.duplicate_ids``);
``cohort_matured`` (AMBER when the cohort has no matured outcome); and ``missing_rate_change``
(``|now − baseline|`` of a characteristic's missing rate in rate points,
``thresholds.missing_rate_change``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from riskmon.figures._family import (
    Family,
    FigureSpec,
    Headline,
    HistoryColumn,
    Judge,
    Rule,
    Section,
    amber_red,
    banded,
)
from riskmon.figures._formulas import QUALITY_FORMULAS
from riskmon.figures._quality_figures import compute
from riskmon.figures._quality_section import section
from riskmon.records import CURRENT, PERFORMANCE, FigureRecord, Status

# --------------------------------------------------------------------------- rules


def _judge_volume(judge: Judge, _: str) -> None:
    """The current population's size against the model's last run with loans, or, when no
    earlier run had any, against the baseline's loans per window; no loans at all is RED."""
    band = judge.thresholds.volume_change
    thresholds = amber_red(band)
    previous, expected = judge.previous_n_current, judge.expected_n_current
    if previous:
        against: float | None = previous
        levels = thresholds | {"previous": previous}
        compared = f"{previous} in the last run with loans"
    elif expected:
        against = expected
        levels = thresholds | {"baseline_per_window": expected}
        compared = f"{expected:,.0f} expected from the baseline's volume, no earlier run with loans"
    else:
        against, levels, compared = None, thresholds, "no earlier run had any"
    levels |= {"current": judge.n_current}
    if judge.n_current == 0:
        message = f"no loans in the current population ({compared}): is the feed empty?"
        value = -1.0 if against else None
        judge.add("volume_change", Status.RED, value, levels, message)
        return
    if against is None:
        message = "no earlier run with loans, and no baseline volume, to compare the volume with"
        judge.add("volume_change", Status.NOT_EVALUABLE, None, thresholds, message)
        return
    change = judge.n_current / against - 1
    status = banded(abs(change), band.amber, band.red)
    message = f"{judge.n_current} loans vs {compared} ({change:+.1%})"
    judge.add("volume_change", status, change, levels, message)


_WHY = {
    "null_score": "no score",
    "non_finite_score": "a score NaN or infinite",
    "out_of_range": "a score outside score_range",
    "invalid_weight": "a weight NULL or negative",
}


def _left_out(figure: FigureRecord) -> int:
    return sum(int(figure.params.get(key, 0)) for key in _WHY)


def _waterfall(figure: FigureRecord) -> str:
    p = figure.params
    parts = [f"{p.get(key, 0)} {why}" for key, why in _WHY.items() if p.get(key)]
    return ", ".join(parts) or "none"


def _waterfalls(judge: Judge) -> list[tuple[str, FigureRecord]]:
    """The current population's and the cohort's waterfalls (``excluded_share``), named."""
    named = (("current population", CURRENT), ("cohort", PERFORMANCE))
    return [
        (name, f)
        for name, population in named
        if (f := judge.figures.get("excluded_share", population)) is not None
    ]


def _judge_exclusions(judge: Judge, _: str) -> None:
    """The larger share of invalid loans left out, of the current population and the cohort."""
    band = judge.thresholds.excluded_share
    levels = amber_red(band)
    found = [(name, f) for name, f in _waterfalls(judge) if f.value is not None]
    if not found:
        return  # nothing was read, or exclusions were not counted
    share = max(f.value or 0.0 for _, f in found)
    message = "; ".join(
        f"{name}: {_left_out(f)} of {f.params.get('read', 0)} loans left out ({_waterfall(f)})"
        for name, f in found
    )
    judge.add("exclusions", banded(share, band.amber, band.red), share, levels, message)


def _judge_duplicates(judge: Judge, _: str) -> None:
    """The larger share of used loans repeating the id and score date of another."""
    band = judge.thresholds.duplicate_ids
    levels = amber_red(band)
    found = [
        (name, f)
        for name, f in _waterfalls(judge)
        if "duplicate_ids" in f.params and f.params.get("used")
    ]
    if not found:
        return
    share = max(int(f.params["duplicate_ids"]) / int(f.params["used"]) for _, f in found)
    message = "; ".join(
        f"{name}: {f.params['duplicate_ids']} of {f.params['used']} loans repeat the id and "
        f"score date of another"
        for name, f in found
    )
    if share >= 0.5:
        message += " (a source that returns every loan twice?)"
    judge.add("duplicate_ids", banded(share, band.amber, band.red), share, levels, message)


def _judge_matured(judge: Judge, _: str) -> None:
    """AMBER when the performance cohort has no matured outcome: nothing about the model's
    performance was judged, which a GREEN run would hide."""
    unmatured = judge.figures.get("unmatured_share", PERFORMANCE)
    levels: dict[str, Any] = {"min_matured": 1}
    if unmatured is None:
        return  # the cohort was not collected
    scored = int(unmatured.params.get("n_scored") or 0)
    matured = scored - int(unmatured.params.get("n_unmatured") or 0)
    if matured > 0:
        message = f"{matured} of the cohort's {scored} loans have a matured outcome"
        judge.add("cohort_matured", Status.GREEN, float(matured), levels, message)
        return
    what = (
        f"none of the cohort's {scored} loans has a matured outcome yet"
        if scored
        else "no loans in the performance cohort"
    )
    message = (
        f"{what}: KS, AUC, Gini, IV and calibration are not judged (a backfill ahead of the "
        f"outcomes, or a label feed that stopped?)"
    )
    judge.add("cohort_matured", Status.AMBER, 0.0, levels, message)


def _judge_missing(judge: Judge, variable: str) -> None:
    band = judge.thresholds.missing_rate_change
    thresholds: dict[str, object] = amber_red(band)
    now = judge.figures.get("missing_rate", CURRENT, variable)
    base = judge.baseline.missing_rate(variable)
    if now is None or now.value is None or base is None:
        judge.add(
            "missing_rate_change",
            Status.NOT_EVALUABLE,
            None,
            thresholds,
            f"missing rate of {variable} not available",
            variable,
        )
        return
    change = now.value - base
    thresholds |= {"baseline": base, "current": now.value}
    judge.add(
        "missing_rate_change",
        banded(abs(change), band.amber, band.red),
        change,
        thresholds,
        f"missing rate of {variable} {now.value:.2%} vs baseline {base:.2%}",
        variable,
    )


def _describe_change(levels: Mapping[str, Any]) -> str:
    return f"change: amber ≥ {levels.get('amber', 0):.0%}, red ≥ {levels.get('red', 0):.0%}"


def _describe_share(levels: Mapping[str, Any]) -> str:
    return f"share: amber ≥ {levels.get('amber', 0):.1%}, red ≥ {levels.get('red', 0):.1%}"


def _describe_points(levels: Mapping[str, Any]) -> str:
    amber, red = levels.get("amber", 0) * 100, levels.get("red", 0) * 100
    return f"change: amber ≥ {amber:g}, red ≥ {red:g} points"


FAMILY = Family(
    name="quality",
    order=100,
    figures=(
        FigureSpec("n_rows", CURRENT, "segment", "loans in the current population", count=True),
        FigureSpec("unmatured_share", PERFORMANCE, "segment", "unmatured share of the cohort"),
        FigureSpec(
            "cohort_in_sample", PERFORMANCE, "run", "share of the cohort's days in development"
        ),
        FigureSpec("excluded_share", CURRENT, "run", "share of loans left out (invalid)"),
        FigureSpec("excluded_share", PERFORMANCE, "run", "share of the cohort left out"),
        FigureSpec("missing_rate", CURRENT, "variable", "missing rate of a characteristic"),
        FigureSpec("unseen_rate", CURRENT, "variable", "share of categories unseen at baseline"),
    ),
    compute=compute,
    rules=(
        Rule(
            "volume_change",
            "run",
            "number of loans vs previous run",
            lambda t: amber_red(t.volume_change),
            _describe_change,
            _judge_volume,
            finding="The number of loans scored has changed sharply",
        ),
        Rule(
            "exclusions",
            "run",
            "share of loans left out for invalid data (no score, an invalid weight)",
            lambda t: amber_red(t.excluded_share),
            _describe_share,
            _judge_exclusions,
            finding="Loans were left out for invalid data (no score, an invalid weight)",
            worse="higher",
        ),
        Rule(
            "duplicate_ids",
            "run",
            "share of loans repeating an id and score date (counted, not removed)",
            lambda t: amber_red(t.duplicate_ids),
            _describe_share,
            _judge_duplicates,
            finding="Loans repeat the id and score date of another",
            worse="higher",
        ),
        Rule(
            "cohort_matured",
            "run",
            "matured outcomes in the performance cohort",
            lambda _: {"min_matured": 1},
            lambda _: "AMBER when no loan of the cohort has a matured outcome",
            _judge_matured,
            finding="No outcome has matured in the performance cohort: nothing to judge it by",
        ),
        Rule(
            "missing_rate_change",
            "variable",
            "missing rate vs baseline",
            lambda t: amber_red(t.missing_rate_change),
            _describe_points,
            _judge_missing,
            finding="Characteristics' missing rates have moved from the baseline's",
            worse="higher",
        ),
    ),
    sections=(Section("quality", "Data quality", "data-quality", 70, "_quality.html", section),),
    headlines=(
        Headline(
            90,
            "n_current",
            "Loans in the current population",
            "n_rows",
            CURRENT,
            format="count",
            rule="volume_change",
            with_baseline=False,
        ),
        Headline(
            100,
            "unmatured_share",
            "Unmatured share of the cohort",
            "unmatured_share",
            PERFORMANCE,
            format="percent",
            rule="cohort_matured",
            with_baseline=False,
        ),
    ),
    history=(HistoryColumn(10, "n_rows", "", CURRENT),),
    default_population={"missing_rate": CURRENT, "unseen_rate": CURRENT},
    formulas=QUALITY_FORMULAS,
)
