"""The ``riskmon`` command line.

One module per command or command group; the group below finds each through :data:`COMMANDS`
and imports it when it is asked for, and every command module imports the rest of riskmon
(pandas, SQLAlchemy, APScheduler, ...) only when its command runs, so ``riskmon --help``
starts fast.

Domain errors (:class:`~riskmon.errors.RiskmonError`) become one line on stderr and the
error's exit code here, and only here (the codes are listed in :mod:`riskmon.errors` and in
``riskmon --help``); with ``--format json``, a JSON document on stdout as well. Every message
goes through :func:`~riskmon.redact.redact` so secrets never reach a terminal.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any

import click

from riskmon import __version__
from riskmon.cli._app import CONFIG_ENV_VAR, _App, _CliError, asks_for_json, echo_json_error
from riskmon.errors import EXIT_FAILED, RiskmonError, describe_failure
from riskmon.heap import pause_for_imports
from riskmon.redact import RedactingFilter, redact

log = logging.getLogger("riskmon.cli")
#: where the group notes that the command line asked for JSON
_JSON_ERRORS = "riskmon.json_errors"

EXIT_CODES_HELP = """\b
Exit codes:
  0  done; no alert at --fail-on severity
  1  a run raised an alert at --fail-on severity
  2  usage or configuration error; unknown model; no run or baseline for what was asked
  3  a run failed or is in progress elsewhere; a freeze failed; an unexpected error
  4  the metric store or a source could not be used at start (unreachable, not migrated)
  128+N  stopped by signal N (run, backfill: the run in progress is stored as interrupted)
With --format json, every failure also prints {"error": ..., "exit_code": ...} on stdout.
"""

#: every command: its name, and the module and attribute that define it
COMMANDS = {
    "backfill": ("riskmon.cli.runs", "backfill_command"),
    "baseline": ("riskmon.cli.baseline", "baseline"),
    "config": ("riskmon.cli.config", "config_group"),
    "db": ("riskmon.cli.db", "db"),
    "demo": ("riskmon.cli.demo", "demo_command"),
    "export": ("riskmon.cli.export", "export_command"),
    "history": ("riskmon.cli.history", "history_command"),
    "notify": ("riskmon.cli.notify", "notify_command"),
    "report": ("riskmon.cli.report", "report_command"),
    "review": ("riskmon.cli.reviews", "review_command"),
    "reviews": ("riskmon.cli.reviews", "reviews_command"),
    "run": ("riskmon.cli.runs", "run_command"),
    "schedule": ("riskmon.cli.schedule", "schedule_command"),
    "thresholds": ("riskmon.cli.thresholds", "thresholds_command"),
    "verify": ("riskmon.cli.verify", "verify_command"),
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_JSON_ERRORS] = asks_for_json(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        as_json = bool(ctx.meta.get(_JSON_ERRORS))
        try:
            return super().invoke(ctx)
        except RiskmonError as exc:
            error = _CliError(redact(str(exc)), exc.exit_code)
        except click.ClickException as exc:
            if not as_json:
                raise
            echo_json_error(redact(exc.format_message()), exc.exit_code)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # a bug: one line and exit 3, the traceback in the log
            log.debug("unexpected error", exc_info=True)
            message = f"{describe_failure(exc)} (-vv shows where)"
            error = _CliError(redact(message), EXIT_FAILED)
        if as_json:
            echo_json_error(error.format_message(), error.exit_code)
        raise error from None


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


@click.group(
    cls=_Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP
)
@click.version_option(__version__, "--version", prog_name="riskmon")
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help=f"Configuration file. Default: ${CONFIG_ENV_VAR}, else ./riskmon.yaml.",
)
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: int) -> None:
    """riskmon: monitor credit-risk models (KS, AUC, Gini, lift, WOE/IV, PSI/CSI)."""
    _setup_logging(verbose)
    ctx.obj = _App(config_path)


def main() -> None:
    """Entry point of the ``riskmon`` console script."""
    pause_for_imports()  # until the command has imported what it needs (riskmon.heap)
    cli(prog_name="riskmon")


__all__ = ["COMMANDS", "cli", "main"]
