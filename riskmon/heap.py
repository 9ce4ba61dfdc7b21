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

The same first call fixes the C allocator's thresholds (:func:`steady_allocator`). glibc's
``malloc`` serves a block of 128 KiB or more with its own ``mmap``, given back to the system
when freed, but each time such a block is freed it raises that threshold to the block's size
(up to 32 MiB): after a run's first large array is freed, the count tables, result buffers
and arrays of up to that size come from the heap, whose freed memory stays with the process
wherever a live block sits above it. A run over 5,000 segments then kept about 50 MB it had
freed (benchmarks/messy.md). Fixed at glibc's default, 128 KiB, a large block is always
mapped apart and given back when freed; the heap is trimmed above 128 KiB of free memory.
Other C libraries are left as they are.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading

_lock = threading.Lock()

#: glibc's ``mallopt`` parameters (``malloc.h``) and the value both are fixed at, its default
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_THRESHOLD = 128 * 1024


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
        steady_allocator()
        if _State.paused:
            _State.paused = False
            gc.enable()
        return True


def steady_allocator() -> bool:
    """Fix glibc's ``mmap`` and trim thresholds at 128 KiB, so that freed large blocks go back
    to the system; True if the C library took both (Linux with glibc), False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc's: its own policy stands
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _THRESHOLD)
    )
