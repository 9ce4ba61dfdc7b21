"""Evaluate: alert rules turn a run's figures into GREEN / AMBER / RED, or NOT_EVALUABLE.

Every alert keeps the value it judged and the thresholds it used, so a stored run says why it
was red even after the configuration changed. The rules (thresholds under ``thresholds`` in the
configuration; defaults in brackets):

========================  =====================================================================
``ks_band``               KS of the performance cohort outside ``ks`` [0.20, 0.75]: RED
``psi``                   score PSI, current population vs baseline: >= amber [0.10] AMBER,
                          >= red [0.25] RED
``csi``                   the same bands (``csi``) for every characteristic
``auc_drop``              relative drop of AUC vs the baseline's, ``(base − now) / base``:
                          >= amber [5 %] AMBER, >= red [10 %] RED
``gini_drop``             the same for Gini (``gini_drop``)
``iv_drop``               the same for each characteristic's IV (``iv_drop``) [25 %, 50 %];
                          not judged when the baseline IV is below ``min_baseline_iv`` [0.02]
``volume_change``         ``|now / previous − 1|`` of the current population's size vs the
                          previous run [25 %, 50 %]
``missing_rate_change``   ``|now − baseline|`` of a characteristic's missing rate, in rate
                          points [0.05, 0.10]
========================  =====================================================================

With ``significant_drops_only``, an AUC or Gini drop whose baseline value lies inside the
current confidence interval is GREEN (said so in its message). KS, AUC, Gini and IV rules are
NOT_EVALUABLE when the performance cohort has fewer than
``min_bads`` [30] bads, or when a figure is not available; the reason is the alert's message.
Score rules (KS, AUC, Gini, PSI) are evaluated for the whole population and for every segment,
characteristic rules for the whole population.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from riskmon.config import Band, Drop, ModelConfig
from riskmon.metrics import Binning
from riskmon.records import AlertRecord, FigureRecord, Figures, Status
from riskmon.store import RunRecord, StoredBaseline

GREEN, AMBER, RED, NOT_EVALUABLE = Status.GREEN, Status.AMBER, Status.RED, Status.NOT_EVALUABLE


_NAMES = {"auc": "AUC", "gini": "Gini", "iv": "IV"}


def _dropped(change: float, levels: Drop) -> Status:
    return RED if change >= levels.red else AMBER if change >= levels.amber else GREEN


def _grid_reason(label: str, value: float, how: str) -> str:
    return (
        f"{label} {_fmt(value)} was ranked on the baseline's score grid and may be {how} "
        f"(scores outside the baseline's range share its end cells), enough to change the "
        f"verdict: not judged. Re-freeze the baseline, or raise bins.max_distinct_scores"
    )


def _banded(value: float, band: Band) -> Status:
    return RED if value >= band.red else AMBER if value >= band.amber else GREEN


def _fmt(value: float) -> str:
    return f"{value:.4f}"


def _where(variable: str, segment: str) -> str:
    parts = [p for p in (variable and f"of {variable}", segment and f"in {segment}") if p]
    return (" " + " ".join(parts)) if parts else ""


class _Rules:
    def __init__(
        self,
        model: ModelConfig,
        figures: Figures,
        baseline: StoredBaseline,
        previous: RunRecord | None,
        n_current: int,
    ):
        self.t = model.thresholds
        self.figures = figures
        self.baseline = baseline
        self.previous = previous
        self.n_current = n_current
        self.alerts: list[AlertRecord] = []

    def add(
        self,
        rule: str,
        status: Status,
        value: float | None,
        thresholds: Mapping[str, object],
        message: str,
        variable: str = "",
        segment: str = "",
    ) -> None:
        self.alerts.append(
            AlertRecord(rule, status, value, dict(thresholds), message, variable, segment)
        )

    def too_few_bads(self, segment: str) -> str | None:
        n_bads = self.figures.get("n_bads", "performance", segment=segment)
        count = 0 if n_bads is None or n_bads.value is None else int(n_bads.value)
        if count < self.t.min_bads:
            return (
                f"only {count} bads in the performance cohort{_where('', segment)} "
                f"(minimum {self.t.min_bads})"
            )
        return None

    def ks_band(self, segment: str) -> None:
        low, high = self.t.ks
        thresholds = {"low": low, "high": high, "min_bads": self.t.min_bads}
        few = self.too_few_bads(segment)
        ks = self.figures.get("ks", "performance", segment=segment)
        if few or ks is None or ks.value is None:
            reason = few or (ks.reason if ks else None) or "KS not available"
            self.add("ks_band", NOT_EVALUABLE, None, thresholds, reason, segment=segment)
            return
        bound = ks.params.get("ks_error_bound")
        if bound is not None and (low <= ks.value <= high) != (low <= ks.value + bound <= high):
            self.add(
                "ks_band",
                NOT_EVALUABLE,
                ks.value,
                thresholds | {"ks_error_bound": bound},
                _grid_reason("KS", ks.value, f"up to {bound:.4f} higher"),
                segment=segment,
            )
            return
        inside = low <= ks.value <= high
        side = "below" if ks.value < low else "above"
        message = (
            f"KS{_where('', segment)} {_fmt(ks.value)} is within {low:g}-{high:g}"
            if inside
            else f"KS{_where('', segment)} {_fmt(ks.value)} is {side} the band {low:g}-{high:g}"
        )
        self.add(
            "ks_band", GREEN if inside else RED, ks.value, thresholds, message, segment=segment
        )

    def drop(
        self,
        rule: str,
        name: str,
        levels: Drop,
        *,
        population: str = "performance",
        variable: str = "",
        segment: str = "",
    ) -> None:
        thresholds = {"amber": levels.amber, "red": levels.red, "min_bads": self.t.min_bads}
        label = f"{_NAMES[name]}{_where(variable, segment)}"
        few = self.too_few_bads(segment)
        now = self.figures.get(name, population, variable, segment)
        base = self.baseline.figure(name, variable, segment)
        if few or now is None or now.value is None:
            reason = few or (now.reason if now else None) or f"{label} not available"
            self.add(rule, NOT_EVALUABLE, None, thresholds, reason, variable, segment)
            return
        if base is None or base.value is None or base.value <= 0:
            self.add(
                rule,
                NOT_EVALUABLE,
                None,
                thresholds,
                f"baseline {label} not available or not positive",
                variable,
                segment,
            )
            return
        if name == "iv" and base.value < self.t.min_baseline_iv:
            thresholds["min_baseline_iv"] = self.t.min_baseline_iv
            self.add(
                rule,
                NOT_EVALUABLE,
                None,
                thresholds,
                f"baseline {label} {_fmt(base.value)} is below {self.t.min_baseline_iv:g} "
                f"(useless): a drop from it means nothing",
                variable,
                segment,
            )
            return
        change = (base.value - now.value) / base.value
        status = _dropped(change, levels)
        spread = self.grid_spread(name, population, segment)
        if spread:
            extremes = {
                _dropped((base.value - v) / base.value, levels)
                for v in (now.value - spread, now.value + spread)
            }
            if len(extremes | {status}) > 1:
                self.add(
                    rule,
                    NOT_EVALUABLE,
                    change,
                    thresholds | {"grid_error_bound": spread},
                    _grid_reason(label, now.value, f"off by up to {spread:.4f}"),
                    variable,
                    segment,
                )
                return
        thresholds |= {"baseline": base.value, "current": now.value}
        low, high = now.params.get("ci_low"), now.params.get("ci_high")
        noise = ""
        if low is not None and high is not None:
            within = bool(low <= base.value <= high)
            thresholds["baseline_within_ci"] = within
            if within and status != GREEN:
                level = now.params.get("confidence_level", 0.95)
                noise = f" (the baseline lies within the current {level:.0%} confidence interval)"
                if self.t.significant_drops_only:
                    status = GREEN
                    noise = f" (not significant: the baseline lies within the current {level:.0%} "
                    noise += "confidence interval)"
        message = (
            f"{label} {_fmt(now.value)} vs baseline {_fmt(base.value)}: "
            f"{abs(change):.1%} {'lower' if change >= 0 else 'higher'}{noise}"
        )
        self.add(rule, status, change, thresholds, message, variable, segment)

    def grid_spread(self, name: str, population: str, segment: str) -> float:
        """How far the score grid can have moved an AUC (or Gini, twice as far); 0 if exact."""
        if name not in ("auc", "gini"):
            return 0.0
        auc = self.figures.get("auc", population, segment=segment)
        bound = auc.params.get("auc_error_bound") if auc is not None else None
        return 0.0 if bound is None else float(bound) * (2.0 if name == "gini" else 1.0)

    def stability(self, rule: str, band: Band, variable: str, segment: str = "") -> None:
        thresholds: dict[str, object] = {"amber": band.amber, "red": band.red}
        figure = self.figures.get(rule, "current", variable, segment)
        name = "PSI" if rule == "psi" else "CSI"
        if figure is None or figure.value is None:
            reason = (figure.reason if figure else None) or f"{name} not available"
            self.add(rule, NOT_EVALUABLE, None, thresholds, reason, variable, segment)
            return
        critical = figure.params.get("critical_value")
        if critical is not None:
            thresholds["noise_critical_value"] = critical
        status = _banded(figure.value, band)
        noise = (
            " (within sampling noise)" if critical is not None and figure.value <= critical else ""
        )
        where = _where(variable if rule == "csi" else "", segment)
        message = f"{name}{where} {_fmt(figure.value)}{noise}"
        self.add(rule, status, figure.value, thresholds, message, variable, segment)

    def volume(self) -> None:
        band = self.t.volume_change
        thresholds = {"amber": band.amber, "red": band.red}
        previous = self.previous.n_current if self.previous is not None else None
        if not previous:
            self.add(
                "volume_change",
                NOT_EVALUABLE,
                None,
                thresholds,
                "no earlier run with loans to compare the volume with",
            )
            return
        change = self.n_current / previous - 1
        thresholds |= {"previous": previous, "current": self.n_current}
        self.add(
            "volume_change",
            _banded(abs(change), band),
            change,
            thresholds,
            f"{self.n_current} loans vs {previous} in the previous run ({change:+.1%})",
        )

    def missing_rate(self, variable: str) -> None:
        band = self.t.missing_rate_change
        thresholds: dict[str, object] = {"amber": band.amber, "red": band.red}
        now = self.figures.get("missing_rate", "current", variable)
        base = self.baseline_missing_rate(variable)
        if now is None or now.value is None or base is None:
            self.add(
                "missing_rate_change",
                NOT_EVALUABLE,
                None,
                thresholds,
                f"missing rate of {variable} not available",
                variable,
            )
            return
        change = now.value - base
        thresholds |= {"baseline": base, "current": now.value}
        self.add(
            "missing_rate_change",
            _banded(abs(change), band),
            change,
            thresholds,
            f"missing rate of {variable} {now.value:.2%} vs baseline {base:.2%}",
            variable,
        )

    def baseline_missing_rate(self, variable: str) -> float | None:
        return baseline_missing_rate(self.baseline, variable)


def baseline_missing_rate(baseline: StoredBaseline, variable: str) -> float | None:
    """The share of the baseline's loans (whole population) in ``variable``'s missing bin."""
    var = baseline.variables.get(variable)
    if var is None:
        return None
    missing_index = Binning.from_dict(var.binning).missing_index
    bins = [b for b in var.bins if b.segment == ""]
    total = sum(b.total for b in bins)
    missing = sum(b.total for b in bins if b.bin_index == missing_index)
    return missing / total if total > 0 else None


def evaluate(
    model: ModelConfig,
    figures: Sequence[FigureRecord],
    baseline: StoredBaseline,
    *,
    previous: RunRecord | None,
    n_current: int,
) -> list[AlertRecord]:
    """Every alert rule on a run's figures."""
    rules = _Rules(model, Figures(figures), baseline, previous, n_current)
    t = model.thresholds
    for segment in rules.figures.segments():
        rules.ks_band(segment)
        rules.drop("auc_drop", "auc", t.auc_drop, segment=segment)
        rules.drop("gini_drop", "gini", t.gini_drop, segment=segment)
        rules.stability("psi", t.psi, "score", segment)
    for characteristic in model.characteristics:
        rules.stability("csi", t.csi, characteristic.name)
        rules.drop("iv_drop", "iv", t.iv_drop, variable=characteristic.name)
        rules.missing_rate(characteristic.name)
    rules.volume()
    return rules.alerts
