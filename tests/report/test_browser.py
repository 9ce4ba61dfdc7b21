"""The reports in a real headless Chromium: they load cleanly, request nothing, and fit a
desktop's and a phone's width without a table overflowing its box."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from riskmon.config import RiskmonConfig
from riskmon.report import render_index, render_run_report
from riskmon.store import MetricStore

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"browser tests need Chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _open(
    browser: Any, path: Path, viewport: dict[str, int]
) -> tuple[Any, Any, list[str], list[str]]:
    """Load ``path``; the page's context, the page, its console errors and its requests."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.resolve().as_uri(), wait_until="load")
    return context, page, errors, requests


#: every table whose box is wider than the box it sits in, with both widths, in CSS pixels
OVERFLOWING_TABLES = """() => Array.from(document.querySelectorAll('table')).map(t => {
  const box = t.parentElement.getBoundingClientRect(), own = t.getBoundingClientRect();
  return [t.className, Math.round(Math.max(own.width, t.scrollWidth)), Math.round(box.width)];
}).filter(([, width, room]) => width > room)"""


@pytest.mark.slow
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_the_index_and_a_report_load_cleanly_and_no_table_overflows(
    browser: Any,
    real_config: RiskmonConfig,
    real_runs: MetricStore,
    tmp_path: Path,
    viewport: dict[str, int],
) -> None:
    report = render_run_report(real_config, real_runs, "retail_pd")
    index = render_index(real_config, real_runs)
    for path in (index, report):
        context, page, errors, requests = _open(browser, path, viewport)
        try:
            assert errors == []
            assert requests == [path.resolve().as_uri()]
            screenshot = tmp_path / f"{path.stem}-{viewport['width']}px.png"
            page.screenshot(path=str(screenshot), full_page=True)
            assert screenshot.stat().st_size > 10_000
            assert page.evaluate("document.querySelectorAll('table').length") > 0
            assert page.evaluate(OVERFLOWING_TABLES) == []
            # nor does the page itself scroll sideways
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        finally:
            context.close()


@pytest.mark.slow
def test_the_report_fits_a_phone_and_prints(
    browser: Any, real_config: RiskmonConfig, real_runs: MetricStore, tmp_path: Path
) -> None:
    report = render_run_report(real_config, real_runs, "retail_pd")
    context, page, errors, _ = _open(browser, report, PHONE)
    try:
        assert errors == []
        # wide tables scroll inside their own box; the page itself never scrolls sideways
        page_width = page.evaluate("document.documentElement.scrollWidth")
        assert page_width <= PHONE["width"]
        page.screenshot(path=str(tmp_path / "phone.png"), full_page=False)
        page.emulate_media(media="print")
        assert (
            page.evaluate("getComputedStyle(document.querySelector('nav.toc')).display") == "none"
        )
        pdf = page.pdf(format="A4")
        assert pdf.startswith(b"%PDF")
    finally:
        context.close()
