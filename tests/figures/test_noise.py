"""A figure riskmon itself finds within sampling noise is at most AMBER by default
(``thresholds.within_noise``): a PSI below its critical value, a drop whose baseline lies in the
current confidence interval. Outside the noise the bands apply as before."""

from __future__ import annotations

from typing import Any

import pytest

from riskmon.config import Thresholds, parse_config
from riskmon.figure_table import Figures
from riskmon.figures import Judge
from riskmon.figures._drops import judge_drop
from riskmon.figures.stability import FAMILY as STABILITY
from riskmon.records import CURRENT, PERFORMANCE, SCORE, FigureRecord, Status


class _Baseline:
    """The baseline's figures a drop rule reads (a Gini of 0.50)."""

    version = 1

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        return FigureRecord(name, 0.50, "baseline") if name == "gini" else None


def _judge(figures: list[FigureRecord], **thresholds: Any) -> Judge:
    return Judge(Thresholds(**thresholds), Figures(figures), _Baseline(), None, 1000)  # type: ignore[arg-type]


def _psi(value: float, critical: float) -> FigureRecord:
    return FigureRecord("psi", value, CURRENT, variable=SCORE, params={"critical_value": critical})


@pytest.mark.parametrize(
    ("value", "critical", "setting", "status", "capped"),
    [
        (0.30, 0.35, "amber", Status.AMBER, True),  # RED by its band, within noise
        (0.30, 0.35, "green", Status.GREEN, True),
        (0.30, 0.35, "red", Status.RED, False),
        (0.30, 0.20, "amber", Status.RED, False),  # above the critical value: not noise
        (0.12, 0.35, "amber", Status.AMBER, False),  # AMBER already: nothing to cap
    ],
)
def test_a_psi_within_noise_is_at_most_the_configured_status(
    value: float, critical: float, setting: str, status: Status, capped: bool
) -> None:
    judge = _judge([_psi(value, critical)], within_noise=setting)
    (rule,) = [r for r in STABILITY.rules if r.name == "psi"]
    rule.judge(judge, "")
    (alert,) = judge.alerts
    assert alert.status == status
    assert ("as within noise (thresholds.within_noise)" in alert.message) is capped
    assert alert.value == value


@pytest.mark.parametrize(
    ("ci", "setting", "status"),
    [
        ((0.30, 0.55), "amber", Status.AMBER),  # 20 % lower, RED by its band; 0.50 within CI
        ((0.30, 0.45), "amber", Status.RED),  # the baseline outside the interval
        ((0.30, 0.55), "red", Status.RED),
    ],
)
def test_a_drop_within_the_confidence_interval_is_at_most_the_configured_status(
    ci: tuple[float, float], setting: str, status: Status
) -> None:
    low, high = ci
    figures = [
        FigureRecord("gini", 0.40, PERFORMANCE, params={"ci_low": low, "ci_high": high}),
        FigureRecord("n_bads", 200.0, PERFORMANCE),
    ]
    judge = _judge(figures, within_noise=setting)
    judge_drop(judge, "gini_drop", "gini", judge.thresholds.gini_drop)
    (alert,) = judge.alerts
    assert alert.status == status
    assert alert.value == pytest.approx(0.2)


def test_within_noise_is_validated() -> None:
    from riskmon.errors import ConfigError

    model: dict[str, Any] = {
        "name": "m",
        "source": {"url": "sqlite:///x.db", "table": "t"},
        "columns": {"id": "i", "score_date": "d", "score": "s", "label": "y"},
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
        "thresholds": {"within_noise": "purple"},
    }
    with pytest.raises(ConfigError, match=r"thresholds.within_noise"):
        parse_config({"models": [model]}, source="test", env={})


def _model(**thresholds: Any) -> Any:
    model: dict[str, Any] = {
        "name": "m",
        "source": {"url": "sqlite:///x.db", "table": "t"},
        "columns": {"id": "i", "score_date": "d", "score": "s", "label": "y"},
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
        "thresholds": thresholds,
    }
    return parse_config({"models": [model]}, source="test", env={}).models[0]


@pytest.mark.parametrize(("least", "judged"), [(100, False), (40, True), (0, True)])
def test_a_segment_below_min_segment_loans_is_reported_not_judged(least: int, judged: bool) -> None:
    from riskmon.evaluate import evaluate

    figures = [
        FigureRecord("n_rows", 5000.0, CURRENT),
        FigureRecord("n_rows", 60.0, CURRENT, segment="channel=broker"),
        _psi(0.40, 0.10),
        FigureRecord(
            "psi",
            0.40,
            CURRENT,
            variable=SCORE,
            segment="channel=broker",
            params={"critical_value": 0.10},
        ),
    ]
    alerts = evaluate(
        _model(min_segment_loans=least),
        figures,
        _Baseline(),
        previous_n_current=None,
        n_current=5000,  # type: ignore[arg-type]
    )
    (whole,) = [a for a in alerts if a.rule == "psi" and not a.segment]
    (broker,) = [a for a in alerts if a.rule == "psi" and a.segment == "channel=broker"]
    assert whole.status == Status.RED
    if judged:
        assert broker.status == Status.RED
    else:
        assert broker.status == Status.NOT_EVALUABLE
        assert broker.message == (
            "segment channel=broker has 60 loans in the current population, fewer than "
            "thresholds.min_segment_loans (100): reported, not judged"
        )


def _calibration_figures(segment: str, n_cohort: float) -> list[FigureRecord]:
    """A segment whose cohort defaults far above its PD: Jeffreys p 0.001."""
    return [
        FigureRecord("n_rows", n_cohort, PERFORMANCE, segment=segment),
        FigureRecord("calibration_n", n_cohort, PERFORMANCE, segment=segment),
        FigureRecord("calibration_defaults", n_cohort / 2, PERFORMANCE, segment=segment),
        FigureRecord("mean_pd", 0.10, PERFORMANCE, segment=segment),
        FigureRecord("default_rate", 0.50, PERFORMANCE, segment=segment),
        FigureRecord("jeffreys_p", 0.001, PERFORMANCE, segment=segment),
    ]


@pytest.mark.parametrize(
    ("n_now", "n_cohort", "judged"), [(None, 2.0, False), (500.0, 40.0, False), (5.0, 400.0, True)]
)
def test_a_cohort_rule_is_judged_by_the_segment_s_size_in_the_cohort(
    n_now: float | None, n_cohort: float, judged: bool
) -> None:
    """A segment that has no loans now, or only a few in its cohort, is not judged on its
    cohort; one with a large cohort is, whatever its size now."""
    from riskmon.evaluate import evaluate

    segment = "channel=ch1219"
    figures = [FigureRecord("n_rows", 5000.0, CURRENT), *_calibration_figures(segment, n_cohort)]
    if n_now is not None:
        figures.append(FigureRecord("n_rows", n_now, CURRENT, segment=segment))
    alerts = evaluate(
        _model(),
        figures,
        _Baseline(),
        previous_n_current=None,
        n_current=5000,  # type: ignore[arg-type]
    )
    (under,) = [a for a in alerts if a.rule == "pd_underestimation" and a.segment == segment]
    if judged:
        assert under.status == Status.AMBER  # p 0.001: below 0.05, not below 0.001
    else:
        assert under.status == Status.NOT_EVALUABLE
        assert under.message == (
            f"segment {segment} has {int(n_cohort)} loans in the performance cohort, fewer than "
            "thresholds.min_segment_loans (100): reported, not judged"
        )
