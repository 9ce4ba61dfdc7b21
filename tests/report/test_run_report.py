"""The model run report and the index, rendered from real runs and parsed back."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from riskmon.config import RiskmonConfig, StoreConfig
from riskmon.figures import CATALOG, SEGMENTS_ORDER
from riskmon.report import NoRunError, model_folder, render_index, render_run_report, report_path
from riskmon.report.context import run_report_context
from riskmon.store import MetricStore, StoredAlert

from .conftest import AS_OF
from .htmltree import Element, parse
from .synthetic import store_history

#: the sections this model (a challenger, a PD, no grades, no cut-off, no migrations) shows
#: besides those every succeeded run shows; the rest of the page's order is the catalog's
OPTIONAL_SHOWN = {"challenger", "calibration", "segments"}
#: the sections every succeeded run shows
ALWAYS_SHOWN = {"stability", "characteristics", "discrimination", "gains", "woe-iv", "data-quality"}
OPTIONAL_LEFT_OUT = {"cutoff", "migration", "rating"}
#: summary lines every PD model with a challenger shows (the rest of the summary is the catalog's)
SUMMARY_ROWS = {
    "ks",
    "auc",
    "gini",
    "psi",
    "csi_max",
    "bad_rate",
    "mean_pd",
    "top_decile_lift",
    "lift_order_breaks",
    "n_current",
    "unmatured_share",
}
HOSTILE = "<script>alert(1)</script>"


def _page(path: Path) -> Element:
    return parse(path.read_text(encoding="utf-8"))


def _section_ids(page: Element) -> list[str]:
    return [s.attrs["id"] for s in page.iter("section")]


def _summary_row(page: Element, key: str) -> Element:
    return page.get("section", id="summary").get("tr", data_figure=key)


def test_the_report_has_every_section_in_order(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    path = render_run_report(real_config, real_runs, "retail_pd")
    assert path == real_config.store.reports_dir / "retail_pd" / "2025-03-31.html"
    page = _page(path)
    ids = _section_ids(page)
    declared = [s.anchor for s in CATALOG.sections]
    # the verdict and the findings first; the run's details and the appendix last
    assert ids[:3] == ["run-header", "findings", "summary"]
    assert ids[-3:] == ["run-details", "evidence", "appendix"]
    # the families' sections in their declared order, the segments table in its place
    families = [i for i in ids[3:-3] if i != "segments"]
    assert families == [a for a in declared if a in families]
    assert ids.index("segments") == 3 + sum(
        s.order < SEGMENTS_ORDER for s in CATALOG.sections if s.anchor in ids
    )
    assert set(ids) >= OPTIONAL_SHOWN | ALWAYS_SHOWN
    assert not OPTIONAL_LEFT_OUT & set(ids)
    # a section left out is one whose builder found nothing for this run
    context = run_report_context(
        real_runs, real_runs.latest_run("retail_pd"), model=real_config.models[0]
    )
    assert [p.anchor for p in context.sections] == ids[3:-3]
    toc = [a.attrs["href"] for a in page.get("nav", class_="toc").iter("a")]
    assert toc == [f"#{i}" for i in ids[1:]]
    headings = [s.get("h2").text() for s in page.iter("section") if s.find("h2")]
    assert headings[:2] == ["Findings", "Summary"]
    assert page.get("h1").text() == "Model run report: retail_pd"


def test_the_header_shows_windows_counts_baseline_and_thresholds(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    page = _page(render_run_report(real_config, real_runs, "retail_pd", AS_OF[1]))
    details = page.get("section", id="run-details")
    facts = {row.get("th").text(): row.get("td").text() for row in details.get("table").iter("tr")}
    assert facts["Stability window"] == "1 month"
    assert facts["Performance window (maturity)"] == "2 months"
    assert facts["Current population"].startswith("2025-03-01 to 2025-03-31")
    assert facts["Performance cohort"].startswith("2025-01-01 to 2025-01-31")
    assert facts["Baseline (version 1)"].startswith("2024-12-15 to 2024-12-31")
    assert "'bad'" in facts["Bad definition"]
    run = real_runs.run("retail_pd", AS_OF[1])
    assert run is not None
    assert facts["Loans"] == (
        f"current {run.n_current:,} · matured {run.n_matured:,} · unmatured {run.n_unmatured:,}"
    )
    # the thresholds are in the appendix, of the rules that applied to the run only
    table = page.get("section", id="appendix").get("table", class_="thresholds")
    rules = [row.find("code").text() for row in table.iter("tr") if row.find("code")]  # type: ignore[union-attr]
    assert rules[:2] == ["ks_band", "auc_drop"]
    assert "missing_rate_change" in rules
    applied = {a.rule for a in real_runs.alerts(run.id)}
    assert set(rules) == applied
    assert {r.name for r in CATALOG.rules} - applied  # some rule did not apply, and is not listed


def test_the_summary_has_each_headline_figure_with_its_history(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    page = _page(render_run_report(real_config, real_runs, "retail_pd"))
    summary = page.get("section", id="summary")
    keys = [
        row.attrs["data-figure"]
        for row in summary.get("table").iter("tr")
        if "data-figure" in row.attrs
    ]
    # one line per headline of the catalog, in its order (this model shows every one but the
    # scorecard's points shift and the override rate: it has no points nor override column)
    not_shown = {"points_shift", "override_rate"}
    headlines = CATALOG.for_kind("pd").headlines
    assert keys == [h.key for h in headlines if h.key not in not_shown]
    assert set(keys) >= SUMMARY_ROWS
    previous = real_runs.run("retail_pd", AS_OF[0])
    assert previous is not None
    ks_before = next(f for f in real_runs.figures(previous.id) if f.name == "ks" and not f.segment)
    cells = [td.text() for td in _summary_row(page, "ks").iter("td")]
    assert cells[2] == f"{ks_before.value:.4f}"  # previous run
    assert _summary_row(page, "ks").find("svg") is not None  # trend sparkline


def test_a_ks_outside_its_band_is_flagged_in_words(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    # the test loans' score is noise: KS is far below the 0.20 floor
    page = _page(render_run_report(real_config, real_runs, "retail_pd"))
    row = _summary_row(page, "ks")
    assert "flagged" in row.classes()
    assert "RED" in row.text()
    assert "OUTSIDE BAND" in row.text()
    assert "below its band 0.20–0.75" in row.text()
    callouts = [
        p.text() for p in page.get("section", id="summary").iter("p") if "callout" in p.classes()
    ]
    assert any("KS" in text and "OUTSIDE BAND" in text for text in callouts)
    discrimination = page.get("section", id="discrimination")
    assert "OUTSIDE BAND" in discrimination.get("tr", data_figure="ks").text()
    # figures inside their band carry no such words
    assert "OUTSIDE BAND" not in _summary_row(page, "psi").text()


def test_a_ks_inside_its_band_is_not_flagged(store: MetricStore, reports_dir: Path) -> None:
    store_history(store, "healthy", months=3, characteristics=["income"], last_ks=0.41)
    config = RiskmonConfig(store=StoreConfig(reports_dir=reports_dir))
    page = _page(render_run_report(config, store, "healthy"))
    row = _summary_row(page, "ks")
    assert "flagged" not in row.classes()
    assert "OUTSIDE BAND" not in page.text()
    assert "GREEN" in row.text()


def test_stability_gains_and_woe_tables_match_the_store(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    page = _page(render_run_report(real_config, real_runs, "retail_pd"))
    run = real_runs.run("retail_pd", AS_OF[1])
    assert run is not None
    bins = real_runs.bins(run.id)
    score_bins = [
        b for b in bins if (b.population, b.variable, b.segment) == ("current", "score", "")
    ]
    stability = page.get("section", id="stability").get("table")
    rows = list(stability.get("tbody").iter("tr"))
    assert len(rows) == len(score_bins)
    assert [list(r.iter("td"))[1].text() for r in rows] == [b.label for b in score_bins]
    psi = next(f for f in real_runs.figures(run.id) if f.name == "psi" and not f.segment)
    assert f"{psi.value:.4f}" in stability.get("tfoot").text()
    gains = list(page.get("section", id="gains").get("tbody").iter("tr"))
    assert [next(iter(r.iter("td"))).text() for r in gains] == [str(i) for i in range(1, 11)]
    woe = page.get("section", id="woe-iv")
    iv_rows = woe.get("table").get("tbody")
    assert [r.get("th").text() for r in iv_rows.iter("tr")] == ["income", "region", "grade"]
    characteristics = page.get("section", id="characteristics").get("table").get("tbody")
    csi = [float(next(iter(r.iter("td"))).text()) for r in characteristics.iter("tr")]
    assert csi == sorted(csi, reverse=True)  # worst first


def test_every_chart_is_inline_svg_with_a_text_alternative(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    page = _page(render_run_report(real_config, real_runs, "retail_pd"))
    discrimination = page.get("section", id="discrimination")
    captions = [f.get("figcaption").text() for f in discrimination.iter("figure")]
    assert captions == [
        "ROC curve",
        "KS curve",
        "CAP / gain curve",
        "KS over time",
        "Gini over time",
    ]
    for svg in page.iter("svg"):
        assert svg.attrs.get("role") == "img"
        assert svg.attrs.get("aria-label")
    ks_trend = discrimination.iter("figure")
    trend = next(f for f in ks_trend if f.get("figcaption").text() == "KS over time")
    guides = [t.text() for t in trend.iter("text") if "guide-label" in t.classes()]
    assert sorted(guides) == ["high 0.75", "low 0.20"]
    assert not list(page.iter("script"))
    assert not list(page.iter("img"))
    assert not list(page.iter("link"))


def test_an_older_report_shows_no_later_run(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    page = _page(render_run_report(real_config, real_runs, "retail_pd", AS_OF[0]))
    assert "2025-03-31" not in page.get("section", id="summary").text()
    cells = [td.text() for td in _summary_row(page, "ks").iter("td")]
    assert cells[2] == "—"  # no run before the first one


def test_a_failed_run_renders_with_its_error(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    run_id = real_runs.claim_run(
        "retail_pd", dt.date(2025, 4, 30), score_direction="higher_is_riskier", config_hash="x"
    )
    real_runs.fail_run(run_id, "SourceError: table 'loans' has no column 'bad'")
    path = render_run_report(real_config, real_runs, "retail_pd")
    assert path.name == "2025-04-30.html"
    page = _page(path)
    assert _section_ids(page) == ["run-header", "run-details", "evidence", "appendix"]
    alert = page.get("div", role="alert")
    assert "This run failed" in alert.text()
    assert "table 'loans' has no column 'bad'" in alert.text()


def test_a_missing_run_is_a_clear_error(real_config: RiskmonConfig, store: MetricStore) -> None:
    with pytest.raises(NoRunError, match="no run of model 'retail_pd' as of 2025-01-31"):
        render_run_report(real_config, store, "retail_pd", dt.date(2025, 1, 31))


def test_hostile_names_are_text_never_elements(store: MetricStore, reports_dir: Path) -> None:
    store_history(store, HOSTILE, months=2, characteristics=[HOSTILE, "income"])
    config = RiskmonConfig(store=StoreConfig(reports_dir=reports_dir))
    path = render_run_report(config, store, HOSTILE)
    assert path.parent == reports_dir / model_folder(HOSTILE)
    assert path.resolve().is_relative_to(reports_dir.resolve())
    html = path.read_text(encoding="utf-8")
    page = parse(html)
    assert not list(page.iter("script"))
    assert HOSTILE in page.get("h1").text()
    assert HOSTILE in page.get("title").text()
    names = [
        row.attrs["data-characteristic"]
        for row in page.get("section", id="characteristics").iter("tr")
        if "data-characteristic" in row.attrs
    ]
    assert HOSTILE in names
    assert "<script" not in html
    index = parse(render_index(config, store).read_text(encoding="utf-8"))
    assert not list(index.iter("script"))
    row = index.get("tr", data_model=HOSTILE)
    assert HOSTILE in row.get("th").text()


def test_the_index_lists_every_model_with_a_link_to_its_report(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    for as_of in AS_OF:
        render_run_report(real_config, real_runs, "retail_pd", as_of)
    store_history(real_runs, "other_model", months=1, characteristics=["income"])
    path = render_index(real_config, real_runs)
    assert path == real_config.store.reports_dir / "index.html"
    page = _page(path)
    row = page.get("tr", data_model="retail_pd")
    link = row.get("th").get("a")
    assert link.attrs["href"] == "retail_pd/2025-03-31.html"
    assert (path.parent / link.attrs["href"]).is_file()
    assert "RED" in row.text()
    assert "OUTSIDE BAND" in row.text()
    section = page.get("section", data_model="retail_pd")
    assert list(row.iter("td"))[-1].get("a").attrs["href"] == f"#{section.attrs['id']}"
    reports = [li.get("a").attrs["href"] for li in section.get("ol").iter("li")]
    assert reports == ["retail_pd/2025-03-31.html", "retail_pd/2025-02-28.html"]
    other = page.get("tr", data_model="other_model")
    assert "not configured" in other.text()
    assert other.get("th").find("a") is None  # no report written for it yet
    unwritten = page.get("section", data_model="other_model").get("ol")
    assert [li.find("a") for li in unwritten.iter("li")] == [None]
    assert "(no report file)" in unwritten.text()


def test_the_index_says_why_each_model_has_its_status(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    """One finding per rule with an AMBER or RED alert, the most severe first, with the
    number of places it flags and the message of its worst alert."""
    latest = real_runs.latest_run("retail_pd")
    assert latest is not None
    stored = real_runs.alerts(latest.id)
    severity = {"RED": 0, "AMBER": 1}
    flagged: dict[str, list[StoredAlert]] = {}
    for a in stored:
        if a.status in severity:
            flagged.setdefault(a.rule, []).append(a)
    assert len(flagged) > 1, "the test needs a run with AMBER or RED alerts of several rules"
    assert sum(map(len, flagged.values())) > len(flagged), "and a rule flagging several places"
    worst = {
        r: min((a.status for a in found), key=severity.__getitem__) for r, found in flagged.items()
    }
    page = _page(render_index(real_config, real_runs))
    why = page.get("section", data_model="retail_pd").get("ul", class_="why")
    items = list(why.iter("li"))
    shown = [(li.get("span").text(), li.attrs["data-rule"]) for li in items]
    assert sorted(shown) == sorted((status, rule) for rule, status in worst.items())
    assert [severity[status] for status, _ in shown] == sorted(severity[s] for s, _ in shown)
    for li in items:
        found = flagged[li.attrs["data-rule"]]
        at_worst = [a for a in found if a.status == worst[li.attrs["data-rule"]]]
        judged = [a for a in stored if a.rule == found[0].rule and a.status != "NOT_EVALUABLE"]
        if len(judged) > 1:
            assert f"{len(at_worst)} of {len(judged)} places" in li.text()
        assert any(a.message in li.text() for a in at_worst)


def test_every_stored_report_is_reachable_from_the_index(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    dates = store_history(real_runs, "long_history", months=14, characteristics=["income"])
    for as_of in dates:
        render_run_report(real_config, real_runs, "long_history", as_of)
    page = _page(render_index(real_config, real_runs))
    section = page.get("section", data_model="long_history")
    hrefs = [li.get("a").attrs["href"] for li in section.get("ol").iter("li")]
    assert hrefs == [f"long_history/{d.isoformat()}.html" for d in reversed(dates)]
    assert "more" not in section.text()


def test_each_report_links_its_previous_and_next_run_and_the_index(
    real_config: RiskmonConfig, store: MetricStore
) -> None:
    from riskmon.run import run_models

    first, second = AS_OF
    # run by run, as nights come: the first report is written before the second run exists
    (outcome,) = run_models(real_config, ["retail_pd"], first, store=store)
    page = _page(Path(str(outcome.report_path)))
    nav = page.get("nav", class_="runs")
    assert nav.find("a", rel="next") is None
    assert nav.find("a", rel="prev") is None
    (outcome,) = run_models(real_config, ["retail_pd"], second, store=store)
    for as_of, rel, neighbour in ((first, "next", second), (second, "prev", first)):
        path = report_path(real_config.store.reports_dir, "retail_pd", as_of)
        nav = _page(path).get("nav", class_="runs")
        link = nav.get("a", rel=rel)
        assert link.attrs["href"] == f"{neighbour.isoformat()}.html"
        assert (path.parent / link.attrs["href"]).is_file()
        index = nav.get("a", class_="index").attrs["href"]
        assert (
            path.parent / index
        ).resolve() == real_config.store.reports_dir.resolve() / "index.html"


def test_run_models_leaves_the_index_to_a_caller_that_asks_to(
    real_config: RiskmonConfig, store: MetricStore
) -> None:
    from riskmon.run import run_models

    index = real_config.store.reports_dir / "index.html"
    (outcome,) = run_models(real_config, ["retail_pd"], AS_OF[0], store=store, index=False)
    assert Path(str(outcome.report_path)).is_file()
    assert not index.exists()
    run_models(real_config, ["retail_pd"], AS_OF[1], store=store)
    assert "retail_pd" in index.read_text(encoding="utf-8")


def test_report_path_is_where_the_report_is_written(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    written = render_run_report(real_config, real_runs, "retail_pd", AS_OF[0])
    assert written == report_path(real_config.store.reports_dir, "retail_pd", AS_OF[0])
    assert model_folder("..") != ".."
    assert "/" not in model_folder("a/../../b")


def test_a_model_with_a_challenger_gets_its_report_when_no_outcome_has_matured(
    real_config: RiskmonConfig, real_runs: MetricStore
) -> None:
    """Regression: the challenger section read a DeLong interval that a cohort without matured
    outcomes does not have, and the report was not written, exactly when it was needed."""
    from riskmon.run import run_model

    late = dt.date(2030, 1, 31)  # no loan scored in either window
    assert run_model(real_config.models[0], late, store=real_runs).ok
    page = _page(render_run_report(real_config, real_runs, "retail_pd", late))
    row = page.get("section", id="challenger").get("tr", data_challenger="pd_alt")
    assert "Difference" in [td.attrs.get("data-label") for td in row.iter("td")]
    assert "Traceback" not in page.text()
