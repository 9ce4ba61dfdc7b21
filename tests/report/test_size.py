"""A report of a large model stays small enough to e-mail and archive."""

from __future__ import annotations

from pathlib import Path

from riskmon.config import RiskmonConfig, StoreConfig
from riskmon.report import render_index, render_run_report
from riskmon.store import MetricStore

from .htmltree import parse
from .synthetic import store_history

#: the largest report riskmon may write for 30 characteristics and 24 months of history
MAX_BYTES = 1_000_000


def test_thirty_characteristics_and_two_years_of_runs_stay_under_one_megabyte(
    store: MetricStore, reports_dir: Path
) -> None:
    characteristics = [f"characteristic_{i:02d}" for i in range(30)]
    dates = store_history(store, "large_model", months=24, characteristics=characteristics)
    config = RiskmonConfig(store=StoreConfig(reports_dir=reports_dir))
    path = render_run_report(config, store, "large_model")
    size = path.stat().st_size
    assert size < MAX_BYTES, f"{size:,} bytes"
    page = parse(path.read_text(encoding="utf-8"))
    csi_rows = page.get("section", id="characteristics").get("table").get("tbody")
    assert len(list(csi_rows.iter("tr"))) == 30
    trend = next(
        f
        for f in page.get("section", id="discrimination").iter("figure")
        if f.get("figcaption").text() == "KS over time"
    )
    assert len(list(trend.iter("circle"))) == len(dates) == 24
    assert render_index(config, store).stat().st_size < 50_000
