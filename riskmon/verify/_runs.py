"""The stored run ``riskmon verify`` recomputes, the baseline it was compared with, and what
recomputing it found."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from riskmon.errors import EXIT_USAGE, RiskmonError
from riskmon.store import MetricStore, RunRecord, StoredBaseline
from riskmon.verify._compare import FigureDifference, WindowChange


class NothingToVerify(RiskmonError):
    """No succeeded run of the model on that date, or its baseline is gone."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Verification:
    """What recomputing a stored run found."""

    model: str
    as_of: dt.date
    run_id: int
    compared: int
    differences: list[FigureDifference]
    windows: list[WindowChange] = field(default_factory=list)
    #: the run stored no window counts (it was stored before riskmon kept its provenance)
    windows_unknown: bool = False
    config_change: tuple[str, str] | None = None
    #: the keys whose values differ from the configuration the run stored (empty when it
    #: stored none)
    config_keys: tuple[str, ...] = ()
    code_change: tuple[str, str] | None = None

    @property
    def identical(self) -> bool:
        return not self.differences

    def causes(self) -> list[str]:
        """Why the figures differ, in words (empty when they do not)."""
        if self.identical:
            return []
        out = [f"the source's rows changed: {w.line()}" for w in self.windows if not w.moved]
        out += [f"the windows changed: {w.line()}" for w in self.windows if w.moved]
        if self.windows_unknown:
            out.append("the run stored no window counts: whether the source changed is unknown")
        if self.config_change is not None:
            old, new = self.config_change
            keys = f" ({', '.join(self.config_keys)})" if self.config_keys else ""
            out.append(f"the configuration changed: fingerprint {old[:12]} → {new[:12]}{keys}")
        if self.code_change is not None:
            old, new = self.code_change
            out.append(f"the code changed: riskmon {old} → {new}")
        if not out:
            out.append(
                "neither the source's counts, the configuration nor riskmon's version changed"
            )
        return out


def stored_run(store: MetricStore, model: str, as_of: dt.date) -> RunRecord:
    """The succeeded run of ``model`` as of ``as_of``; NothingToVerify otherwise."""
    run = store.run(model, as_of)
    if run is None or run.status != "succeeded":
        state = "no run" if run is None else f"its run {run.status}"
        raise NothingToVerify(f"model {model!r} as of {as_of}: {state}, nothing to verify")
    return run


def run_baseline(store: MetricStore, run: RunRecord) -> StoredBaseline:
    """The baseline ``run`` was compared with."""
    baseline = None if run.baseline_id is None else store.baseline(run.baseline_id)
    if baseline is None:
        raise NothingToVerify(
            f"model {run.model!r} as of {run.as_of}: the run's baseline is not in the store"
        )
    return baseline
