"""Cron semantics as in crontab: weekday numbers, day-of-month or weekday, one date a day."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from zoneinfo import ZoneInfo

import pytest

from riskmon.cron import cron_trigger, fire_dates

UTC = ZoneInfo("UTC")


def _days(*days: int) -> list[dt.date]:
    return [dt.date(2025, 3, day) for day in days]


def _fires(expression: str, start: dt.date, end: dt.date) -> list[dt.date]:
    trigger = cron_trigger(expression, UTC)
    begin = dt.datetime.combine(start, dt.time(), tzinfo=UTC)
    return fire_dates(trigger, begin, dt.datetime.combine(end, dt.time(23, 59), tzinfo=UTC))


def test_weekday_numbers_follow_crontab_zero_and_seven_are_sunday() -> None:
    march = (dt.date(2025, 3, 1), dt.date(2025, 3, 16))  # 1 March 2025 is a Saturday
    assert _fires("0 2 * * 0", *march) == _days(2, 9, 16)
    assert _fires("0 2 * * 7", *march) == _days(2, 9, 16)
    assert _fires("0 2 * * 1-5", *march) == _days(3, 4, 5, 6, 7, 10, 11, 12, 13, 14)
    assert _fires("0 2 * * */3", *march) == _days(1, 2, 5, 8, 9, 12, 15, 16)  # sat, sun, wed
    assert _fires("0 2 * * sat,SUN", *march) == _days(1, 2, 8, 9, 15, 16)


def test_day_of_month_and_weekday_both_set_fire_on_either_as_cron_does() -> None:
    assert _fires("0 2 1,15 * 1", dt.date(2025, 3, 1), dt.date(2025, 3, 20)) == _days(
        1, 3, 10, 15, 17
    )
    assert _fires("0 2 1 * *", dt.date(2025, 3, 1), dt.date(2025, 4, 30)) == [
        dt.date(2025, 3, 1),
        dt.date(2025, 4, 1),
    ]


def test_a_cron_firing_many_times_a_day_gives_each_date_once() -> None:
    assert _fires("*/5 * * * *", dt.date(2025, 3, 1), dt.date(2025, 3, 3)) == _days(1, 2, 3)


def test_a_bad_weekday_is_rejected() -> None:
    with pytest.raises(ValueError, match="weekday"):
        cron_trigger("0 2 * * 8", UTC)


def test_the_cron_module_imports_nothing_of_riskmon_nor_apscheduler() -> None:
    # the configuration reads every schedule with it: it must stay at the bottom of the package
    probe = (
        "import sys, riskmon.cron\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('riskmon', 'apscheduler'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    assert done.stdout.split() == ["riskmon", "riskmon.cron"]


def test_a_run_started_on_a_day_is_as_of_the_day_before() -> None:
    from riskmon.cron import as_of_started_on

    assert as_of_started_on(dt.date(2024, 12, 1)) == dt.date(2024, 11, 30)
    assert as_of_started_on(dt.date(2024, 3, 1)) == dt.date(2024, 2, 29)  # a leap year
    assert as_of_started_on(dt.date(2025, 1, 1)) == dt.date(2024, 12, 31)
