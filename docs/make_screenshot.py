"""Make docs/images/report.png, the picture of a model run report in the README.

Generates 18 months of scored loans for a PD model whose ranking power fades and whose
population drifts, runs riskmon on each month end, renders the last run's report and takes a
screenshot of its top in headless Chromium. Nothing is downloaded; rerun it with

    .venv/bin/python docs/make_screenshot.py [--chromium /usr/bin/chromium] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import create_engine

from riskmon.config import RiskmonConfig, parse_config
from riskmon.report import render_index, render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore
from riskmon.store.engine import store_engine
from riskmon.store.migrate import upgrade

OUTPUT = Path(__file__).resolve().parent / "images" / "report.png"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FIRST_DAY, LAST_DAY = dt.date(2024, 1, 1), dt.date(2025, 6, 30)
LOANS_PER_DAY = 60
#: the part of the report in the picture (CSS pixels)
VIEW_WIDTH, VIEW_HEIGHT = 1100, 1500


def _month_ends(first: dt.date, last: dt.date) -> list[dt.date]:
    ends = pd.date_range(first, last, freq="ME")
    return [d.date() for d in ends]


def loans(seed: int = 7) -> pd.DataFrame:
    """Scored loans: the score's noise grows month by month, the region mix drifts."""
    rng = np.random.default_rng(seed)
    days = (LAST_DAY - FIRST_DAY).days + 1
    day = np.repeat(np.arange(days), LOANS_PER_DAY)
    n = day.size
    age = day / days  # 0 at the start, 1 at the end
    risk = rng.normal(0.0, 1.0, n)
    bad = rng.random(n) < 1 / (1 + np.exp(-(-2.2 + 1.3 * risk)))
    seen = risk + rng.normal(0.0, 0.35 + 2.8 * age**2, n)  # what the score still sees
    score = np.round(1 / (1 + np.exp(-(-2.2 + 1.1 * seen))), 3)
    maturing = day > (dt.date(2025, 4, 30) - FIRST_DAY).days
    label = np.where(maturing | (rng.random(n) < 0.04), np.nan, bad.astype(float))
    income = np.round(52 - 7 * risk + rng.normal(0, 9, n) + 6 * age, 0)
    income[rng.random(n) < 0.03 + 0.08 * age] = np.nan
    north = 0.25 + 0.25 * age
    region = np.where(
        rng.random(n) < north,
        "north",
        rng.choice(np.array(["south", "east", "west"], dtype=object), n),
    )
    grade = np.clip(np.round(3 + risk + rng.normal(0, 0.7, n)), 1, 5).astype(int)
    utilisation = np.round(np.clip(0.45 + 0.15 * risk + rng.normal(0, 0.2, n), 0, 1), 2)
    return pd.DataFrame(
        {
            "loan_id": np.arange(n),
            "score_date": [FIRST_DAY + dt.timedelta(days=int(d)) for d in day],
            "pd_score": score,
            "defaulted": pd.array(label, dtype="Int64"),
            "income": income,
            "region": region,
            "grade": grade.astype(str),
            "utilisation": utilisation,
            "channel": rng.choice(np.array(["web", "branch"], dtype=object), n, p=[0.6, 0.4]),
        }
    )


def configuration(loans_url: str, store_url: str, reports_dir: Path) -> RiskmonConfig:
    return parse_config(
        {
            "store": {"url": store_url, "reports_dir": str(reports_dir)},
            "models": [
                {
                    "name": "retail_pd",
                    "source": {"url": loans_url, "table": "loans"},
                    "columns": {
                        "id": "loan_id",
                        "score_date": "score_date",
                        "score": "pd_score",
                        "label": "defaulted",
                        "segments": ["channel"],
                    },
                    "score_direction": "higher_is_riskier",
                    "characteristics": [
                        {"name": "income", "kind": "numeric"},
                        {"name": "utilisation", "kind": "numeric"},
                        {"name": "grade", "kind": "categorical"},
                        {"name": "region", "kind": "categorical"},
                    ],
                    "baseline": {"start": "2024-01-01", "end": "2024-03-31"},
                    "performance_window": "3 months",
                }
            ],
        },
        source="docs/make_screenshot.py",
        env={},
    )


def screenshot(report: Path, output: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": VIEW_WIDTH, "height": VIEW_HEIGHT})
            page.goto(report.resolve().as_uri(), wait_until="load")
            page.screenshot(path=str(output), full_page=False)
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium executable")
    parser.add_argument("--keep", type=Path, help="keep the databases and reports in DIR")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the PNG")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        loans_url = f"sqlite:///{work / 'loans.db'}"
        engine = create_engine(loans_url)
        with engine.begin() as connection:
            loans().to_sql("loans", connection, index=False, if_exists="replace", chunksize=5000)
        engine.dispose()
        store_url = f"sqlite:///{work / 'store.db'}"
        config = configuration(loans_url, store_url, work / "reports")
        model = config.models[0]
        store_db = store_engine(store_url)
        upgrade(store_db)
        store = MetricStore(store_db)
        for as_of in _month_ends(dt.date(2024, 7, 1), dt.date(2025, 6, 30)):
            outcome = run_model(model, as_of, store=store)
            print(f"{as_of}: {outcome.status} {outcome.alert_status}")
            render_run_report(config, store, model.name, as_of)
        report = render_run_report(config, store, model.name)
        render_index(config, store)
        store_db.dispose()
        args.output.parent.mkdir(parents=True, exist_ok=True)
        screenshot(report, args.output, args.chromium)
    print(f"{args.output}: {args.output.stat().st_size:,} bytes (report {report.name})")


if __name__ == "__main__":
    main()
