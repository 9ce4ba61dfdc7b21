"""The catalog of figure families: one declaration per figure and rule, read by every layer."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from riskmon.config import ModelKind, Thresholds
from riskmon.figures import (
    CATALOG,
    SEGMENTS_ORDER,
    Catalog,
    CatalogError,
    Family,
    FigureSpec,
    Formula,
    Rule,
    Section,
    discrimination,
    stability,
    strength,
)
from riskmon.records import BASELINE, FigureRecord
from riskmon.shipped import shipped_folder


def test_a_figure_declared_by_two_families_fails_when_the_catalog_is_built() -> None:
    copy = dataclasses.replace(stability.FAMILY, name="stability_again", rules=(), sections=())
    with pytest.raises(CatalogError, match=r"figure 'psi' \(current\)"):
        Catalog((stability.FAMILY, copy))


def test_a_rule_declared_twice_fails() -> None:
    twin = dataclasses.replace(
        discrimination.FAMILY,
        name="twin",
        figures=(FigureSpec("ks_twin", "performance", "segment", "KS again"),),
        sections=(),
    )
    with pytest.raises(CatalogError, match="rule 'ks_band'"):
        Catalog((discrimination.FAMILY, twin))


def test_the_same_name_in_two_populations_is_two_figures() -> None:
    assert ("n_rows", "current") in {(f.name, f.population) for f in CATALOG.figures}
    assert ("n_rows", "performance") in {(f.name, f.population) for f in CATALOG.figures}
    # unique within each kind of model (the PD quality family's excluded_share and the LGD
    # back-test's share a name: no run computes both)
    for kind in ("pd", "lgd"):
        names = [
            (f.name, f.population) for family in CATALOG.for_kind(kind) for f in family.figures
        ]
        assert len(names) == len(set(names)), kind


def test_every_rule_reads_its_levels_from_the_thresholds_and_describes_them() -> None:
    defaults = Thresholds()
    rules: tuple[Rule, ...] = CATALOG.rules
    # in the families' order, each family's rules as it declares them
    assert [r.name for r in rules] == [r.name for family in CATALOG for r in family.rules]
    assert {"ks_band", "psi", "csi", "auc_drop", "volume_change"} <= {r.name for r in rules}
    for rule in rules:
        levels = rule.levels(defaults)
        assert levels, rule.name
        assert rule.describe(levels)
    assert CATALOG.rule("psi") is not None
    assert CATALOG.rule("psi").levels(defaults) == {"amber": 0.10, "red": 0.25}  # type: ignore[union-attr]
    assert CATALOG.rule("nonsense") is None


def test_history_columns_and_report_sections_come_in_their_declared_order() -> None:
    declared = [c for family in CATALOG for c in family.history]
    assert list(CATALOG.history) == sorted(declared, key=lambda c: c.order)
    sections = [s for family in CATALOG for s in family.sections]
    assert list(CATALOG.sections) == sorted(sections, key=lambda s: s.order)
    for section in CATALOG.sections:
        assert (shipped_folder("templates") / section.template).is_file(), section.template


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"order": 10}, "report section order 10"),
        ({"anchor": "stability"}, "report section anchor 'stability'"),
    ],
)
def test_two_sections_may_not_share_an_order_or_an_anchor(
    change: dict[str, object], says: str
) -> None:
    (section,) = discrimination.FAMILY.sections
    clash = dataclasses.replace(section, name="discrimination_again", **change)
    family = dataclasses.replace(
        discrimination.FAMILY,
        name="again",
        figures=(),
        rules=(),
        headlines=(),
        history=(),
        sections=(clash,),
    )
    with pytest.raises(CatalogError, match=says):
        Catalog((stability.FAMILY, family))


def test_two_summary_lines_may_not_share_an_order() -> None:
    twin = dataclasses.replace(
        discrimination.FAMILY, name="twin", figures=(), rules=(), sections=(), history=()
    )
    with pytest.raises(CatalogError, match="summary line order 10"):
        Catalog((discrimination.FAMILY, twin))

    assert CATALOG.default_population("csi", "performance") == "current"
    assert CATALOG.default_population("ks", "performance") == "performance"


def _family_of(kinds: frozenset[ModelKind], figure: str, order: int = 1) -> Family:
    record = FigureRecord(figure, 1.0, "current")
    return Family(
        name=f"family_{figure}",
        order=order,
        figures=(FigureSpec(figure, "current", "run", figure),),
        compute=lambda tables: ([record], []),
        kinds=kinds,
        formulas=(Formula(order, figure, f"{figure} = 1"),),
    )


def test_a_run_computes_the_families_of_its_models_kind_only() -> None:
    backtest = [f.name for f in CATALOG.families if "pd" not in f.kinds]
    assert backtest == ["backtest"]  # for LGD, CCF and EAD models; every other for PD models
    assert [f.name for f in CATALOG.for_kind("lgd").families] == ["backtest"]
    assert CATALOG.for_kind("ead").families == CATALOG.for_kind("ccf").families
    pd_family = _family_of(frozenset({"pd"}), "pd_figure")
    lgd_family = _family_of(frozenset({"lgd", "ccf"}), "lgd_figure", order=2)
    catalog = Catalog((pd_family, lgd_family))
    assert catalog.for_kind("ccf").families == (lgd_family,)

    class Tables:
        model = SimpleNamespace(kind="pd", columns=SimpleNamespace(weight=None))

    figures, bins = catalog.compute(Tables())  # type: ignore[arg-type]
    assert [f.name for f in figures] == ["pd_figure"]
    assert bins == []


def test_riskmons_families_are_found_in_their_declared_order() -> None:
    orders = [f.order for f in CATALOG]
    assert orders == sorted(orders)
    assert {f.name for f in CATALOG} >= {"discrimination", "stability", "quality"}


def test_a_family_that_clashes_is_refused_and_leaves_the_catalog_as_it_was() -> None:
    before = CATALOG.families
    clash = dataclasses.replace(stability.FAMILY, name="stability_again", order=9999)
    with pytest.raises(CatalogError, match=r"figure 'psi' \(current\)"):
        CATALOG.register(clash)
    assert CATALOG.families == before
    with CATALOG.registered(_family_of(frozenset({"pd"}), "extra_figure", order=9999)):
        assert CATALOG.families[-1].name == "family_extra_figure"
    assert CATALOG.families == before


def _judge_nothing(judge: object, where: str) -> None:
    """A judgement the catalog never runs in these tests."""


def test_a_rule_comparing_against_a_baseline_figure_nobody_freezes_fails_at_import() -> None:
    lonely = Family(
        name="concentration",
        order=9999,
        figures=(FigureSpec("hhi", "current", "segment", "Herfindahl index"),),
        compute=lambda tables: ([], []),
        formulas=(Formula(9999, "Herfindahl index", "Σ R<sub>i</sub>²"),),
        rules=(
            Rule(
                "hhi_rise",
                "segment",
                "Herfindahl index",
                lambda t: {"amber": 0.1},
                lambda levels: "amber",
                _judge_nothing,
                baseline=("hhi",),
                finding="Loans are more concentrated",
            ),
        ),
    )
    with pytest.raises(CatalogError) as raised:
        Catalog((*CATALOG.families, lonely))
    assert str(raised.value) == (
        "rule 'hhi_rise' of family 'concentration' compares against baseline figure 'hhi', "
        "which no family freezes: declare it in a family's freeze"
    )
    # declared as frozen, it is accepted
    frozen = dataclasses.replace(
        lonely,
        figures=(*lonely.figures, FigureSpec("hhi", BASELINE, "segment", "Herfindahl index")),
        freeze=lambda tables: [],
    )
    assert Catalog((*CATALOG.families, frozen)).frozen[-1].name == "hhi"


def test_a_freeze_stores_only_the_baseline_figures_its_family_declares() -> None:
    sneaky = dataclasses.replace(
        strength.FAMILY,
        rules=(),
        sections=(),
        freeze=lambda tables: [FigureRecord("iv_squared", 0.01, BASELINE, variable="income")],
    )
    tables = SimpleNamespace(model=SimpleNamespace(kind="pd", columns=SimpleNamespace(weight=None)))
    with pytest.raises(CatalogError, match="family 'strength' froze 'iv_squared'"):
        Catalog((sneaky,)).freeze(tables)  # type: ignore[arg-type]


def test_a_baseline_figure_declared_without_a_freeze_fails() -> None:
    without = dataclasses.replace(
        strength.FAMILY, name="strength_again", rules=(), sections=(), freeze=None
    )
    with pytest.raises(CatalogError, match="'strength_again' declares baseline figures"):
        Catalog((without,))


def test_every_baseline_figure_a_rule_reads_is_frozen_and_only_there() -> None:
    # riskmon's own rules read these (a new family's add to them, so: at least these)
    reads = {r.name: r.baseline for r in CATALOG.rules if r.baseline}
    assert (
        reads.items()
        >= {
            "auc_drop": ("auc",),
            "auc_test": ("auc",),
            "gini_drop": ("gini",),
            "migration_bandwidth": (
                "migration_rerated",
                "migration_mwb_upper",
                "migration_mwb_lower",
            ),
            "iv_drop": ("iv",),
            "concept_drift": ("expected_auc", "pd_bins_auc"),
            "vintage_defaults": ("default_timing",),
        }.items()
    )
    assert {f.population for f in CATALOG.frozen} == {BASELINE}
    assert BASELINE not in {f.population for f in CATALOG.figures}
    read = {name for r in CATALOG.rules for name in r.baseline}
    assert read <= {f.name for f in CATALOG.frozen}
    assert [f.name for f in CATALOG.frozen][:15] == [
        "n_rows",
        "n_bads",
        "bad_rate",
        "ks",
        "auc",
        "gini",
        "expected_auc",
        "pd_bins_auc",
        "default_timing",
        "migration_rerated",
        "migration_mwb_upper",
        "migration_mwb_lower",
        "migration_mwb_upper_exposure",
        "migration_mwb_lower_exposure",
        "iv",
    ]


#: riskmon's own families: the catalog finds each of them (a module renamed, or a FAMILY
#: misspelt, would drop one silently)
RISKMONS_FAMILIES = {
    "discrimination",
    "challenger",
    "calibration",
    "early_warning",
    "vintages",
    "cutoff",
    "rating",
    "migration",
    "stability",
    "gains",
    "strength",
    "quality",
    "scorecard",
    "special",
    "overrides",
}


def test_every_family_of_riskmon_is_found() -> None:
    assert {f.name for f in CATALOG} >= RISKMONS_FAMILIES


def test_registering_the_same_family_twice_changes_nothing() -> None:
    extra = _family_of(frozenset({"pd"}), "twice_figure", order=9998)
    with CATALOG.registered(extra):
        CATALOG.register(extra)  # a second load of the same module
        assert [f.name for f in CATALOG].count("family_twice_figure") == 1
    assert "family_twice_figure" not in {f.name for f in CATALOG}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"anchor": "segments"}, "takes the report's own anchor 'segments'"),
        ({"order": SEGMENTS_ORDER}, f"takes the report's own order {SEGMENTS_ORDER}"),
        ({"template": "_macros.html"}, "the name of one of riskmon's own templates"),
    ],
)
def test_a_registered_familys_section_may_not_take_the_reports_own(
    change: dict[str, object], says: str
) -> None:
    section = Section("outside", "Outside", "outside", 9997, "_outside.html", lambda run: None)
    family = dataclasses.replace(
        _family_of(frozenset({"pd"}), "outside_figure", order=9997),
        sections=(dataclasses.replace(section, **change),),
        templates=shipped_folder("templates").parent,
    )
    before = CATALOG.families
    with pytest.raises(CatalogError, match=says):
        CATALOG.register(family)
    assert CATALOG.families == before


def _reading(figure: str, kinds: frozenset[ModelKind], order: int) -> Family:
    """A family whose one rule compares against the baseline figure ``figure``."""
    rule = Rule(
        f"{figure}_reader",
        "segment",
        figure,
        lambda t: {},
        lambda levels: "",
        _judge_nothing,
        baseline=(figure,),
        finding=f"{figure} reads its baseline",
    )
    return dataclasses.replace(_family_of(kinds, f"{figure}_reader", order=order), rules=(rule,))


def test_unregistering_a_family_whose_frozen_figure_a_rule_reads_is_refused() -> None:
    with CATALOG.registered(_reading("iv", frozenset({"pd"}), 9995)):
        with pytest.raises(CatalogError, match="compares against baseline figure 'iv'"):
            CATALOG.unregister("strength")
        assert "strength" in {f.name for f in CATALOG}


def test_the_families_of_a_kind_are_not_checked_alone() -> None:
    """A rule of one kind may compare against a figure a family of another kind freezes: the
    whole catalog was checked, so choosing its families of a kind does not fail."""
    reader = _reading("auc", frozenset({"lgd"}), 9996)
    catalog = Catalog((*CATALOG.families, reader))
    assert [f.name for f in catalog.for_kind("lgd").families] == ["backtest", reader.name]


def test_a_rule_without_a_finding_or_a_family_without_formulas_is_refused() -> None:
    """The report's findings read each rule's plain words, its appendix each family's
    formulas: a family that forgets either fails when it joins the catalog."""
    silent_rule = dataclasses.replace(
        _reading("auc", frozenset({"pd"}), 9994).rules[0], name="silent", finding=" "
    )
    family = dataclasses.replace(
        _family_of(frozenset({"pd"}), "undefined_figure", order=9994),
        rules=(silent_rule,),
        formulas=(),
    )
    before = CATALOG.families
    with pytest.raises(CatalogError) as raised:
        CATALOG.register(family)
    assert "rule 'silent'" in str(raised.value)
    assert "family 'family_undefined_figure' (no formulas)" in str(raised.value)
    assert CATALOG.families == before
    # a family that stores nothing but baseline figures needs no formula
    assert CATALOG.formulas({"undefined_figure"}) == ()
    assert [f.term for f in CATALOG.formulas({"psi"})] == ["PSI and CSI"]
