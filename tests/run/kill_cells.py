"""`riskmon run` as a process of its own that kills itself (SIGKILL) at one step of its daily
cells, for tests/run/test_incremental_kill.py.

Usage: python kill_cells.py STEP -- RISKMON-ARGS. STEP is where the process dies:

- ``read``: the stored cells read and the days to read chosen, before the source is read;
- ``keeping``: the run stored, its new cells written in their transaction (flushed to the
  database), before that transaction commits.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from sqlalchemy.orm import Session

import riskmon.run as run
from riskmon.cli import main


def _dies_after(function: Any) -> Any:
    def dying(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return result

    return dying


def _flushed_then_dies(self: Session, *args: Any, **kwargs: Any) -> None:
    _add_all(self, *args, **kwargs)
    self.flush()  # the rows are in the database's transaction, not committed
    os.kill(os.getpid(), signal.SIGKILL)


_add_all = Session.add_all

if __name__ == "__main__":
    step, separator, *args = sys.argv[1:]
    assert separator == "--", "usage: kill_cells.py STEP -- RISKMON-ARGS"
    if step == "read":
        run.day_plan = _dies_after(run.day_plan)  # type: ignore[attr-defined]
    elif step == "keeping":  # only the cells are added with add_all
        Session.add_all = _flushed_then_dies  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown step {step!r}")
    sys.argv = ["riskmon", *args]
    main()
