"""``riskmon notify --pending``: send the notifications the outbox still owes.

A run's notifications are queued in the store with the run itself; the process that stored it
sends them right after. One killed or stopped in between, or a channel that was down, leaves
them owed: the model's next run, ``riskmon schedule`` as it starts, and this command send them.
"""

from __future__ import annotations

import click

from riskmon.cli._app import _App, _store
from riskmon.errors import EXIT_FAILED


@click.command("notify")
@click.option(
    "--pending",
    is_flag=True,
    required=True,
    help="Send every notification queued and not sent yet (of runs a stopped process stored, "
    "or to channels that were down).",
)
@click.pass_obj
def notify_command(app: _App, pending: bool) -> None:
    """Send the notifications owed: queued with their runs and not sent yet.

    Each is taken in the store before it is sent, so a scheduler or run doing the same at the
    same time never sends it twice. Exit codes: 0 every one sent (or none owed); 3 one could not
    be sent (it stays owed, and is retried); 4 the store could not be used.
    """
    from riskmon.notify import send_pending

    del pending  # the only mode: required so that the command says what it does
    config = app.config(sources=False)
    with _store(app) as store:
        attempts = send_pending(config, store)
    for attempt in attempts:
        what = f"{attempt.model} as of {attempt.as_of.isoformat()} to {attempt.channel}"
        click.echo(f"sent {what}" if attempt.ok else f"not sent {what}: {attempt.error}")
    failed = sum(not a.ok for a in attempts)
    click.echo(
        f"riskmon notify: {len(attempts) - failed} of {len(attempts)} notifications sent", err=True
    )
    if failed:
        raise SystemExit(EXIT_FAILED)
