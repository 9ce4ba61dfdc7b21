"""``riskmon.collect.readahead``: the items come in order, a helper's error is raised in the
caller, and leaving the loop early stops the helper and closes what it read."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from riskmon.collect.readahead import read_ahead


def _helpers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "riskmon-read-ahead"]


def _items(n: int, closed: list[bool], fail_at: int | None = None) -> Iterator[int]:
    try:
        for i in range(n):
            if i == fail_at:
                raise ConnectionError(f"lost at {i}")
            yield i
    finally:
        closed.append(True)


@pytest.mark.parametrize("depth", [1, 2, 7])
def test_every_item_comes_in_order_and_the_helper_ends(depth: int) -> None:
    closed: list[bool] = []
    assert list(read_ahead(_items(50, closed), depth)) == list(range(50))
    assert closed == [True]
    assert _helpers() == []


def test_an_error_in_the_helper_is_raised_in_the_caller_after_the_items_before_it() -> None:
    closed: list[bool] = []
    got: list[int] = []
    with pytest.raises(ConnectionError, match="lost at 7"):
        got.extend(read_ahead(_items(20, closed, fail_at=7), 2))
    assert got == list(range(7))
    assert closed == [True]
    assert _helpers() == []


def test_leaving_early_stops_the_helper_and_closes_its_items() -> None:
    closed: list[bool] = []
    reading = read_ahead(_items(1_000_000, closed), 2)
    for item in reading:
        if item == 3:
            time.sleep(0.05)  # the helper fills the queue and waits for room
            break
    reading.close()
    assert closed == [True]
    assert _helpers() == []


def _add_up(items: Iterator[int]) -> None:
    for item in items:
        if item == 10:
            raise ValueError("bad row")


def test_an_error_in_the_caller_stops_the_helper() -> None:
    closed: list[bool] = []
    with pytest.raises(ValueError, match="bad row"):
        _add_up(read_ahead(_items(1_000_000, closed), 3))
    assert closed == [True]
    assert _helpers() == []


class _Unclosable:
    """Items whose ``close`` fails, as a result whose connection is gone may."""

    def __init__(self) -> None:
        self.items = iter(range(5))

    def __iter__(self) -> _Unclosable:
        return self

    def __next__(self) -> int:
        return next(self.items)

    def close(self) -> None:
        raise ConnectionError("the server closed the connection")


def test_items_that_fail_to_close_raise_in_the_caller_and_nothing_waits() -> None:
    got: list[int] = []
    with pytest.raises(ConnectionError, match="closed the connection"):
        got.extend(read_ahead(_Unclosable(), 2))
    assert got == list(range(5))
    assert _helpers() == []
