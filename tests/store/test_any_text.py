"""Segments, variables' names, labels and messages of any length and content are stored, read
back as they were written and found by their text, on every store backend; the key columns stay
bounded, and texts that would collide in a naive key or escape do not."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, MetaData, Table, insert, select, text

from riskmon.records import AlertRecord, BinRecord, FigureRecord, RunCounts, Status
from riskmon.store import MetricStore
from riskmon.store import models as m
from riskmon.store.migrate import check_models, downgrade, upgrade
from riskmon.store.records import BaselineBinRecord, BaselineVariableRecord

AS_OF = dt.date(2025, 3, 31)
COUNTS = RunCounts(n_current=10, n_matured=10, n_unmatured=0)
CLAIM = {"score_direction": "higher_is_riskier", "config_hash": "c"}
PREFIX = "p" * 190
#: texts a naive scheme would store as one: a NUL and its escape's own characters, two long
#: texts sharing their first 190 characters, a text written like a shortened key, and the mark
#: that starts an escaped text; and keys that fill a PostgreSQL unique index's entry most
TEXTS = (
    "a\x00b",
    "a\\x00b",
    "a\\\\x00b",
    PREFIX + "-one" * 10,
    PREFIX + "-two" * 10,
    "x" * 5000,
    "short" + m.KEY_MARK + "0" * m.KEY_DIGEST_CHARS,
    m.ESCAPED + "a\\x00b",
    "<script>\u202e\U0001f600",
    "\U0001f600" * m.KEY_LENGTH,  # the longest key, in four-byte characters: 800 bytes
)


@given(st.text())
def test_every_text_is_stored_without_a_nul_and_read_back_as_it_was(text: str) -> None:
    stored = m.stored_text(text)
    assert "\x00" not in stored
    assert m.read_text(stored) == text
    assert len(m.key_of(text)) <= m.KEY_LENGTH


def test_the_texts_have_distinct_bounded_keys() -> None:
    keys = [m.key_of(t) for t in TEXTS]
    assert len(set(keys)) == len(TEXTS)
    assert all(len(k) <= m.KEY_LENGTH for k in keys)
    assert m.key_of("channel=web") == "channel=web"  # an ordinary text is its own key


def _figures() -> list[FigureRecord]:
    return [
        FigureRecord("psi", 0.1, "current", variable=t, segment=s, reason=None)
        for t in TEXTS
        for s in ("", f"channel={t}")
    ] + [FigureRecord("n_rows", None, "current", reason=f"level {TEXTS[0]!r} and {TEXTS[-1]}")]


def test_a_run_stores_and_reads_back_any_text(store: MetricStore) -> None:
    run_id = store.claim_run("m", AS_OF, **CLAIM)
    bins = [
        BinRecord(t, "current", 0, label=f"{{{t}}}", n_total=1, total=1.0, segment=f"s={t}")
        for t in TEXTS
    ]
    alerts = [
        AlertRecord("csi", Status.RED, 0.3, {}, message=f"{t} moved", variable=t, segment=t)
        for t in TEXTS
    ]
    store.complete_run(run_id, counts=COUNTS, figures=_figures(), bins=bins, alerts=alerts)
    assert store.figures(run_id) == _figures()
    assert store.bins(run_id) == bins
    assert [(a.variable, a.segment, a.message) for a in store.alerts(run_id)] == [
        (a.variable, a.segment, a.message) for a in alerts
    ]
    for value in TEXTS:
        assert [b.variable for b in store.bins(run_id, segment=f"s={value}")] == [value]
        found = store.figures(run_id, segment=f"channel={value}")
        assert [f.variable for f in found] == [value]
        history = store.history("m", "psi", variable=value, population="current")
        assert [p.run_id for p in history] == [run_id]
    # every variable's points in one reading, each under its whole text
    by_variable = store.history_by_variable("m", "psi", population="current")
    assert by_variable == {
        t: store.history("m", "psi", variable=t, population="current") for t in TEXTS
    }
    assert store.history_by_variable("m", "psi", population="current", until=AS_OF) == by_variable
    before = AS_OF - dt.timedelta(days=1)
    assert store.history_by_variable("m", "psi", population="current", until=before) == {}
    keys = store.figure_keys("m")
    assert {("psi", "current", t, "") for t in TEXTS} <= keys
    with store.engine.connect() as connection:
        stored = connection.execute(select(m.Figure.variable, m.Figure.segment)).all()
    assert max(len(text) for row in stored for text in row) <= m.KEY_LENGTH


def test_a_baseline_stores_and_reads_back_any_text(store: MetricStore) -> None:
    variables = [
        BaselineVariableRecord(
            t,
            "categorical",
            {"levels": [t]},
            bins=(BaselineBinRecord(0, t, 1, 1.0, segment=f"s={t}"),),
        )
        for t in TEXTS
    ]
    figures = [FigureRecord("iv", 0.2, "baseline", variable=t, segment=t) for t in TEXTS]
    saved = store.save_baseline(
        "m",
        score_direction="higher_is_riskier",
        window=(dt.date(2024, 1, 1), dt.date(2024, 3, 31)),
        config_hash="c",
        n_rows=1,
        n_bads=0,
        variables=variables,
        figures=figures,
    )
    assert list(saved.variables) == list(TEXTS)
    assert tuple(saved.variables.values()) == tuple(variables)
    assert saved.figures == tuple(figures)
    for value in TEXTS:
        assert saved.figure("iv", value, value) is not None


def _texts_a_store_held(dialect: str) -> list[str]:
    """Segments a store at revision 0005 could hold: on SQLite, which never enforced the 200
    characters, longer ones and NULs too."""
    held = ["channel=web", "looks" + m.KEY_MARK + "f" * m.KEY_DIGEST_CHARS, "é" * 200]
    return held + (["x" * 300, "a\x00b"] if dialect == "sqlite" else [])


def _hold_a_baseline(engine: Engine, segments: list[str]) -> None:
    """A baseline of model ``m`` (id 1) with one variable, ``v``, and a bin in each segment,
    written with the tables as they are (before 0006)."""
    tables = MetaData()
    baselines, variables, bins = (
        Table(name, tables, autoload_with=engine)
        for name in ("baselines", "baseline_variables", "baseline_bins")
    )
    day = dt.date(2024, 1, 1)
    with engine.begin() as connection:
        baseline_id = connection.execute(
            insert(baselines).values(
                model_id=1,
                version=1,
                window_start=day,
                window_end=day,
                frozen_at=m.utcnow(),
                config_hash="c",
                n_rows=1,
                riskmon_version="0",
            )
        ).inserted_primary_key[0]
        variable_id = connection.execute(
            insert(variables).values(
                baseline_id=baseline_id, variable="v", kind="numeric", binning={}, params={}
            )
        ).inserted_primary_key[0]
        connection.execute(
            insert(bins),
            [
                {
                    "variable_id": variable_id,
                    "segment": s,
                    "bin_index": 0,
                    "label": "[0, 1)",
                    "n_total": 1,
                    "total": 1.0,
                }
                for s in segments
            ],
        )


def test_migration_0006_rekeys_the_rows_a_store_holds_and_runs_again(engine: Engine) -> None:
    upgrade(engine, "0005")
    store = MetricStore(engine)
    run_id = store.claim_run("m", AS_OF, **CLAIM)
    held = _texts_a_store_held(engine.dialect.name)
    figures = Table("figures", MetaData(), autoload_with=engine)
    rows = [
        {"run_id": run_id, "name": "psi", "variable": "", "segment": s, "population": "current"}
        for s in held
    ]
    with engine.begin() as connection:
        connection.execute(insert(figures), [r | {"value": 0.1, "params": {}} for r in rows])
    _hold_a_baseline(engine, held)
    for _ in range(2):  # an upgrade that stopped half way is run again from the start
        upgrade(engine)
        check_models(engine)
        baseline = store.latest_baseline("m")
        assert baseline is not None
        # the bins of a baseline's variables are kept
        assert sorted(b.segment for b in baseline.variables["v"].bins) == sorted(held)
        assert [f.segment for f in store.figures(run_id)] == held
        for segment in held:
            assert [f.segment for f in store.figures(run_id, segment=segment)] == [segment]
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '0005'"))
    upgrade(engine)
    bins = [BinRecord("v", "current", 0, label="L" * 5000, n_total=1, total=1.0)]
    later = store.claim_run("m", AS_OF + dt.timedelta(days=1), **CLAIM)
    store.complete_run(later, counts=COUNTS, figures=_figures(), bins=bins)
    downgrade(engine, "0005")  # the texts that fit in 200 characters back in place
    with engine.connect() as connection:
        segments = set(connection.execute(select(figures.c.segment)).scalars())
    assert {"", "channel=web", held[1], held[2]} <= segments
    upgrade(engine)
    check_models(engine)
