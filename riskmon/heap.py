"""A run's process and the garbage collector: what was imported is set aside once.

CPython's cyclic garbage collector walks every container object it tracks on each full
collection, and a run allocates enough (the stored days' cells parsed from JSON, the count
tables, the report) to set off several. Most of what it walks then is what the imports left:
pandas', SQLAlchemy's and riskmon's own modules, classes and functions, about 140,000 objects
that live as long as the process. :func:`set_aside_imports` moves every object alive at that
moment into the collector's permanent generation (``gc.freeze``), once per process, at the
first run: the collections that follow walk only what the runs allocate, and so does the
collection at the interpreter's exit. A cycle that becomes garbage after it is collected as
before (one that was garbage already when frozen stays, which is why it is done once, before
any run allocated).

The ``riskmon`` command goes one step further (:func:`pause_for_imports`, called first by
:func:`riskmon.cli.main`): the collector is paused while the command imports what it needs,
since the some 380 collections those imports set off find next to nothing to free, and
resumes when the imports are set aside, once the command has read its configuration. The
imports' cyclic garbage (about 1,300 objects, a few hundred kilobytes) is then frozen with the
rest rather than collected first, which would cost about 70 ms. A program that calls riskmon's
functions keeps its collector as it set it.

It shortens the 10M-loan benchmark's night by about a ninth (benchmarks/incremental.md), and
a ``riskmon run`` process's fixed cost by about a fifth (benchmarks/startup.md).
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()


class _State:
    """This process's: whether the imports were set aside, whether the collector is paused."""

    set_aside = False
    paused = False


def pause_for_imports() -> None:
    """Pause the collector (if it runs, and the imports were not set aside yet) until
    :func:`set_aside_imports`."""
    with _lock:
        if not _State.set_aside and gc.isenabled():
            gc.disable()
            _State.paused = True


def set_aside_imports() -> bool:
    """Freeze the objects alive now out of the collector's walks, the first time it is called
    in this process (the scheduler's runs come on its threads), and resume the collector if
    :func:`pause_for_imports` paused it; True if this call did."""
    with _lock:
        if _State.set_aside:
            return False
        gc.freeze()
        _State.set_aside = True
        if _State.paused:
            _State.paused = False
            gc.enable()
        return True
