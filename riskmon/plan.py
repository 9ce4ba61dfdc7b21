"""Plan: the date windows of one monitoring run of a model as of a date D.

- *current population*: loans scored in the stability window ending at D;
- *performance cohort*: loans scored in the stability window ending one performance window
  before D; those with a label (not NULL) have matured, the others are counted as unmatured;
- *baseline*: loans scored in the model's development window.

Every window is a range of score dates, both ends inclusive: ``[start, end]``. In SQL it becomes
``start <= score_date < end + 1 day``, so that timestamps anywhere on the end date are in.

The stability window ending at D starts the day after D minus the window: 1 month as of
2025-03-15 is 2025-02-16 to 2025-03-15. Month arithmetic clamps to the month's last day
(2025-03-31 minus 1 month is 2025-02-28) and keeps month ends: when D is the last day of its month
the window is whole calendar months (1 month as of 2025-02-28 is 2025-02-01 to 2025-02-28).
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Date, and_, literal

from riskmon.config import ModelConfig, Period
from riskmon.records import RunPlanRecord

ONE_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class DateWindow:
    """Score dates from ``start`` to ``end``, both inclusive."""

    start: dt.date
    end: dt.date

    @property
    def end_exclusive(self) -> dt.date:
        """The first date after the window: ``score_date < end_exclusive`` in queries."""
        return self.end + ONE_DAY

    def contains(self, score_date: ColumnElement[Any]) -> ColumnElement[bool]:
        """SQL: ``start <= score_date < end + 1 day``, the dates bound as typed parameters
        (a query source's columns carry no type to convert them by)."""
        start, end = literal(self.start, Date()), literal(self.end_exclusive, Date())
        return and_(score_date >= start, score_date < end)

    def __contains__(self, day: object) -> bool:
        if isinstance(day, dt.datetime):
            day = day.date()
        return isinstance(day, dt.date) and self.start <= day <= self.end

    def __str__(self) -> str:
        return f"{self.start} to {self.end}"


def _is_month_end(day: dt.date) -> bool:
    return day.day == calendar.monthrange(day.year, day.month)[1]


def _minus_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + (day.month - 1) - months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    target_day = last if _is_month_end(day) else min(day.day, last)
    return dt.date(year, month + 1, target_day)


def subtract(day: dt.date, period: Period) -> dt.date:
    """``day`` minus ``period`` (months clamp to, and keep, month ends)."""
    if period.unit == "day":
        return day - dt.timedelta(days=period.count)
    if period.unit == "week":
        return day - dt.timedelta(weeks=period.count)
    months = period.count * (12 if period.unit == "year" else 1)
    return _minus_months(day, months)


def add(day: dt.date, period: Period) -> dt.date:
    """``day`` plus ``period`` (months clamp to, and keep, month ends, as :func:`subtract`)."""
    if period.unit in ("day", "week"):
        return day + dt.timedelta(days=period.count * (7 if period.unit == "week" else 1))
    months = period.count * (12 if period.unit == "year" else 1)
    return _minus_months(day, -months)


def as_of_dates(start: dt.date, end: dt.date, every: Period) -> list[dt.date]:
    """``start``, ``start + every``, ... up to ``end`` inclusive (a backfill's as-of dates).

    Steps are taken from ``start`` each time, so a month-end start stays on month ends and a
    31st that meets a short month comes back to the 31st afterwards.
    """
    dates: list[dt.date] = []
    step = 0
    while True:
        shifted = Period(count=every.count * step, unit=every.unit) if step else None
        day = start if shifted is None else add(start, shifted)
        if day > end:
            return dates
        dates.append(day)
        step += 1


def window_ending(end: dt.date, length: Period) -> DateWindow:
    """The window of ``length`` whose last day is ``end``."""
    return DateWindow(start=subtract(end, length) + ONE_DAY, end=end)


@dataclass(frozen=True)
class RunPlan:
    """The windows of one run of a model as of a date."""

    model: str
    as_of: dt.date
    current: DateWindow
    performance: DateWindow
    baseline: DateWindow


def plan_run(model: ModelConfig, as_of: dt.date) -> RunPlan:
    """The windows of ``model``'s run as of ``as_of``: an LGD, CCF or EAD model's
    performance cohort is the facilities whose recovery closed in the observation window
    ending at ``as_of``."""
    performance = window_ending(subtract(as_of, model.performance_window), model.stability_window)
    if model.kind != "pd":
        performance = window_ending(as_of, model.observation_window)
    return RunPlan(
        model=model.name,
        as_of=as_of,
        current=window_ending(as_of, model.stability_window),
        performance=performance,
        baseline=DateWindow(model.baseline.start, model.baseline.end),
    )


def beyond_calendar(model: ModelConfig, as_of: dt.date) -> str | None:
    """Why a run as of ``as_of`` cannot be planned at all, if its windows fall off the
    calendar (``--as-of 9999-12-31``: the command line refuses such dates before this)."""
    try:
        plan = plan_run(model, as_of)
        for window in (plan.current, plan.performance):
            window.end_exclusive  # noqa: B018 - computing it is the check
        return None
    except OverflowError:
        pass
    except ValueError as exc:
        if "out of range" not in str(exc):
            return None  # another reason: the run fails, and says it, once claimed
    return (
        f"as-of date {as_of} cannot be planned: the run's windows (stability "
        f"{model.stability_window}, performance {model.performance_window}) fall outside the "
        f"calendar (years 1 to 9999); nothing was stored"
    )


def planned_record(model: ModelConfig, as_of: dt.date) -> RunPlanRecord | None:
    """What a run as of ``as_of`` sets out to measure, as stored with its claim; None when the
    dates cannot be planned (the run then fails, saying why)."""
    try:
        return plan_record(model, plan_run(model, as_of))
    except (ValueError, OverflowError):
        return None


def plan_record(model: ModelConfig, plan: RunPlan) -> RunPlanRecord:
    """The stored form of ``plan``: its windows and the columns it reads."""
    columns = model.columns
    return RunPlanRecord(
        current=(plan.current.start, plan.current.end),
        performance=(plan.performance.start, plan.performance.end),
        stability_window=str(model.stability_window),
        performance_window=str(
            model.performance_window if model.kind == "pd" else model.observation_window
        ),
        score=columns.score,
        score_direction=model.score_direction,
        # an LGD, CCF or EAD model's outcome is its realised value, weighted by the exposure
        label=columns.label if columns.label is not None else str(columns.realised),
        weight=columns.weight or columns.exposure,
    )
