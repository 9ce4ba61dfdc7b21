"""Reading a statement's rows while the rows before them are added up (:func:`read_ahead`).

A collect pass on a database server spends most of its time waiting for the server, and the
rest adding the rows it fetched into its aggregate, during which the server waits for it. With
:func:`read_ahead` a helper thread runs the statements and fetches their rows, at most a few
batches ahead, while the calling thread adds up those it has: the server executes the next
statement while Python handles the last one's rows. The connection is used by the helper
alone until the iteration ends; an error raised there (a timeout, a lost connection) is raised
again in the calling thread, as it would have been without the helper.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable, Iterator, Sequence
from queue import Empty, Full, Queue
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection, Executable

T = TypeVar("T")

#: rows fetched from a statement's result at a time: one driver call a batch (psycopg's
#: ``fetchone`` cost about 5 us a row, a third of a nightly run's Python time)
FETCH_ROWS = 10_000
#: batches the helper thread fetches ahead of the rows being added up
READ_AHEAD_BATCHES = 4

#: how long the helper waits for room in the queue before it looks whether it should stop
_POLL_SECONDS = 0.1


class _Statement(Protocol):
    @property
    def select(self) -> Executable: ...


S = TypeVar("S", bound=_Statement)


def statement_batches(
    connection: Connection, statements: Iterable[S], *, ahead: bool = False
) -> Generator[tuple[int, S, Sequence[Any]], None, None]:
    """Each statement's number and itself, first with no rows, then with each batch of its
    rows (never all of them at once); with ``ahead``, read by a helper thread up to
    :data:`READ_AHEAD_BATCHES` batches ahead of the caller (:func:`read_ahead`)."""

    def batches() -> Generator[tuple[int, S, Sequence[Any]], None, None]:
        for number, statement in enumerate(statements):
            yield number, statement, ()
            result = connection.execute(statement.select)
            for batch in result.partitions(FETCH_ROWS):
                yield number, statement, batch

    return read_ahead(batches(), READ_AHEAD_BATCHES) if ahead else batches()


class _End:
    """The last item the helper puts: the items ran out, or ``error`` was raised."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def read_ahead(items: Iterator[T], depth: int) -> Generator[T, None, None]:
    """The items of ``items``, produced by a helper thread up to ``depth`` items ahead of the
    caller. Leaving the loop early (a ``break``, an error in the caller) stops the helper once
    its current item is made, and closes ``items`` there; the call returns after the helper
    has stopped, so that the connection it used is free again."""
    queue: Queue[T | _End] = Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: T | _End) -> bool:
        while not stop.is_set():
            try:
                queue.put(item, timeout=_POLL_SECONDS)
            except Full:
                continue
            return True
        return False

    def produce() -> None:
        error: BaseException | None = None
        try:
            for item in items:
                if not put(item):
                    break
        except BaseException as raised:  # handed to the caller, who raises it
            error = raised
        finally:
            try:
                close = getattr(items, "close", None)
                if close is not None:
                    close()
            except BaseException as raised:  # a result that fails to close: raised too
                error = error or raised
        put(_End(error))  # always, so that the caller never waits for an item in vain

    helper = threading.Thread(target=produce, name="riskmon-read-ahead", daemon=True)
    helper.start()
    try:
        while True:
            try:
                item = queue.get(timeout=_POLL_SECONDS)
            except Empty:
                if helper.is_alive() or not queue.empty():
                    continue
                raise RuntimeError("the read-ahead thread ended without a result") from None
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            yield item
    finally:
        stop.set()
        while True:  # let a helper blocked on a full queue see the stop
            try:
                queue.get_nowait()
            except Empty:
                break
        helper.join()
