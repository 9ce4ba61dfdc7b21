"""Windows of a run: inclusive dates, month arithmetic that keeps month ends."""

from __future__ import annotations

import datetime as dt

import pytest

from riskmon.config import Period
from riskmon.plan import DateWindow, plan_run, subtract, window_ending

from .collect.loans import model_config

D = dt.date


@pytest.mark.parametrize(
    ("day", "period", "expected"),
    [
        (D(2025, 3, 15), "1 month", D(2025, 2, 15)),
        (D(2025, 3, 31), "1 month", D(2025, 2, 28)),  # clamped to February's end
        (D(2025, 2, 28), "1 month", D(2025, 1, 31)),  # a month end stays a month end
        (D(2024, 2, 29), "12 months", D(2023, 2, 28)),
        (D(2024, 2, 29), "1 year", D(2023, 2, 28)),
        (D(2025, 1, 31), "13 months", D(2023, 12, 31)),
        (D(2025, 3, 15), "2 weeks", D(2025, 3, 1)),
        (D(2025, 3, 1), "1 day", D(2025, 2, 28)),
    ],
)
def test_subtract(day: dt.date, period: str, expected: dt.date) -> None:
    assert subtract(day, Period.model_validate(period)) == expected


def test_a_month_window_ending_on_a_month_end_is_that_calendar_month() -> None:
    assert window_ending(D(2025, 2, 28), Period.model_validate("1 month")) == DateWindow(
        D(2025, 2, 1), D(2025, 2, 28)
    )
    assert window_ending(D(2025, 3, 15), Period.model_validate("1 month")) == DateWindow(
        D(2025, 2, 16), D(2025, 3, 15)
    )


def test_window_contains_both_ends_and_timestamps_on_the_end_date() -> None:
    window = DateWindow(D(2025, 3, 1), D(2025, 3, 31))
    assert D(2025, 3, 1) in window
    assert D(2025, 3, 31) in window
    assert dt.datetime(2025, 3, 31, 23, 59) in window
    assert D(2025, 4, 1) not in window
    assert window.end_exclusive == D(2025, 4, 1)


def test_plan_of_a_run() -> None:
    model = model_config("sqlite://")  # 1-month stability, 12-month performance windows
    plan = plan_run(model, D(2025, 3, 31))
    assert plan.current == DateWindow(D(2025, 3, 1), D(2025, 3, 31))
    assert plan.performance == DateWindow(D(2024, 3, 1), D(2024, 3, 31))
    assert plan.baseline == DateWindow(D(2024, 12, 15), D(2024, 12, 31))
