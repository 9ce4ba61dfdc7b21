"""A score day's fingerprint changes with any value of any of its rows, and only that day's; a
table written again with the same rows (in another order) keeps every fingerprint."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from riskmon.collect import Source, fingerprint, required_columns
from riskmon.collect.daycells import DayCells
from riskmon.collect.days import DayPlan
from riskmon.collect.fingerprint import fingerprints, recheck

from .loans import load, loan_frame, model_config


def day_prints(url: str, days: list[dt.date]) -> dict[dt.date, str]:
    """The fingerprints of ``days`` in the loans at ``url``, over the columns the model reads."""
    model = model_config(url)
    with Source(model) as source:
        loans = source.check_columns()
        row_hash = source.profile.row_hash
        assert row_hash is not None
        columns = {c.name for c in required_columns(model)}
        with source.reading() as connection:
            return fingerprints(connection, loans, "score_date", columns, days, row_hash)


def _day_with(frame: pd.DataFrame, ok: Callable[[pd.DataFrame], bool]) -> dt.date:
    for day, rows in frame.groupby("score_date"):
        if ok(rows):
            return day  # type: ignore[no-any-return]
    raise AssertionError("no such day in the frame")


def one_change_each(frame: pd.DataFrame) -> list[tuple[str, dt.date, pd.DataFrame]]:
    """(what, the day changed, the book with it)."""
    out: list[tuple[str, dt.date, pd.DataFrame]] = []
    day = _day_with(frame, lambda r: len(r) >= 2)
    first = frame.index[frame["score_date"] == day][0]
    book = frame.copy()
    # the last digit of a double: 0.3 and 0.30000000000000004 are different scores
    book.loc[first, "pd_score"] = np.nextafter(book.loc[first, "pd_score"], 1.0)
    out.append(("a score's last bit", day, book))
    day = _day_with(frame, lambda r: bool(r["income"].isna().any()))
    book = frame.copy()
    book.loc[book.index[(book["score_date"] == day) & book["income"].isna()][0], "income"] = 7.0
    out.append(("a NULL filled", day, book))
    day = _day_with(frame, lambda r: bool((r["region"] == "N").any()))
    book = frame.copy()
    book.loc[book.index[(book["score_date"] == day) & (book["region"] == "N")][0], "region"] = "S"
    out.append(("a category", day, book))
    day = _day_with(frame, lambda r: {0, 1} <= set(r["bad"].dropna().tolist()))
    book = frame.copy()
    rows = book.index[book["score_date"] == day]
    good = rows[book.loc[rows, "bad"].eq(0).fillna(False).to_numpy()][0]
    bad = rows[book.loc[rows, "bad"].eq(1).fillna(False).to_numpy()][0]
    book.loc[[good, bad], "bad"] = [1, 0]  # each column's values the same, the rows not
    out.append(("two labels exchanged", day, book))
    day = _day_with(frame, lambda r: len(r) >= 1)
    late = frame[frame["score_date"] == day].head(1).assign(loan_id=int(frame["loan_id"].max()) + 1)
    out.append(("a late row", day, pd.concat([frame, late], ignore_index=True)))
    return out


def test_a_day_s_fingerprint_changes_with_any_of_its_values(database: tuple[str, str]) -> None:
    dialect, url = database
    frame = loan_frame(seed=17, n=600)
    days = sorted(set(frame["score_date"]))
    if dialect == "mysql":
        # MariaDB writes a double as text to 15 digits: no exact row hash, the days read again
        model = model_config(url)
        load(url, frame)
        with Source(model) as source:
            assert source.profile.row_hash is None
            stored = {("current", days[0]): DayCells(fingerprint="1:1")}
            plan = DayPlan({"current": [days[0]]}, {}, stored, frozenset(days[:1]))
            with source.reading() as connection:
                same = recheck(
                    connection, source.check_columns(), "score_date", [], plan, source.profile
                )
            assert same.fresh == plan.fresh
        return
    changes_are_seen(url, frame)


@pytest.mark.postgres
@pytest.mark.parametrize("by_value", [True, False], ids=["record", "text"])
def test_postgresql_hashes_a_typed_row_by_value_and_any_other_by_its_text(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, by_value: bool
) -> None:
    """PostgreSQL 14 on hashes the values of a table's typed columns (``hash_record_extended``,
    hashed once more); a row with a column of another type, or a query's untyped columns, is
    hashed as text: both see every change, and the two give different fingerprints."""
    frame = loan_frame(seed=19, n=400)
    load(postgres_url, frame)
    days = sorted(set(frame["score_date"]))
    typed = day_prints(postgres_url, days)
    with Source(model_config(postgres_url)) as source:
        loans = source.check_columns()
        assert all(fingerprint._hashed_by_value(column) for column in loans.c)
    if not by_value:
        monkeypatch.setattr(fingerprint, "_hashed_by_value", lambda column: False)
        assert day_prints(postgres_url, days).keys() == typed.keys()
        assert day_prints(postgres_url, days) != typed
    changes_are_seen(postgres_url, frame)


def changes_are_seen(url: str, frame: pd.DataFrame) -> None:
    """Loaded at ``url``, ``frame``'s fingerprints are the same for the same rows in another
    order, and each of :func:`one_change_each` changes its own day's fingerprint only."""
    days = sorted(set(frame["score_date"]))
    load(url, frame)
    before = day_prints(url, days)
    assert sum(int(p.split(":")[0]) for p in before.values()) == len(frame)
    # no loan on a day: its own fingerprint
    assert day_prints(url, [dt.date(2020, 1, 1)]) == {dt.date(2020, 1, 1): "0:0"}
    load(url, frame.iloc[::-1])  # the same rows written again, in another order
    assert day_prints(url, days) == before
    for what, day, book in one_change_each(frame):
        load(url, book)
        after = day_prints(url, days)
        assert after[day] != before[day], what
        # and not only by a carry: a hash that is a sum of its values' hashes keeps the day's
        # sum modulo 2^64 when two rows exchange a value
        assert _modulo(after[day]) != _modulo(before[day]), what
        assert {d: p for d, p in after.items() if d != day} == {
            d: p for d, p in before.items() if d != day
        }, what


def _modulo(print_: str) -> int:
    return int(print_.split(":")[1]) % 2**64


@pytest.mark.postgres
def test_a_postgresql_before_11_has_no_row_hash_and_reads_the_days_again(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hashtextextended`` came with PostgreSQL 11: an older server's days are read again."""
    frame = loan_frame(seed=18, n=50)
    load(postgres_url, frame)
    day = sorted(set(frame["score_date"]))[0]
    plan = DayPlan(
        {"current": [day]}, {}, {("current", day): DayCells(fingerprint="1:1")}, frozenset([day])
    )
    with Source(model_config(postgres_url)) as source:
        loans = source.check_columns()
        with source.reading() as connection:
            monkeypatch.setattr(connection.dialect, "server_version_info", (10, 23))
            same = recheck(connection, loans, "score_date", ["pd_score"], plan, source.profile)
    assert same is plan


def test_unchanged_days_are_kept_and_changed_days_read() -> None:
    """The plan after the fingerprints: a rechecked day keeps its cells where its fingerprint
    is the stored one; a day with another fingerprint, or none stored, is read."""
    days = [dt.date(2025, 3, d) for d in (1, 2, 3, 4)]
    same, other = DayCells(fingerprint="3:99"), DayCells(fingerprint="3:98")
    plan = DayPlan(
        {"current": days},
        {},
        {("current", days[0]): same, ("current", days[1]): other},
        frozenset(days),
    )
    after = plan.unchanged({days[0]: "3:99", days[1]: "3:99", days[2]: "1:5", days[3]: "0:0"})
    assert after.fresh == {"current": days[1:]}
    assert after.stored == {("current", days[0]): same}
    assert after.confirmed == {("current", days[0]): same}
    assert after.prints[days[2]] == "1:5"
