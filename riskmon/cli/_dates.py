"""The date options of the commands (``--as-of``, ``--from``, ``--to``): one type, one range.

A date is refused as a usage error (exit 2) naming the option and the value, before anything
is read or stored, when it is before :data:`EARLIEST_DATE` or more than
``scheduler.future_slack_days`` after today (in ``scheduler.timezone``): such a date is a
typing mistake (``9999-12-31``), and its windows may not even be dates. Cheap to import, as
every command module must be (click and the standard library).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from riskmon.config import RiskmonConfig

    _DateParam = click.ParamType[dt.date, Any]
else:  # generic for type checkers only (click 8.2 on)
    _DateParam = click.ParamType

#: the earliest date a command takes (no loan book goes back further)
EARLIEST_DATE = dt.date(1900, 1, 1)


class DateType(_DateParam):
    """A ``YYYY-MM-DD`` date from :data:`EARLIEST_DATE` on, as a :class:`datetime.date`.

    The latest date depends on the configuration: :func:`check_not_future` checks it once the
    configuration is read.
    """

    name = "date"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "YYYY-MM-DD"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> dt.date:
        if isinstance(value, dt.date):
            return value
        text = str(value)
        try:
            day = dt.datetime.strptime(text, "%Y-%m-%d").date()
        except ValueError:
            self.fail(f"expected a date YYYY-MM-DD, got {text!r}", param, ctx)
        if day < EARLIEST_DATE:
            self.fail(f"expected a date from {EARLIEST_DATE} on, got {text!r}", param, ctx)
        return day


DATE = DateType()


def latest_date(config: RiskmonConfig) -> dt.date:
    """The latest date the commands take: today in ``scheduler.timezone`` plus
    ``scheduler.future_slack_days``."""
    from riskmon.cron import time_zone

    scheduler = config.scheduler
    today = dt.datetime.now(time_zone(scheduler.timezone)).date()
    return today + dt.timedelta(days=scheduler.future_slack_days)


def check_not_future(config: RiskmonConfig, **dates: dt.date | None) -> None:
    """Refuse (a usage error naming the option) a date after :func:`latest_date`.

    ``dates`` maps each option's parameter name (``as_of``, ``start``...) to its value; the
    option is named as the command line spells it.
    """
    ctx = click.get_current_context(silent=True)
    latest = latest_date(config)
    for name, day in dates.items():
        if day is None or day <= latest:
            continue
        option = _option_name(ctx, name)
        raise click.BadParameter(
            f"expected a date no later than {latest} (today in {config.scheduler.timezone} "
            f"plus scheduler.future_slack_days, {config.scheduler.future_slack_days}), got "
            f"{day.isoformat()!r}",
            ctx=ctx,
            param_hint=f"'{option}'",
        )


def _option_name(ctx: click.Context | None, name: str) -> str:
    if ctx is not None:
        for param in ctx.command.params:
            if param.name == name and param.opts:
                return max(param.opts, key=len)
    return f"--{name.replace('_', '-')}"
