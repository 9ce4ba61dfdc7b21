"""A run's process and the garbage collector: what was imported is set aside once.

CPython's cyclic garbage collector walks every container object it tracks on each full
collection, and a run allocates enough (the stored days' cells parsed from JSON, the count
tables, the report) to set off several. Most of what it walks then is what the imports left:
pandas', SQLAlchemy's and riskmon's own modules, classes and functions, about 140,000 objects
that live as long as the process. :func:`set_aside_imports` moves every object alive at that
moment into the collector's permanent generation (``gc.freeze``), once per process, at the
first run: the collections that follow walk only what the runs allocate. Nothing is switched
off; a cycle that becomes garbage after it is collected as before (one that was garbage
already when frozen stays, which is why it is done once, before any run allocated).

It shortens the 10M-loan benchmark's night by about a ninth (benchmarks/incremental.md).
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_set_aside = False


def set_aside_imports() -> bool:
    """Freeze the objects alive now out of the collector's walks, the first time it is called
    in this process (the scheduler's runs come on its threads); True if this call did."""
    global _set_aside
    with _lock:
        if _set_aside:
            return False
        gc.freeze()
        _set_aside = True
        return True
