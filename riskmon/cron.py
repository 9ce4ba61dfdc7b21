"""Cron schedules: 5-field crontab expressions read as cron reads them, as APScheduler triggers.

Expressions are standard crontab: day-of-week 0 and 7 are Sunday, and when both day-of-month
and day-of-week are restricted a day matching either fires, as cron does (APScheduler 3 counts
weekdays from Monday and requires both). :func:`cron_trigger` translates; the configuration
checks an expression with it, and the scheduler runs on what it returns, so both read a
schedule the same way.

A run started on a day monitors as of the day before it (:func:`as_of_started_on`): the last
day whose loans are all scored, and the date a period ends — a monthly schedule on the 1st
runs as of the month end before it, the as-of dates ``riskmon backfill --every month`` takes
from a month end.

This module sits at the bottom of the package: it imports nothing of riskmon's, and APScheduler
only when a trigger is built, so that reading the configuration stays cheap.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: how far the as-of date of a run lies before the day it starts on: the day before, the last
#: one that has ended
AS_OF_LAG = dt.timedelta(days=1)

#: crontab's weekday names, Sunday first (crontab's 0, and 7)
CRON_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def time_zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``; a ValueError saying what was expected if there is none."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"expected an IANA time zone such as 'UTC' or 'Europe/Paris', got {name!r}"
        ) from None


def _weekday(token: str) -> int:
    if token.isdigit() and 0 <= int(token) <= 7:
        return int(token)
    if token.lower() in CRON_WEEKDAYS:
        return CRON_WEEKDAYS.index(token.lower())
    raise ValueError(f"expected a weekday 0-7 or sun-sat, got {token!r}")


def _weekdays(field: str) -> str:
    """A crontab day-of-week field (0 and 7 = Sunday) as APScheduler weekday names."""
    days: set[int] = set()
    for part in field.split(","):
        body, _, step = part.partition("/")
        if body == "*":
            first, last = 0, 6
        elif "-" in body:
            low, high = body.split("-", 1)
            first, last = _weekday(low), _weekday(high)
        else:
            first = _weekday(body)
            last = 6 if step else first
        days.update(day % 7 for day in range(first, last + 1, int(step) if step else 1))
    return ",".join(CRON_WEEKDAYS[day] for day in sorted(days))


def cron_trigger(expression: str, timezone: ZoneInfo) -> Any:
    """An APScheduler trigger firing when the 5-field crontab ``expression`` does.

    Raises ValueError, saying what is wrong, for an expression cron would not accept.
    """
    from apscheduler.triggers.combining import OrTrigger
    from apscheduler.triggers.cron import CronTrigger

    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 cron fields, got {len(fields)} in {expression!r}")
    minute, hour, day, month, day_of_week = fields
    weekdays = "*" if day_of_week == "*" else _weekdays(day_of_week)

    def cron(day: str, day_of_week: str) -> CronTrigger:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=day_of_week,
            timezone=timezone,
        )

    if day.startswith("*") or day_of_week.startswith("*"):
        return cron(day, weekdays)
    # cron fires on a day matching either field when both are restricted
    return OrTrigger([cron(day, "*"), cron("*", weekdays)])


def as_of_started_on(day: dt.date) -> dt.date:
    """The as-of date of a run started on ``day`` without one: the day before, which has ended.

    A schedule fires at the start of a period to monitor the one just ended: ``0 2 1 * *``
    runs on 1 December as of 30 November, ``0 2 * * *`` every night as of the day before.

    >>> as_of_started_on(dt.date(2024, 12, 1))
    datetime.date(2024, 11, 30)
    """
    return day - AS_OF_LAG


def fire_dates(trigger: Any, start: dt.datetime, end: dt.datetime) -> list[dt.date]:
    """The dates (in the trigger's time zone) on which ``trigger`` fires in [start, end]."""
    dates: list[dt.date] = []
    fire = trigger.get_next_fire_time(None, start)
    while fire is not None and fire <= end:
        day = fire.date()
        dates.append(day)
        next_day = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=fire.tzinfo)
        fire = trigger.get_next_fire_time(None, next_day)
    return dates


__all__ = [
    "AS_OF_LAG",
    "CRON_WEEKDAYS",
    "as_of_started_on",
    "cron_trigger",
    "fire_dates",
    "time_zone",
]
