"""The catalog of figure families: every figure riskmon computes, judges, reports and lists.

Each family lives in one module of this package and is declared once, as a
:class:`Family`: its figures, how it turns count tables into records, its alert rules, its
report sections and summary lines, its ``riskmon history`` columns, the parameters the
report's appendix shows, and the figures it freezes with a baseline. The run, the freeze, the
evaluator, the report and ``riskmon history`` go through :data:`CATALOG` for everything a
family declares. A figure (name and population) or a rule declared twice, and a rule comparing
against a baseline figure no family freezes, fail at import.

To add a family: write its module beside these, add it to ``_FAMILIES`` below, give it a
template partial in ``templates/``, and test it (docs/ARCHITECTURE.md walks through it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from riskmon.figures import (
    calibration,
    challenger,
    cutoff,
    discrimination,
    gains,
    migration,
    quality,
    rating,
    stability,
    strength,
)
from riskmon.figures._baseline import FrozenBaseline
from riskmon.figures._family import (
    Alerts,
    BaselineView,
    Bins,
    Family,
    FigureSpec,
    Headline,
    History,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    RunTables,
    RunView,
    Section,
    mark_row_tests,
    measured,
    within_noise,
)
from riskmon.records import BASELINE, BinRecord, FigureRecord


class CatalogError(Exception):
    """Two families declare the same figure or rule, or a rule compares against a baseline
    figure that no family freezes."""


@dataclass(frozen=True)
class Catalog:
    """Every family, in the order their rules run and their figures are computed."""

    families: tuple[Family, ...]

    def __post_init__(self) -> None:
        figures = Counter((f.name, f.population) for fam in self.families for f in fam.figures)
        rules = Counter(r.name for fam in self.families for r in fam.rules)
        sections = Counter(s.name for fam in self.families for s in fam.sections)
        twice = [f"figure {n!r} ({p})" for (n, p), k in figures.items() if k > 1]
        twice += [f"rule {n!r}" for n, k in rules.items() if k > 1]
        twice += [f"report section {n!r}" for n, k in sections.items() if k > 1]
        if twice:
            raise CatalogError(f"declared by more than one figure family: {', '.join(twice)}")
        self._check_frozen()

    def _check_frozen(self) -> None:
        """Every baseline figure a family declares is frozen by it, and every one a rule
        compares against is declared: otherwise the rule would stay NOT_EVALUABLE, silently."""
        for family in self.families:
            declared = [f.name for f in family.figures if f.population == BASELINE]
            if declared and family.freeze is None:
                raise CatalogError(
                    f"family {family.name!r} declares baseline figures ({', '.join(declared)}) "
                    f"but no freeze that computes them"
                )
        frozen = {f.name for f in self.frozen}
        for family in self.families:
            for rule in family.rules:
                for name in rule.baseline:
                    if name not in frozen:
                        raise CatalogError(
                            f"rule {rule.name!r} of family {family.name!r} compares against "
                            f"baseline figure {name!r}, which no family freezes: declare it in "
                            f"a family's freeze"
                        )

    def compute(self, tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
        """Every figure and bin of a run, family by family."""
        figures: list[FigureRecord] = []
        bins: list[BinRecord] = []
        for family in self.families:
            found, rows = family.compute(tables)
            figures += found
            bins += rows
        if tables.model.columns.weight:
            mark_row_tests(figures, self.row_tests)
        return figures, bins

    def freeze(self, tables: RunTables) -> list[FigureRecord]:
        """Every figure a baseline freezes, family by family, from the development window's
        tables (the same :class:`RunTables` a run's families read)."""
        figures: list[FigureRecord] = []
        for family in self.families:
            if family.freeze is None:
                continue
            frozen = family.freeze(tables)
            declared = {f.name for f in family.figures if f.population == BASELINE}
            undeclared = sorted(
                {f.name for f in frozen if f.population != BASELINE or f.name not in declared}
            )
            if undeclared:
                raise CatalogError(
                    f"family {family.name!r} froze {', '.join(map(repr, undeclared))}, which it "
                    f"does not declare in its figures with population {BASELINE!r}"
                )
            figures += frozen
        if tables.model.columns.weight:
            mark_row_tests(figures, self.row_tests)
        return figures

    @property
    def row_tests(self) -> frozenset[str]:
        """The figures whose test counts loans, not weights (``FigureSpec.rows_test``)."""
        return frozenset(f.name for fam in self.families for f in fam.figures if f.rows_test)

    @property
    def figures(self) -> tuple[FigureSpec, ...]:
        """The figures a run stores (the baseline's are :attr:`frozen`)."""
        return tuple(
            f for family in self.families for f in family.figures if f.population != BASELINE
        )

    @property
    def frozen(self) -> tuple[FigureSpec, ...]:
        """The figures a baseline freezes (``Family.freeze``), population BASELINE."""
        return tuple(
            f
            for family in self.families
            if family.freeze is not None
            for f in family.figures
            if f.population == BASELINE
        )

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(r for family in self.families for r in family.rules)

    def rule(self, name: str) -> Rule | None:
        return next((r for r in self.rules if r.name == name), None)

    @property
    def sections(self) -> tuple[Section, ...]:
        return tuple(sorted((s for f in self.families for s in f.sections), key=_order))

    @property
    def headlines(self) -> tuple[Headline, ...]:
        return tuple(sorted((h for f in self.families for h in f.headlines), key=_order))

    @property
    def history(self) -> tuple[HistoryColumn, ...]:
        return tuple(sorted((c for f in self.families for c in f.history), key=_order))

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return tuple(sorted((p for f in self.families for p in f.parameters), key=_order))

    def default_population(self, figure: str, otherwise: str) -> str:
        """The population ``riskmon history --figure`` reads ``figure`` from by default."""
        for family in self.families:
            if figure in family.default_population:
                return family.default_population[figure]
        return otherwise

    def __iter__(self) -> Iterator[Family]:
        return iter(self.families)


def _order(item: Section | Headline | HistoryColumn | Parameter) -> int:
    return item.order


_FAMILIES = (
    discrimination.FAMILY,
    challenger.FAMILY,
    calibration.FAMILY,
    cutoff.FAMILY,
    rating.FAMILY,
    migration.FAMILY,
    stability.FAMILY,
    gains.FAMILY,
    strength.FAMILY,
    quality.FAMILY,
)

#: every figure family riskmon knows
CATALOG = Catalog(_FAMILIES)

__all__ = [
    "CATALOG",
    "Alerts",
    "BaselineView",
    "Bins",
    "Catalog",
    "CatalogError",
    "Family",
    "FigureSpec",
    "FrozenBaseline",
    "Headline",
    "History",
    "HistoryColumn",
    "Judge",
    "Parameter",
    "Rule",
    "RunTables",
    "RunView",
    "Section",
    "mark_row_tests",
    "measured",
    "within_noise",
]
