"""Alert thresholds: the levels every rule takes from the configuration."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from riskmon.config._base import Strict as _Strict
from riskmon.config._register import DOCUMENTATION_KEYS, Documentation, Documented
from riskmon.errors import ConfigError


class Band(Documented):
    """Amber and red levels of an index where higher is worse (PSI, CSI)."""

    amber: float = Field(default=0.10, ge=0)
    red: float = Field(default=0.25, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.red < self.amber:
            raise ValueError(f"expected amber <= red, got amber {self.amber} and red {self.red}")
        return self


class Drop(Documented):
    """Amber and red levels of a relative drop against the baseline (0.05 = 5 % lower)."""

    amber: float = Field(default=0.05, ge=0)
    red: float = Field(default=0.10, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Drop:
        if self.red < self.amber:
            raise ValueError(f"expected amber <= red, got amber {self.amber} and red {self.red}")
        return self


class PValueLevels(Documented):
    """Traffic lights on a test's p-value: AMBER below ``amber``, RED below ``red``."""

    amber: float = Field(default=0.05, gt=0, lt=1)
    red: float = Field(default=0.001, gt=0, lt=1)

    @model_validator(mode="after")
    def _ordered(self) -> PValueLevels:
        if self.red > self.amber:
            raise ValueError(f"expected red <= amber, got amber {self.amber} and red {self.red}")
        return self


class Thresholds(_Strict):
    """Alert thresholds; the defaults are the industry's usual bands."""

    #: KS outside [low, high] is red
    ks: tuple[float, float] = (0.20, 0.75)
    #: score PSI (current population against the baseline)
    psi: Band = Band()
    #: CSI of every characteristic
    csi: Band = Band()
    #: relative drop of AUC and of Gini against the baseline's
    auc_drop: Drop = Drop()
    gini_drop: Drop = Drop()
    #: relative drop of a characteristic's IV against the baseline's
    iv_drop: Drop = Drop(amber=0.25, red=0.50)
    #: judge an AUC or Gini drop only when the baseline lies outside the current confidence
    #: interval (a smaller drop is sampling noise, and GREEN)
    significant_drops_only: bool = False
    #: the most severe status of a figure riskmon finds within sampling noise (a PSI or CSI
    #: below its critical value, a drop whose baseline lies in the current confidence interval)
    within_noise: Literal["green", "amber", "red"] = "amber"
    #: control the false discoveries among the many tests of one rule (its segments and
    #: characteristics): the p-value rules judge Benjamini-Hochberg adjusted p-values, and a
    #: PSI or CSI is within noise unless its adjusted noise p-value is significant
    multiple_testing: Literal["none", "benjamini_hochberg"] = "none"
    #: a rule turns RED only when it was RED by its levels in this many runs in a row (this
    #: one and the previous ones of the model); until then AMBER, and says so
    consecutive: int = Field(default=1, ge=1, le=24)
    #: judge the drop rules and the ECB AUC test on a performance cohort that overlaps the
    #: development window (in-sample: its figures are not out-of-sample evidence)
    judge_in_sample: bool = False
    #: below this baseline IV a characteristic is useless (Siddiqi): its IV drop is not judged
    min_baseline_iv: float = Field(default=0.02, ge=0)
    #: relative change (up or down) of the current population's size against the previous run
    volume_change: Band = Band(amber=0.25, red=0.50)
    #: share of a population's loans left out for invalid data (no score, an invalid weight)
    excluded_share: Band = Band(amber=0.01, red=0.05)
    #: share of a population's loans that repeat the id and score date of another
    duplicate_ids: Band = Band(amber=0.001, red=0.01)
    #: change of a characteristic's missing rate against the baseline, in rate points
    missing_rate_change: Band = Band(amber=0.05, red=0.10)
    #: a segment with fewer loans than this in the population a rule judges (current, or the
    #: performance cohort) is reported, not judged by that rule
    min_segment_loans: int = Field(default=100, ge=0)
    #: fewer bads than this in the performance cohort: discrimination is not evaluable
    min_bads: int = Field(default=30, ge=1)
    #: calibration tests of under-estimation (observed default rate above the PD), per grade
    #: and for the portfolio: p-value levels (OeNB traffic lights)
    calibration: PValueLevels = PValueLevels()
    #: the same tests for over-estimation (observed rate below the PD): milder by default
    over_estimation: PValueLevels = PValueLevels(amber=0.01, red=0.0001)
    #: the ECB test of the current AUC against the initial AUC: p-value levels
    auc_test: PValueLevels = PValueLevels()
    #: DeLong's paired test that a challenger ranks better than the champion (two-sided p,
    #: judged only when the challenger's AUC is the higher)
    challenger: PValueLevels = PValueLevels()
    #: the ECB test that the grades are more concentrated than at the baseline: p-value levels
    concentration: PValueLevels = PValueLevels()
    #: relative change (up or down) of the migration matrix's upper or lower weighted bandwidth
    #: against the baseline's (0.25 = 25 % wider or narrower)
    migration_bandwidth: Band = Band(amber=0.25, red=0.50)
    #: the ECB stability test, reversed: a cell two or more grades off the diagonal holding
    #: significantly more obligors than its neighbour nearer the diagonal, at these levels of
    #: 1 − p
    migration_stability: PValueLevels = PValueLevels()
    #: change of the approval rate at the cut-off against the baseline's, in rate points
    approval_rate_change: Band = Band(amber=0.05, red=0.10)
    #: rise of the bad rate among accepted loans against the baseline's, relative (0.25 = +25 %)
    accepted_bad_rate_rise: Band = Band(amber=0.25, red=0.50)

    #: the levels of rules that have no key of their own above, by rule name (a family kept
    #: outside riskmon): e.g. ``{score_shift: {amber: 0.5, red: 1.0}}``; each level replaces
    #: the one the rule declares, and a name no rule has is refused when a run is judged
    rules: dict[str, dict[str, float]] = Field(default_factory=dict)
    #: the documentation of ``ks`` (given as ``ks: {low, high, rationale, source, approved}``)
    ks_documentation: Documentation | None = None
    #: the documentation of each ``rules`` entry (given in the entry, beside its levels)
    documented_rules: dict[str, Documentation] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _documentation(cls, value: Any) -> Any:
        """Take the documentation given beside plain levels (``ks``, ``rules.<name>``) into
        fields of its own, so that the levels stay numbers."""
        if not isinstance(value, dict):
            return value
        value = dict(value)
        ks = value.get("ks")
        if isinstance(ks, dict):
            unknown = sorted(set(ks) - {"low", "high", *DOCUMENTATION_KEYS})
            if unknown:
                raise ValueError(
                    f"ks: unknown key(s) {unknown} (known: low, high, rationale, source, approved)"
                )
            value["ks"] = (ks.get("low"), ks.get("high"))
            value["ks_documentation"] = {k: ks[k] for k in DOCUMENTATION_KEYS if k in ks}
        rules = value.get("rules")
        if isinstance(rules, dict):
            documented = dict(value.get("documented_rules") or {})
            levels = {}
            for name, entry in rules.items():
                if isinstance(entry, dict):
                    docs = {k: entry[k] for k in DOCUMENTATION_KEYS if k in entry}
                    if docs:
                        documented[name] = docs
                    entry = {k: v for k, v in entry.items() if k not in DOCUMENTATION_KEYS}
                levels[name] = entry
            value["rules"], value["documented_rules"] = levels, documented
        return value

    def levels_of(self, rule: str, defaults: dict[str, float]) -> dict[str, float]:
        """The levels of ``rule``: its ``defaults``, each replaced by the one ``rules`` sets."""
        unknown = sorted(set(self.rules.get(rule, {})) - set(defaults))
        if unknown:
            raise ConfigError(
                f"thresholds.rules.{rule}: unknown level(s) {unknown} (known: {sorted(defaults)})"
            )
        return defaults | self.rules.get(rule, {})

    @field_validator("rules")
    @classmethod
    def _finite_levels(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        bad = [
            f"{r}.{k}"
            for r, levels in value.items()
            for k, v in levels.items()
            if not math.isfinite(v)
        ]
        if bad:
            raise ValueError(f"expected finite levels, got {', '.join(bad)} not finite")
        return value

    @field_validator("ks")
    @classmethod
    def _ks_band(cls, value: tuple[float, float]) -> tuple[float, float]:
        low, high = value
        if not 0 <= low < high <= 1:
            raise ValueError(f"expected [low, high] with 0 <= low < high <= 1, got {list(value)}")
        return value
