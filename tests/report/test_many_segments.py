"""A run of 300 segments: the report lists the flagged and the largest 100 of them, counts a
rule's alerts beyond 20 segments in one line, and says what it left out."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

from riskmon.records import Status
from riskmon.report import render_run_report
from riskmon.report.context import ALERTS_PER_RULE, SEGMENT_ROWS
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..figures.books import book_model, fresh_store, report_config, write_loans
from .htmltree import parse

SEGMENTS = 300


def _book(seed: int = 5) -> pd.DataFrame:
    """July 2023 to January 2025, 12,000 loans a month over 300 segments; in January 2025 the
    first five segments' scores jump (their PSI is RED)."""
    rng = np.random.default_rng(seed)
    frames = []
    for start in pd.date_range("2023-07-01", "2025-01-01", freq="MS"):
        n = 12_000
        segment = rng.integers(0, SEGMENTS, n)
        logit = rng.normal(-2.6, 0.9, n)
        if start == pd.Timestamp("2025-01-01"):
            logit[segment < 5] += 2.0
        pd_true = 1 / (1 + np.exp(-logit))
        days = rng.integers(0, start.days_in_month, n)
        frames.append(
            pd.DataFrame(
                {
                    "score_date": (start + pd.to_timedelta(days, unit="D")).date,
                    "pd_score": np.round(pd_true, 6),
                    "default_12m": (rng.random(n) < pd_true).astype(int),
                    "channel": [f"c{s:03d}" for s in segment],
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    return book


def test_a_report_of_300_segments_lists_100_and_counts_the_rest(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, _book())
    store: MetricStore = fresh_store(tmp_path)
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    model = book_model(
        url,
        columns={**columns, "label": "default_12m", "segments": ["channel"]},
        thresholds={"min_segment_loans": 30},  # 40 loans a segment a month
    )
    outcome = run_model(model, dt.date(2025, 1, 31), store=store)
    assert outcome.ok, outcome.error
    red_psi = sorted(
        a.segment for a in outcome.alerts if a.rule == "psi" and a.status == Status.RED
    )
    # the five that jumped, and (40 loans a segment, 300 tests) a few by chance
    assert {f"channel=c{i:03d}" for i in range(5)} <= set(red_psi)
    red_segments = {a.segment for a in outcome.alerts if a.segment and a.status == Status.RED}
    not_judged = [
        a for a in outcome.alerts if a.rule == "ks_band" and a.status == Status.NOT_EVALUABLE
    ]
    assert len(not_judged) > ALERTS_PER_RULE  # the cohort is 40 loans a segment

    path = render_run_report(report_config(store, model, tmp_path), store, "m")
    page = parse(path.read_text(encoding="utf-8"))
    section = page.get("section", id="segments")
    rows = list(section.get("table").get("tbody").iter("tr"))
    assert len(rows) == SEGMENT_ROWS
    # the RED segments first, then the AMBER ones, then the largest
    assert {r.attrs["data-segment"] for r in rows[: len(red_segments)]} == red_segments
    note = section.get("p", class_="note").text()
    assert note.startswith(f"{SEGMENT_ROWS} of {SEGMENTS} segments are listed: the ")
    # the alerts table: every ks_band segment alert beyond 20 counted in one line
    alerts = page.get("section", id="summary").get("table", class_="alerts")
    ks_rows = [r for r in alerts.get("tbody").iter("tr") if "ks_band" in r.text()]
    more = len(not_judged) - ALERTS_PER_RULE
    assert len(ks_rows) == ALERTS_PER_RULE + 1
    assert f"{more:,} more segments NOT_EVALUABLE on this rule" in ks_rows[-1].text()
    assert path.stat().st_size < 400_000
