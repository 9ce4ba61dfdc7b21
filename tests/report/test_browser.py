"""The reports in a real headless Chromium: every page of the demo loads cleanly, requests
nothing, and fits a desktop's and a phone's width (what "fits" means: tests/report/fitting.py);
a report prints."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from riskmon.config import RiskmonConfig, load_config
from riskmon.report import render_run_report
from riskmon.store import MetricStore

from .fitting import layout_problems

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
VIEWPORTS = {"1280px": DESKTOP, "390px": PHONE}


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


class Tab:
    """One page of one browser context, kept for many loads: what each load logged and asked."""

    def __init__(self, browser: Any, viewport: dict[str, int]) -> None:
        self.context = browser.new_context(viewport=viewport)
        # nothing leaves the machine whatever a page asks for: every request is recorded
        # (below), and any but a file's refused
        self.context.route("**/*", self._file_only)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))

    @staticmethod
    def _file_only(route: Any) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            route.abort()

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")

    def load(self, path: Path) -> list[str]:
        """Load ``path``; what went wrong while it loaded: errors, warnings, other requests."""
        self.errors.clear()
        self.requests.clear()
        uri = path.resolve().as_uri()
        self.page.goto(uri, wait_until="load")
        outside = [f"requested {url}" for url in self.requests if url != uri]
        return [*self.errors, *outside]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser: Any, request: pytest.FixtureRequest) -> Iterator[Tab]:
    opened = Tab(browser, VIEWPORTS[request.param])
    try:
        yield opened
    finally:
        opened.close()


def demo_pages(folder: Path) -> list[Path]:
    """The demo's index and every report of every model its configuration names."""
    reports = folder / "reports"
    models = [m.name for m in load_config(folder / "riskmon.yaml", need_sources=False).models]
    pages = {m: sorted((reports / m).glob("*.html")) for m in models}
    assert all(pages.values()), f"a demo model has no report: {pages}"
    assert {p.name for p in reports.iterdir() if p.is_dir()} == set(models)
    return [reports / "index.html", *(p for m in models for p in pages[m])]


@pytest.mark.slow
@pytest.mark.parametrize("tab", sorted(VIEWPORTS), indirect=True)
def test_every_demo_page_loads_cleanly_requests_nothing_and_fits(
    demo: tuple[Path, str], tab: Tab, tmp_path: Path
) -> None:
    pages = demo_pages(demo[0])
    phone = tab.page.viewport_size["width"] < DESKTOP["width"]
    problems: dict[str, list[str]] = {}
    for path in pages:
        found = tab.load(path) + layout_problems(tab.page, phone=phone)
        counts = tab.page.evaluate(
            "[document.querySelectorAll('table').length, document.querySelectorAll('svg').length]"
        )
        if path.name != "index.html" and min(counts) == 0:
            found.append(f"{counts[0]} tables and {counts[1]} charts: the page did not render")
        if found:
            problems[str(path.relative_to(demo[0]))] = found
    newest = pages[-1]
    tab.load(newest)
    shot = tab.page.screenshot(path=str(tmp_path / "newest.png"), full_page=True)
    assert len(shot) > 10_000  # a picture of a page, not a blank one
    assert not problems, "\n".join(
        f"{page}:\n  "
        + "\n  ".join(found[:8])
        + (f"\n  … {len(found) - 8} more" if len(found) > 8 else "")
        for page, found in problems.items()
    )


@pytest.mark.slow
def test_the_report_fits_a_phone_and_prints(
    browser: Any, real_config: RiskmonConfig, real_runs: MetricStore, tmp_path: Path
) -> None:
    report = render_run_report(real_config, real_runs, "retail_pd")
    tab = Tab(browser, PHONE)
    try:
        assert tab.load(report) == []
        assert layout_problems(tab.page, phone=True) == []
        tab.page.screenshot(path=str(tmp_path / "phone.png"), full_page=False)
        tab.page.emulate_media(media="print")
        display = "getComputedStyle(document.querySelector('nav.toc')).display"
        assert tab.page.evaluate(display) == "none"
        pdf = tab.page.pdf(format="A4")
        assert pdf.startswith(b"%PDF")
    finally:
        tab.close()


LONG = "a-figure-that-will-not-wrap " * 3
#: pages that do not fit, each with what the check must say at 1280 and at 390 px (None: fits)
MISFITS = {
    "table-scrolled": (
        f'<div style="overflow-x:auto;width:300px"><table><tr><td style="white-space:nowrap">{LONG}'
        "</td></tr></table></div>",
        "only by scrolling",
        None,
    ),
    "table-wide": (
        f'<div style="width:300px"><table><tr><td style="white-space:nowrap">{LONG}</td></tr>'
        "</table></div>",
        "table is",
        "table is",
    ),
    "page-wide": ('<div class="wide" style="width:2000px">x</div>', "div.wide", "div.wide"),
    "clipped": (
        f'<p style="overflow:hidden;width:100px;white-space:nowrap">{LONG}</p>',
        "hides",
        "hides",
    ),
    "cell-spills": (
        '<table style="table-layout:fixed;width:200px"><tr><td style="width:50px;'
        f'white-space:nowrap">{LONG}</td><td></td></tr></table>',
        "spills out",
        "spills out",
    ),
    "chart-wide": (
        '<div style="width:200px"><svg width="300" height="50" viewBox="0 0 300 50"></svg></div>',
        "svg is 300 px",
        "svg is 300 px",
    ),
    "chart-label": (
        '<svg width="100" height="50" viewBox="0 0 100 50"><text x="90" y="20">KS</text></svg>',
        "drawn outside",
        "drawn outside",
    ),
    "card-unnamed": (
        '<table style="display:block"><tr><td>0.4200</td><td data-label="KS">0.4</td></tr></table>',
        None,
        'without their column\'s name (data-label), the first "0.4200"',
    ),
}


@pytest.mark.parametrize("tab", sorted(VIEWPORTS), indirect=True)
def test_the_checks_find_each_misfit_and_what_a_page_loads(tab: Tab, tmp_path: Path) -> None:
    """The checks can fail: each page of :data:`MISFITS` draws the problem it is named for,
    and a page that logs an error and asks a host for an image is caught loading."""
    phone = tab.page.viewport_size["width"] < DESKTOP["width"]
    for name, (body, desktop, on_phone) in MISFITS.items():
        path = tmp_path / f"{name}.html"
        path.write_text(f'<!DOCTYPE html><meta charset="utf-8"><body>{body}</body>')
        assert tab.load(path) == []
        found = layout_problems(tab.page, phone=phone)
        expected = on_phone if phone else desktop
        assert any(expected in line for line in found) if expected else found == [], (name, found)
    fine = tmp_path / "fine.html"
    fine.write_text("<!DOCTYPE html><body><table><tr><td>1</td></tr></table></body>")
    assert tab.load(fine) == []
    assert layout_problems(tab.page, phone=phone) == []
    noisy = tmp_path / "noisy.html"
    noisy.write_text(
        '<!DOCTYPE html><body><img src="http://example.invalid/x.png" alt="">'
        '<script>console.error("boom")</script></body>'
    )
    found = tab.load(noisy)
    assert "console error: boom" in found
    assert "requested http://example.invalid/x.png" in found
