"""Rating system: how the current population spreads over the grades, against the baseline.

The grades are the calibration's (``calibration.grades``: a master scale on the PD, or a grade
column), else the score's baseline bins; best grade first (a master scale's lowest PD, a grade
column's configured order, the score's safest bin). Loans without a grade (the missing bin, and
for a grade column the unseen one) are counted apart and left out of the K grades.

Figures (current population, per segment): ``rating_herfindahl``, the ECB's Herfindahl index
of the grade distribution, HI = 1 + ln((CV² + 1)/K)/ln K with CV = √(K·Σ(R_i − 1/K)²) (0 for
loans spread evenly, 1 for one grade; the baseline's in its params);
``rating_concentration_p``, the ECB's test that the distribution is more concentrated than the
baseline's, z = √(K − 1)·(CV − CV_init)/√(CV²·(0.5 + CV²)), p = 1 − Φ(z); ``rating_shift_p``,
Pearson's χ² test of homogeneity of the two distributions (2 × K, K − 1 degrees of freedom,
grades empty in both left out); with a weight, ``rating_herfindahl_exposure`` on summed
exposure. Bins (``rating``, per segment): each grade's loans and weight, its share now and at
the baseline.

Rule (whole population, configured grades only): ``rating_concentration`` — p-value levels
``thresholds.concentration`` on ``rating_concentration_p``. The score's baseline bins are not
judged: equal-frequency bins are spread evenly by construction, and the ECB's statistic
depends on the ratio of the two CVs alone, so near an even spread it judges sampling noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.charts import Chart, bar_chart, trend_chart
from riskmon.config import ModelConfig
from riskmon.figures._family import (
    Family,
    FigureSpec,
    HistoryColumn,
    Judge,
    Rule,
    Section,
    describe_p,
    finite,
    measured,
    p_levels,
    p_status,
)
from riskmon.figures._formulas import RATING_FORMULAS
from riskmon.figures._views import RunTables, RunView
from riskmon.metrics import CountTable, herfindahl_index, herfindahl_test
from riskmon.records import CURRENT, GRADE, SCORE, BinRecord, FigureRecord, Status

#: the bins' variable
RATING = "rating"
#: what the grades are when no grades are configured
SCORE_BINS = "score's baseline bins"
#: the fewest grades a concentration is measured over: HI divides by ln K, 0 for one grade
#: (the baseline's score has one bin when every baseline loan has the same score)
MIN_GRADES = 2


@dataclass(frozen=True)
class Grades:
    """One population's loans (and weights) per grade, best first, and those without one."""

    labels: list[str]
    n: np.ndarray
    w: np.ndarray
    n_ungraded: int


def grade_source(tables: RunTables, population: str = CURRENT) -> tuple[str, str]:
    """The variable the grades of ``population`` are read from, and how to say what they are."""
    grades = tables.model.calibration.grades
    if grades is not None and tables.has(population, GRADE):
        return GRADE, "master scale" if isinstance(grades, list) else "grade column"
    return SCORE, SCORE_BINS


def grades_best_first(variable: str, model: ModelConfig) -> bool:
    """Whether the bins of ``variable`` run from the best grade: configured grades do; the
    score's bins do when higher scores are riskier."""
    return variable != SCORE or model.higher_is_riskier


def _grades(table: CountTable, best_first: bool) -> Grades:
    binning = table.binning
    assert binning is not None
    k = binning.n_value_bins
    order = list(range(k)) if best_first else list(range(k - 1, -1, -1))
    labels = [str(table.labels[i]) for i in order]
    ungraded = int(table.n_total[k:].sum())
    n, w = table.n_total[order].astype(float), table.total[order].astype(float)
    return Grades(labels, n, w, ungraded)


def chi2_homogeneity(now: np.ndarray, before: np.ndarray) -> tuple[float, int, float]:
    """Pearson's χ² of a 2 × K table (rows ``now`` and ``before``), its degrees of freedom and
    p-value; grades empty in both rows are left out."""
    from scipy.special import chdtrc  # the χ² survival function, as scipy.stats.chi2.sf

    keep = (now + before) > 0
    table = np.vstack([now[keep], before[keep]])
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    statistic = float(((table - expected) ** 2 / expected).sum())
    dof = int(keep.sum()) - 1
    return statistic, dof, float(chdtrc(dof, statistic))


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """The grade distribution's figures and bins per segment of the current population."""
    variable, what = grade_source(tables)
    frozen = tables.baseline.binning(variable)
    best_first = grades_best_first(variable, tables.model)
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    weighted = tables.model.columns.weight is not None
    for segment in tables.segments():
        if not tables.has(CURRENT, variable, segment):
            continue
        table = tables.table(CURRENT, variable, segment)
        now = _grades(table, best_first)
        base: Grades | None = None
        reason = None
        if frozen is None or frozen != table.binning:
            reason = (
                f"baseline version {tables.baseline.version} was frozen without these grades; "
                f"`riskmon baseline freeze` freezes them"
            )
        elif not tables.baseline.has_segment(segment):
            reason = "the baseline has no loans in this segment"
        else:
            base = _grades(tables.baseline.table(variable, segment), best_first)
        figures += _figures(now, base, reason, segment, what, weighted)
        bins += _bins(now, base, segment)
    return figures, bins


def _figures(
    now: Grades, base: Grades | None, base_reason: str | None, segment: str, what: str, w: bool
) -> list[FigureRecord]:
    params: dict[str, Any] = {"grades": what, "k": len(now.labels), "ungraded": now.n_ungraded}

    def figure(name: str, value: Any, reason: str | None, **more: Any) -> FigureRecord:
        value = finite(None if value is None else float(value))
        why = None if value is not None else (reason or "not defined on this population")
        return FigureRecord(name, value, CURRENT, segment=segment, reason=why, params=params | more)

    empty = _not_measurable(now)
    hi, hi_reason = (None, empty) if empty else measured(lambda: herfindahl_index(now.n))
    out = []
    if base is None or base.n.sum() == 0:
        why = base_reason or "no graded loans in the baseline"
        out.append(figure("rating_herfindahl", hi, hi_reason, baseline=None))
        out += [figure(n, None, empty or why) for n in ("rating_concentration_p", "rating_shift_p")]
    else:
        test, reason = (None, empty) if empty else measured(lambda: herfindahl_test(now.n, base.n))
        out.append(figure("rating_herfindahl", hi, hi_reason, baseline=test and test.hi_initial))
        stats = {} if test is None else {"statistic": finite(test.statistic), "cv": test.cv}
        stats |= {"cv_baseline": None if test is None else test.cv_initial}
        out.append(figure("rating_concentration_p", test and test.pvalue, reason, **stats))
        if empty:
            out.append(figure("rating_shift_p", None, empty))
        else:
            chi2, dof, p = chi2_homogeneity(now.n, base.n)
            lone = None if dof > 0 else "only one grade holds loans, now and at the baseline"
            out.append(figure("rating_shift_p", p, lone, statistic=finite(chi2), dof=dof))
    if w:
        hi_w, why_w = (None, empty) if empty else measured(lambda: herfindahl_index(now.w))
        out.append(figure("rating_herfindahl_exposure", hi_w, why_w))
    return out


def _not_measurable(now: Grades) -> str | None:
    """Why the concentration over ``now``'s grades cannot be measured, or None."""
    if len(now.labels) < MIN_GRADES:
        return f"one grade only: a concentration is measured over {MIN_GRADES} grades or more"
    return "no graded loans" if now.n.sum() == 0 else None


def _bins(now: Grades, base: Grades | None, segment: str) -> list[BinRecord]:
    total = float(now.n.sum())
    base_shares = base.n / float(base.n.sum()) if base is not None and base.n.sum() > 0 else None
    return [
        BinRecord(
            variable=RATING,
            population=CURRENT,
            bin_index=i,
            label=label,
            n_total=int(now.n[i]),
            total=float(now.w[i]),
            segment=segment,
            actual_share=float(now.n[i]) / total if total else None,
            expected_share=float(base_shares[i]) if base_shares is not None else None,
            extra={"grade": i + 1},
        )
        for i, label in enumerate(now.labels)
    ]


# --------------------------------------------------------------------------- rules


def _judge(judge: Judge, _: str) -> None:
    segment = ""  # the whole population: a segment's grades are reported, not judged
    levels = p_levels(judge.thresholds.concentration)
    p = judge.figures.get("rating_concentration_p", CURRENT, segment=segment)
    if p is None or p.params.get("grades") == SCORE_BINS:
        # equal-frequency bins are spread evenly by construction, and the test's statistic
        # depends on the ratio of the two CVs alone: near CV = 0 it judges sampling noise
        return
    if p.value is None:
        reason = p.reason or "no p-value"
        judge.add("rating_concentration", Status.NOT_EVALUABLE, None, levels, reason, "", segment)
        return
    hi = judge.figures.get("rating_herfindahl", CURRENT, segment=segment)
    now = hi.value if hi is not None else None
    before = hi.params.get("baseline") if hi is not None else None
    message = (
        f"Herfindahl index of the grades {now:.4f} against the baseline's {before:.4f} "
        f"(ECB concentration test p = {p.value:.3g})"
        if now is not None and before is not None
        else f"ECB concentration test p = {p.value:.3g}"
    )
    status = p_status(p.value, judge.thresholds.concentration)
    judge.add("rating_concentration", status, p.value, levels, message, "", segment)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class GradeRow:
    """One grade of the distribution."""

    grade: int
    label: str
    n: int
    share: float | None
    baseline_share: float | None


@dataclass(frozen=True)
class RatingSection:
    """The grade distribution now against the baseline, and its concentration."""

    grades: str
    rows: list[GradeRow]
    ungraded: int
    herfindahl: FigureRecord | None
    herfindahl_exposure: FigureRecord | None
    concentration: FigureRecord | None
    shift: FigureRecord | None
    status: str | None
    bars: Chart
    trend: Chart


def section(run: RunView) -> RatingSection | None:
    """The Rating system section; None for a model without grades (its figures are measured on
    the score's baseline bins, spread evenly by construction: nothing to show of a rating
    system) and for a run without the figures."""
    f = run.figures
    hi = f.get("rating_herfindahl", CURRENT)
    if hi is None or hi.params.get("grades") == SCORE_BINS:
        return None
    rows = [
        GradeRow(
            grade=int(b.extra.get("grade", b.bin_index + 1)),
            label=b.label,
            n=b.n_total,
            share=b.actual_share,
            baseline_share=b.expected_share,
        )
        for b in run.bins.get(CURRENT, RATING)
    ]
    series, _ = run.history.series("rating_herfindahl", CURRENT)
    return RatingSection(
        grades=str(hi.params.get("grades", "")),
        rows=rows,
        ungraded=int(hi.params.get("ungraded", 0)),
        herfindahl=hi,
        herfindahl_exposure=f.get("rating_herfindahl_exposure", CURRENT),
        concentration=f.get("rating_concentration_p", CURRENT),
        shift=f.get("rating_shift_p", CURRENT),
        status=run.alerts.status("rating_concentration"),
        bars=bar_chart(
            "Loans by grade, best first",
            [str(r.grade) for r in rows],
            [
                ("baseline", "base", [r.baseline_share for r in rows]),
                ("current", "series", [r.share for r in rows]),
            ],
            y_label="share of loans",
        ),
        trend=trend_chart(
            "Herfindahl index of the grades over time", series, y_label="HI", digits=4
        ),
    )


FAMILY = Family(
    name="rating",
    order=50,
    figures=(
        FigureSpec("rating_herfindahl", CURRENT, "segment", "Herfindahl index of the grades"),
        FigureSpec(
            "rating_herfindahl_exposure", CURRENT, "segment", "Herfindahl index, by exposure"
        ),
        FigureSpec("rating_concentration_p", CURRENT, "segment", "ECB concentration test p"),
        FigureSpec("rating_shift_p", CURRENT, "segment", "χ² test of the grade distribution p"),
    ),
    compute=compute,
    rules=(
        Rule(
            "rating_concentration",
            "run",
            "grades more concentrated than at the baseline",
            lambda t: p_levels(t.concentration),
            describe_p,
            _judge,
            finding="Loans are more concentrated in few grades than at the baseline",
            worse="lower",
        ),
    ),
    sections=(Section("rating", "Rating system", "rating", 38, "_rating.html", section),),
    history=(HistoryColumn(25, "rating_herfindahl", "", CURRENT),),
    formulas=RATING_FORMULAS,
)
