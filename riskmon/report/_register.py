"""The threshold register: every rule's levels with their rationale, source and approval.

Which configuration key a rule's levels come from is found by reading the rule's own
``levels`` function on the thresholds (:func:`rule_keys`): the first key it reads that holds
documented levels (``thresholds.psi``, ``thresholds.ks``, ``thresholds.rules.<rule>``) is the
rule's key, and its documentation is the rule's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, cast

from riskmon.config import Documentation, Documented, ModelConfig, Thresholds
from riskmon.figures import CATALOG, Rule

#: how levels left at riskmon's defaults read in the register
DEFAULT = "default"
#: how configured levels without documentation read
UNDOCUMENTED = "configured, not documented"


class _Reading:
    """The thresholds, noting each key a rule's ``levels`` reads."""

    def __init__(self, thresholds: Thresholds) -> None:
        self._thresholds = thresholds
        self.keys: list[str] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._thresholds, name)
        if name == "levels_of":

            def levels_of(rule: str, defaults: dict[str, float]) -> dict[str, float]:
                self.keys.append(f"rules.{rule}")
                return cast(dict[str, float], value(rule, defaults))

            return levels_of
        self.keys.append(name)
        return value


def rule_keys(rule: Rule, thresholds: Thresholds) -> list[str]:
    """The keys under ``thresholds`` that ``rule``'s levels read, in the order it reads them."""
    reading = _Reading(thresholds)
    rule.levels(cast(Thresholds, reading))
    return list(dict.fromkeys(reading.keys))


def _documentation(key: str, thresholds: Thresholds) -> tuple[Documentation | None, bool]:
    """The documentation of ``key`` and whether its levels are riskmon's defaults."""
    defaults = Thresholds()
    if key.startswith("rules."):
        name = key.removeprefix("rules.")
        return thresholds.documented_rules.get(name), name not in thresholds.rules
    if key == "ks":
        return thresholds.ks_documentation, thresholds.ks == defaults.ks
    value = getattr(thresholds, key)
    if isinstance(value, Documented):
        default = getattr(defaults, key)
        levels = value.model_dump(exclude={"rationale", "source", "approved"})
        same = levels == default.model_dump(exclude={"rationale", "source", "approved"})
        return value.documentation, same
    return None, value == getattr(defaults, key)


def _documented_key(keys: list[str], thresholds: Thresholds) -> str:
    for key in keys:
        if key == "ks" or key.startswith("rules."):
            return key
        if isinstance(getattr(thresholds, key), Documented):
            return key
    return keys[0] if keys else ""


@dataclass(frozen=True)
class RegisterEntry:
    """One rule in the register."""

    rule: str
    figure: str
    #: the configuration key of its levels (``thresholds.psi``)
    key: str
    levels: str
    rationale: str | None
    source: str | None
    approved: str | None
    #: the levels are riskmon's defaults, and undocumented
    default: bool

    @property
    def status(self) -> str:
        """``default``, ``configured, not documented`` or ``documented``."""
        if self.rationale or self.source or self.approved:
            return "documented"
        return DEFAULT if self.default else UNDOCUMENTED

    def fields(self) -> Iterator[tuple[str, str]]:
        """The register's fields as they print: each given field, or the status."""
        if self.status != "documented":
            yield "status", self.status
            return
        for name in ("rationale", "source", "approved"):
            value = getattr(self, name)
            yield name, value if value else "not given"


def register_entry(rule: Rule, thresholds: Thresholds, levels: str | None = None) -> RegisterEntry:
    """``rule``'s line in the register; ``levels`` as the run stored them (default: as the
    thresholds set them)."""
    keys = rule_keys(rule, thresholds)
    key = _documented_key(keys, thresholds)
    docs, default = _documentation(key, thresholds) if key else (None, True)
    approved = docs.approved if docs is not None else None
    return RegisterEntry(
        rule=rule.name,
        figure=rule.figure,
        key=f"thresholds.{key}" if key else "(none)",
        levels=levels if levels is not None else rule.describe(rule.levels(thresholds)),
        rationale=docs.rationale if docs is not None else None,
        source=docs.source if docs is not None else None,
        approved=f"by {approved.by} on {approved.on}" if approved is not None else None,
        default=default and not (docs is not None and docs.given),
    )


def threshold_register(
    model: ModelConfig, *, only: Collection[str] | None = None
) -> list[RegisterEntry]:
    """The register of every rule that applies to ``model``'s kind (of the rules named in
    ``only``, when given), in catalog order."""
    return [
        register_entry(rule, model.thresholds)
        for rule in CATALOG.for_kind(model.kind).rules
        if only is None or rule.name in only
    ]
