"""`riskmon schedule` as a process of its own, for the signal tests.

Usage: python riskmon_schedule.py CONFIG. The command is mounted on a bare click group with the
CLI's application object, as the `riskmon` group does.
"""

from __future__ import annotations

import sys

import click

from riskmon.cli import _setup_logging
from riskmon.cli._app import _App
from riskmon.cli.schedule import schedule_command

if __name__ == "__main__":
    _setup_logging(1)
    click.Group(commands=[schedule_command]).main(
        ["schedule"], prog_name="riskmon", obj=_App(sys.argv[1])
    )
