"""The catalog of figure families: every figure riskmon computes, judges, reports and lists.

Each family lives in one module of this package and is declared once, as a
:class:`Family`: its figures, how it turns count tables into records, its alert rules, its
report sections and summary lines, its ``riskmon history`` columns, the parameters the
report's appendix shows, and the figures it freezes with a baseline. The run, the freeze, the
evaluator, the report and ``riskmon history`` go through :data:`CATALOG` for everything a
family declares. A figure (name and population) or a rule declared twice, and a rule comparing
against a baseline figure no family freezes, fail at import.

riskmon's families are the ``FAMILY`` of every public module of this package, found when the
package is imported, in their declared ``order``: to add one, write its module beside these
with its template partial in ``templates/``, and test it (docs/ARCHITECTURE.md walks through
it). A family kept outside riskmon is added with :meth:`Catalog.register` (or the
configuration's ``families`` key), its partials in the folder it names (``Family.templates``).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from riskmon.config import ModelKind
from riskmon.errors import ConfigError
from riskmon.figure_table import Figures
from riskmon.figures._baseline import FrozenBaseline
from riskmon.figures._chunks import Chunk, Computed, chunks, hold_computed, mark_row_tests
from riskmon.figures._family import (
    Family,
    FigureSpec,
    Formula,
    Headline,
    HistoryColumn,
    Judge,
    Parameter,
    Rule,
    Section,
    measured,
    within_noise,
)
from riskmon.figures._views import (
    Alerts,
    BaselineView,
    Bins,
    History,
    RunTables,
    RunView,
)
from riskmon.held import Held
from riskmon.records import BASELINE, BinRecord, FigureRecord
from riskmon.shipped import shipped_folder


class CatalogError(Exception):
    """Two families declare the same figure or rule, or a rule compares against a baseline
    figure that no family freezes."""


#: the report's own sections, which no family declares: the anchors a family's section may not
#: take, and the order of the segments table among the families' sections
REPORT_ANCHORS = frozenset(
    {"run-header", "findings", "summary", "segments", "run-details", "evidence", "appendix"}
)
SEGMENTS_ORDER = 60

#: one change of the catalog at a time (the scheduler's jobs load families from their threads)
_CHANGING = threading.Lock()


@dataclass
class Catalog:
    """Every family, in the order their rules run and their figures are computed."""

    families: tuple[Family, ...]

    def __post_init__(self) -> None:
        self.families = tuple(sorted(self.families, key=lambda f: f.order))
        self._check()

    def register(self, family: Family) -> None:
        """Add ``family`` (one kept outside riskmon) to the catalog: every run, report and
        ``riskmon history`` of this process then goes through it; nothing when it is in it
        already. A CatalogError, and the catalog unchanged, when it declares what a family of
        the catalog already does."""
        with _CHANGING:
            if not any(f is family for f in self.families):
                self.families = Catalog((*self.families, family)).families

    def unregister(self, name: str) -> None:
        """Take the family called ``name`` out of the catalog (nothing when it is not in it).
        A CatalogError, and the catalog unchanged, when a rule of another family compares
        against a baseline figure only it freezes."""
        with _CHANGING:
            self.families = Catalog(tuple(f for f in self.families if f.name != name)).families

    @contextmanager
    def registered(self, family: Family) -> Iterator[Family]:
        """``family`` in the catalog for the time of a ``with`` block (a test, a notebook)."""
        self.register(family)
        try:
            yield family
        finally:
            self.unregister(family.name)

    def _check(self) -> None:
        # a figure is one family's within each kind of model (families of disjoint kinds never
        # compute in one run: a PD model's excluded share and an LGD model's may share a name)
        figures = Counter(
            (f.name, f.population, kind)
            for fam in self.families
            for kind in fam.kinds
            for f in fam.figures
        )
        rules = Counter(r.name for fam in self.families for r in fam.rules)
        sections = Counter(s.name for fam in self.families for s in fam.sections)
        twice = sorted({f"figure {n!r} ({p})" for (n, p, _), k in figures.items() if k > 1})
        twice += [f"rule {n!r}" for n, k in rules.items() if k > 1]
        twice += [f"report section {n!r}" for n, k in sections.items() if k > 1]
        twice += _twice("family name", (f.name for f in self.families))
        twice += _twice("family order", (f.order for f in self.families))
        twice += _twice("report section anchor", (s.anchor for s in self.sections))
        twice += _twice("report section order", (s.order for s in self.sections))
        twice += _twice("summary line order", (h.order for h in self.headlines))
        twice += _twice("history column order", (c.order for c in self.history))
        twice += _twice("formula order", (m.order for f in self.families for m in f.formulas))
        twice += _twice("report section template", (s.template for s in self.sections))
        if twice:
            raise CatalogError(f"declared by more than one figure family: {', '.join(twice)}")
        self._check_report()
        self._check_frozen()
        self._check_explained()

    def _check_explained(self) -> None:
        """Every rule says in plain words what its alert means (the report's findings read it),
        and every family that stores figures defines them (the report's appendix lists it)."""
        silent = [f"rule {r.name!r}" for r in self.rules if not r.finding.strip()]
        silent += [
            f"family {f.name!r} (no formulas)"
            for f in self.families
            if not f.formulas and any(s.population != BASELINE for s in f.figures)
        ]
        if silent:
            raise CatalogError(
                f"not explained: {', '.join(silent)}: a rule declares its finding, a family "
                f"the formulas of its figures"
            )

    def _check_report(self) -> None:
        """No section takes an anchor or the order of one of the report's own, and a family
        kept outside riskmon names no partial of riskmon's own (it would render that one)."""
        taken = [f"anchor {s.anchor!r}" for s in self.sections if s.anchor in REPORT_ANCHORS]
        taken += [f"order {s.order}" for s in self.sections if s.order == SEGMENTS_ORDER]
        if taken:
            raise CatalogError(f"a report section takes the report's own {', '.join(taken)}")
        own = shipped_folder("templates")
        shadowed = [
            f"{family.name!r}: {s.template!r}"
            for family in self.families
            if family.templates is not None
            for s in family.sections
            if (own / s.template).is_file()
        ]
        if shadowed:
            raise CatalogError(
                f"a family's section partial has the name of one of riskmon's own templates "
                f"({', '.join(shadowed)}): name it after the family"
            )

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

    def for_kind(self, kind: ModelKind) -> Catalog:
        """The families that apply to a model of ``kind``, in their order (checked as part of
        the whole catalog: a rule may compare against a figure a family of another kind
        freezes)."""
        chosen = object.__new__(Catalog)
        chosen.families = tuple(f for f in self.families if kind in f.kinds)
        return chosen

    def compute(self, tables: RunTables) -> tuple[Figures, Held[BinRecord]]:
        """Every figure and bin of a run, family by family (the families of its model's kind),
        held in columns as each family gives them (:func:`~._chunks.hold_computed`)."""
        row_tests = self.row_tests if tables.model.columns.weight else frozenset()
        families = self.for_kind(tables.model.kind).families
        return hold_computed((family.compute(tables) for family in families), row_tests)

    def freeze(self, tables: RunTables) -> list[FigureRecord]:
        """Every figure a baseline freezes, family by family, from the development window's
        tables (the same :class:`RunTables` a run's families read; the families of its model's
        kind)."""
        figures: list[FigureRecord] = []
        for family in self.for_kind(tables.model.kind).families:
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

    def formulas(self, figures: Collection[str]) -> tuple[Formula, ...]:
        """The formulas of every family that stores one of ``figures`` (names), in order; a
        name two families of different kinds declare (``excluded_share``) does not choose
        either when the other's own figures are there."""
        declared = Counter(n for fam in self.families for n in {f.name for f in fam.figures})
        chosen = [
            formula
            for family in self.families
            if any(f.name in figures and declared[f.name] == 1 for f in family.figures)
            for formula in family.formulas
        ]
        return tuple(sorted(chosen, key=_order))

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


def _order(item: Section | Headline | HistoryColumn | Parameter | Formula) -> int:
    return item.order


def _twice(what: str, values: Iterable[object]) -> list[str]:
    """``what`` and each value that occurs more than once in ``values``: an order number or
    an anchor is the families' shared registry, so two families must not take the same one."""
    return [f"{what} {v!r}" for v, k in Counter(values).items() if k > 1]


def load_families(modules: Sequence[str]) -> None:
    """Import each of ``modules`` (the configuration's ``families``) and register its
    ``FAMILY`` in :data:`CATALOG`, once however often it is loaded. A ConfigError naming the
    entry when a module cannot be imported, defines no family, or clashes with the catalog."""
    for i, name in enumerate(modules):
        where = f"families[{i}]"
        try:
            family = getattr(importlib.import_module(name), "FAMILY", None)
        except ImportError as exc:
            raise ConfigError(f"{where}: cannot import {name!r}: {exc}") from None
        if not isinstance(family, Family):
            raise ConfigError(f"{where}: module {name!r} defines no FAMILY (a Family)")
        try:
            CATALOG.register(family)
        except CatalogError as exc:
            raise ConfigError(f"{where}: family {family.name!r} of {name!r}: {exc}") from None


def _families() -> tuple[Family, ...]:
    """The ``FAMILY`` of every public module of this package."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            family = getattr(importlib.import_module(f"{__name__}.{module.name}"), "FAMILY", None)
            if isinstance(family, Family):
                found.append(family)
    return tuple(found)


#: every figure family riskmon knows
CATALOG = Catalog(_families())

__all__ = [
    "CATALOG",
    "REPORT_ANCHORS",
    "SEGMENTS_ORDER",
    "Alerts",
    "BaselineView",
    "Bins",
    "Catalog",
    "CatalogError",
    "Chunk",
    "Computed",
    "Family",
    "FigureSpec",
    "Formula",
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
    "chunks",
    "hold_computed",
    "load_families",
    "mark_row_tests",
    "measured",
    "within_noise",
]
