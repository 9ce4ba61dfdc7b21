"""Property: the vintage × MOB ``GROUP BY`` gives, on every database, the curves pandas counts
on the loans themselves; it runs in the collect pass's read transaction."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import event

from riskmon.collect import Source, VintageRequest, collect
from riskmon.collect.request import PdSource
from riskmon.metrics import VintageTable
from riskmon.plan import DateWindow
from riskmon.records import ALL

from .loans import load, loan_frame, model_config
from .test_collect import WEIGHT_RTOL, request

WINDOW = DateWindow(dt.date(2024, 12, 1), dt.date(2025, 4, 15))
EVENTS = {"default": "default_date", "dpd30": "dpd30_date"}
MAX_MOB = 3


def _with_events(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Default dates for about a fifth of the loans (some before the score date), 30+ DPD
    dates for a third, the others NULL."""
    rng = np.random.default_rng(seed)
    n = len(frame)
    scored = pd.to_datetime(frame["score_date"])
    for column, share in (("default_date", 0.2), ("dpd30_date", 0.35)):
        days = pd.to_timedelta(rng.integers(-20, 200, n), unit="D")
        when = (scored + days).dt.date
        frame[column] = np.where(rng.random(n) < share, when.astype(object), None)
    return frame


def _month(day: pd.Series) -> pd.Series:
    stamp = pd.to_datetime(day)
    return stamp.dt.year * 12 + stamp.dt.month - 1


def _expected(frame: pd.DataFrame, known_by: dt.date, weighted: bool) -> dict[str, VintageTable]:
    rows = frame[frame["score_date"].map(WINDOW.__contains__)].copy()
    first = WINDOW.start.year * 12 + WINDOW.start.month - 1
    count = WINDOW.end.year * 12 + WINDOW.end.month - 1 - first + 1
    rows["v"] = _month(rows["score_date"]) - first
    rows["w"] = rows["exposure"] if weighted else 1.0
    for name, column in EVENTS.items():
        happened = rows[column].notna() & rows[column].map(
            lambda d: d is not None and d <= known_by
        )
        mob = (_month(rows[column].where(happened)) - _month(rows["score_date"])).clip(lower=0)
        rows[f"mob_{name}"] = mob.where(happened & (mob <= MAX_MOB))
    parts = [(ALL, rows)]
    for value, part in rows.groupby(rows["channel"].fillna("\0")):
        parts.append(("channel IS NULL" if value == "\0" else f"channel={value}", part))
    out = {}
    for segment, part in parts:
        by = part.groupby("v")
        sums = {
            "n": by.size(),
            "w": by["w"].sum(),
            "p": by["pd_score"].sum(),
            "p2": by["pd_score"].apply(lambda s: (s**2).sum()),
            "labeled": by["bad"].count(),
            "bads": by["bad"].sum(),
        }
        arrays = {k: s.reindex(range(count), fill_value=0).to_numpy(float) for k, s in sums.items()}
        events, weights = {}, {}
        for name in EVENTS:
            counts, summed = np.zeros((count, MAX_MOB + 1)), np.zeros((count, MAX_MOB + 1))
            done = part[part[f"mob_{name}"].notna()]
            np.add.at(counts, (done["v"], done[f"mob_{name}"].astype(int)), 1.0)
            np.add.at(summed, (done["v"], done[f"mob_{name}"].astype(int)), done["w"].to_numpy())
            events[name], weights[name] = counts, summed
        labels = tuple(f"{(first + i) // 12:04d}-{(first + i) % 12 + 1:02d}" for i in range(count))
        out[segment] = VintageTable(
            labels, **arrays, events=events, event_weights=weights, max_mob=MAX_MOB
        )
    return out


@settings(
    max_examples=6,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(20, 800),
    weighted=st.booleans(),
    known=st.integers(0, 200),
)
def test_pushdown_equals_pandas_in_the_collects_transaction(
    database: tuple[str, str], seed: int, n: int, weighted: bool, known: int
) -> None:
    dialect, url = database
    frame = _with_events(loan_frame(seed=seed, n=n, weighted=weighted), seed)
    load(url, frame)
    known_by = WINDOW.start + dt.timedelta(days=known)
    req = dataclasses.replace(request(weighted=weighted), pd=PdSource("pd_score"))
    vintages = VintageRequest(req, WINDOW, known_by, EVENTS, MAX_MOB)
    expected = _expected(frame, known_by, weighted)
    statements: list[tuple[int, str]] = []
    with Source(model_config(url, weighted=weighted)) as source:

        def seen(conn: object, cursor: object, text: str, *args: object) -> None:
            statements.append((id(conn), text))

        event.listen(source.engine, "before_cursor_execute", seen)
        try:
            collected = collect(source, req, vintages=vintages)
        finally:  # the engine is kept for the source's next reading
            event.remove(source.engine, "before_cursor_execute", seen)
    assert set(collected.vintages) == set(expected)
    for key, table in expected.items():
        rtol = max(WEIGHT_RTOL.get(dialect, 1e-12), 1e-9)
        assert collected.vintages[key].equals(table, rtol=rtol), key
    # one statement, on the connection (so in the read transaction) of the collect pass's
    # other statements: the exclusion counts, read after it
    vintage = [conn for conn, text in statements if "vintage" in text and "GROUP BY" in text]
    assert len(vintage) == 1
    assert len({conn for conn, _ in statements[-3:]} | {vintage[0]}) == 1
