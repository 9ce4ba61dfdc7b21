"""A process that runs ``riskmon db upgrade`` on fresh stores, killing it with SIGKILL right after
its N-th SQL statement, for N = 1, 2, ... until an upgrade finishes (for the migration tests).

Usage: python killed_upgrade.py RESULTS URL [--writes-only]. Store N is a file beside URL's
(``store-N.db``) on SQLite, a schema ``killed_N`` of URL's database on PostgreSQL (created here,
empty). Each upgrade runs in a child forked from this process, which has imported riskmon
already, so that a kill costs milliseconds: the child counts the statements it executes (a
SQLAlchemy ``after_cursor_execute`` event) and kills itself after the N-th.

``--writes-only`` counts only the statements that write (BEGIN, DDL, the version table's INSERT
and UPDATE): a kill right after a read (``SELECT``, a ``PRAGMA`` reading the schema) leaves the
database as the kill right after the write before it does, so skipping them tests the same
states in about a third of the kills. RESULTS is written as JSON: one item per N, with the
store's URL, whether its upgrade was killed, and the statement it was killed after.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

import alembic.command  # noqa: F401 - imported before forking, as the children use it
from sqlalchemy import Engine, create_engine, event, pool, text
from sqlalchemy.engine import make_url

import riskmon.cli.db  # noqa: F401 - the same
from riskmon.cli import cli
from riskmon.store.migrate import known_revisions

#: more statements than any upgrade of the store executes: a bound on the loop
MAX_STATEMENTS = 2000
#: upgrades run at once
CHILDREN = 4
#: how the statements that only read begin
READS = ("SELECT", "PRAGMA")


def store_url(base: str, n: int) -> str:
    """The URL of store N."""
    url = make_url(base)
    if url.get_backend_name() == "sqlite":
        assert url.database
        return url.set(
            database=str(Path(url.database).with_name(f"store-{n}.db"))
        ).render_as_string(hide_password=False)
    return url.update_query_dict({"options": f"-csearch_path=killed_{n}"}).render_as_string(
        hide_password=False
    )


def _prepare(base: str, n: int) -> None:
    if make_url(base).get_backend_name() == "sqlite":
        return
    admin = create_engine(base, poolclass=pool.NullPool, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE SCHEMA killed_{n}"))
    admin.dispose()


def _upgrade_killed(url: str, kill_at: int, record: Path, *, reads: bool) -> None:
    """The child: ``riskmon db upgrade``, killed right after its ``kill_at``-th statement
    (reads counted or not)."""
    executed = 0

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        nonlocal executed
        if not reads and statement.lstrip().upper().startswith(READS):
            return
        executed += 1
        if executed == kill_at:
            record.write_text(statement)
            os.kill(os.getpid(), signal.SIGKILL)

    event.listen(Engine, "after_cursor_execute", count)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        try:
            cli.main(["db", "upgrade", "--url", url], prog_name="riskmon", standalone_mode=False)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
    os._exit(0)


def _start(base: str, n: int, results_path: Path, *, reads: bool) -> tuple[int, str, Path]:
    url = store_url(base, n)
    _prepare(base, n)
    record = results_path.with_name(f"statement-{n}.sql")
    pid = os.fork()
    if pid == 0:
        _upgrade_killed(url, n, record, reads=reads)
    return pid, url, record


def _outcome(n: int, pid: int, url: str, record: Path) -> dict[str, Any]:
    _, status = os.waitpid(pid, 0)
    return {
        "n": n,
        "url": url,
        "killed": os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL,
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "statement": record.read_text() if record.exists() else None,
    }


def main(argv: list[str]) -> None:
    results_path, base = Path(argv[1]), argv[2]
    reads = "--writes-only" not in argv[3:]
    known_revisions()  # the migration scripts read once, before forking
    results: list[dict[str, Any]] = []
    # CHILDREN upgrades at once, each on its own store: most of an upgrade's time is spent
    # waiting for the disk or the server. The first one that finishes unkilled ends the list.
    for first in range(1, MAX_STATEMENTS + 1, CHILDREN):
        started = [
            (n, *_start(base, n, results_path, reads=reads)) for n in range(first, first + CHILDREN)
        ]
        for n, pid, url, record in started:
            results.append(_outcome(n, pid, url, record))
        finished = [i for i, outcome in enumerate(results) if not outcome["killed"]]
        if finished:
            del results[finished[0] + 1 :]
            break
    results_path.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv)
