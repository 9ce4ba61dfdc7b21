"""Any text in the loans reaches the store and the report safely: a segment column and a
categorical characteristic whose values are 5,000 characters long, hold a NUL, a right-to-left
override and other control characters, emoji and other astral characters, quotes and a
``<script>`` tag, and a characteristic whose name is as hostile — on a SQLite and on a
PostgreSQL metric store (the loans on SQLite both times).

The run succeeds; every figure, bin, alert and baseline bin is stored under its whole text and
read back as it was (NULs and all), and found again by it; the report shows every control and
bidirectional character escaped (``\\x00``, ``\\u202e``) and no markup of the data's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from riskmon.collect import STRATEGIES, Strategy
from riskmon.config import ModelConfig, parse_config
from riskmon.records import ALL, CURRENT
from riskmon.run import run_models
from riskmon.store import MetricStore
from riskmon.store.migrate import upgrade

from ..collect.loans import load
from ..figures.books import report_config
from ..report.htmltree import parse
from .legal_data import AS_OF, Features, book, model

#: a value of 5,000 characters, ASCII and CJK, that no database compresses into an index entry
LONG = "".join(chr(0x4E00 + (i * 7919) % 20000) if i % 3 else "x" for i in range(5000))
#: the segment column's and the characteristic's values
HOSTILE = (
    LONG,
    "nul\x00byte",
    "abc\u202edef",
    "ctl\x01\x1b[31m\x7f\x85\x9b",
    "emoji \U0001f600 \U0001d518\U0001d52b\U0001d526",
    '<script>alert("x")</script> \'q\' & "dq"',
)
#: the categorical characteristic's name (its column is ``region``): 300 characters and more
VARIABLE = "r\u00e9gion \u202e<script>\x00" + "\U0001f600" * 300
#: what the report must never carry as is: control characters but tab, newline and carriage
#: return, and the bidirectional marks, embeddings, overrides and isolates
RAW_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _hostile_model(loans_url: str) -> ModelConfig:
    document = model(loans_url, Features(segments=True, categorical=True)).model_dump(
        exclude_defaults=True
    )
    document["characteristics"] = [
        {"name": "income", "kind": "numeric"},
        {"name": VARIABLE, "kind": "categorical", "column": "region"},
    ]
    return parse_config({"models": [document]}, source="test", env={}).models[0]


def _hostile_run(folder: Path, store: MetricStore, strategy: Strategy = "auto") -> int:
    """Load the hostile book, run its model on ``store`` (collecting with ``strategy``) and
    return the run's id."""
    loans_url = f"sqlite:///{folder / 'loans.db'}"
    frame = book(n=300)
    frame["channel"] = [HOSTILE[i % len(HOSTILE)] for i in range(len(frame))]
    frame["region"] = [HOSTILE[(i // 2) % len(HOSTILE)] for i in range(len(frame))]
    load(loans_url, frame)
    upgrade(store.engine)
    config = report_config(store, _hostile_model(loans_url), folder)
    [outcome] = run_models(config, [], AS_OF, store=store, strategy=strategy, notify=False)
    assert outcome.status == "succeeded", outcome.error
    assert outcome.report_error is None, outcome.report_error
    assert outcome.run_id is not None
    _check_page(Path(str(outcome.report_path)))
    return outcome.run_id


def _check_stored(store: MetricStore, run_id: int) -> None:
    """Every segment, level and the characteristic's name read back as they were, and are
    found by their text."""
    segments = {f"channel={v}" for v in HOSTILE}
    figures = store.figures(run_id)
    assert {f.segment for f in figures} == {ALL, *segments}
    assert VARIABLE in {f.variable for f in figures}
    for segment in segments:
        found = store.figures(run_id, segment=segment)
        assert found, f"no figure of segment {segment[:30]!r}"
        assert {f.segment for f in found} == {segment}
        assert {b.segment for b in store.bins(run_id, segment=segment)} == {segment}
        history = store.history("legal", "n_rows", segment=segment, population=CURRENT)
        assert [p.run_id for p in history] == [run_id]
    history = store.history("legal", "csi", variable=VARIABLE, population=CURRENT)
    assert [p.run_id for p in history] == [run_id]
    labels = " ".join(b.label for b in store.bins(run_id, segment=ALL) if b.variable == VARIABLE)
    for value in HOSTILE:
        assert value in labels, f"level {value[:20]!r} not in the bins' labels"
    alerts = store.alerts(run_id)
    assert VARIABLE in {a.variable for a in alerts}
    assert segments <= {a.segment for a in alerts}
    baseline = store.latest_baseline("legal")
    assert baseline is not None
    assert VARIABLE in baseline.variables
    assert segments <= {b.segment for b in baseline.variables[VARIABLE].bins}
    assert segments <= {f.segment for f in baseline.figures}
    assert ("n_rows", CURRENT, "", f"channel={LONG}") in store.figure_keys("legal")


def _check_page(path: Path) -> None:
    """No raw control or bidi character, no markup of the data's; each shown escaped."""
    html = path.read_text(encoding="utf-8")
    hidden = sorted({f"U+{ord(c):04X}" for c in RAW_HIDDEN.findall(html)})
    assert not hidden, f"raw characters in {path.name}: {hidden}"
    assert "<script" not in html.lower()
    page = parse(html)
    assert not list(page.iter("script"))
    text = page.text()
    for escape in ("abc\\u202edef", "nul\\x00byte", "ctl\\x01\\x1b[31m\\x7f\\x85\\x9b"):
        assert escape in text, escape
    assert '<script>alert("x")</script>' in text  # shown as text, escaped in the HTML
    assert "\U0001f600" in text
    assert LONG in text


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "grouping_sets"])
def test_hostile_text_is_stored_and_shown_safely_on_sqlite(
    tmp_path: Path, strategy: Strategy
) -> None:
    """Every collect strategy SQLite runs reads the hostile values as they are."""
    store = MetricStore.open(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        run_id = _hostile_run(tmp_path, store, strategy)
        _check_stored(store, run_id)
    finally:
        store.engine.dispose()


@pytest.mark.postgres
def test_hostile_text_is_stored_and_shown_safely_on_postgres(
    tmp_path: Path, postgres_url: str
) -> None:
    store = MetricStore.open(postgres_url)
    try:
        run_id = _hostile_run(tmp_path, store)
        _check_stored(store, run_id)
    finally:
        store.engine.dispose()
