"""Synthetic books of defaulted facilities, for the demo's LGD and CCF models.

Each facility defaulted; its row is dated by the day that decides its observation period
(``date_column``: for the LGD book the day its recovery process closed, for the CCF book the
day it defaulted). The model estimated its LGD or CCF a year before default (``<kind>_estimate``,
4 decimals); the facilities fall in segments (``segment_column``), each with its own level of
estimates; the exposure at default (``ead``) is lognormal.

The realised value is drawn from a beta distribution whose mean is the estimate (a + b =
``CONCENTRATION``: the U-shape of real recoveries and drawdowns, most facilities near 0 or 1),
plus a little normal noise, so that some fall below 0 (a recovery above the exposure; a limit
paid down before default) or above 1 (costs beside the exposure; a drawing beyond the limit),
as in real books. So the
model is calibrated — until ``shock_from``: the ``shock_segment``'s facilities dated from then
on realise ``shock`` × their estimate on average (for the LGD book: collateral worth less than
when it was valued). In the latest ``open_months`` a share ``open_share`` of recoveries are
still open (realised NULL); a facility now and then has no estimate (NULL). With ``grades``,
the model's grade of each facility (``<kind>_grade``), its estimate's place on the grade scale.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: the beta distribution's a + b: lower is more U-shaped
CONCENTRATION = 1.5
#: the standard deviation of the normal noise added to the beta draw
SPREAD = 0.03


@dataclass(frozen=True)
class Segment:
    """A segment of facilities: its share of the book, and its estimates' mean and spread."""

    name: str
    share: float
    mean: float
    sd: float


@dataclass(frozen=True)
class FacilitySpec:
    """What to generate: ``per_month`` facilities a month dated from ``start`` to ``end``."""

    kind: str  # "lgd" or "ccf": the estimate's and realised value's column prefix
    start: dt.date
    end: dt.date
    per_month: int
    segments: tuple[Segment, ...]
    date_column: str
    segment_column: str
    seed: int = 0
    shock_segment: str | None = None
    shock_from: dt.date | None = None
    shock: float = 1.6
    #: the share of the latest ``open_months``' facilities still in recovery
    open_share: float = 0.0
    open_months: int = 3
    #: the share of facilities without an estimate
    missing_estimate: float = 0.004
    #: the upper edges of the model's grades over its estimate (``<kind>_grade``: G1, G2, …,
    #: the last grade open); none: no grade column
    grades: tuple[float, ...] = ()
    #: the estimate's downturn add-on: with one, ``<kind>_estimate_without_downturn`` is the
    #: estimate less it (at least 1 %)
    downturn_addon: float = 0.0


def generate_facilities(spec: FacilitySpec) -> pd.DataFrame:
    """One row per facility, in date order."""
    rng = np.random.default_rng(spec.seed)
    days = pd.date_range(spec.start, spec.end, freq="D").to_numpy()
    n = spec.per_month * max(1, round(len(days) / 30.4))
    dated = np.sort(rng.choice(days, size=n))
    shares = np.array([s.share for s in spec.segments])
    which = rng.choice(len(spec.segments), size=n, p=shares / shares.sum())
    means = np.array([s.mean for s in spec.segments])[which]
    sds = np.array([s.sd for s in spec.segments])[which]
    estimate = np.clip(means + rng.normal(0.0, 1.0, n) * sds, 0.02, 0.95)
    mean = estimate.copy()
    names = np.array([s.name for s in spec.segments])[which]
    if spec.shock_from is not None:
        hit = (names == spec.shock_segment) & (dated >= np.datetime64(spec.shock_from))
        mean[hit] = np.minimum(mean[hit] * spec.shock, 0.95)
    realised = rng.beta(mean * CONCENTRATION, (1.0 - mean) * CONCENTRATION)
    realised += rng.normal(0.0, SPREAD, n)  # some below 0, some above 1; the mean unchanged
    recent = dated > np.datetime64(spec.end) - np.timedelta64(30 * spec.open_months, "D")
    still_open = recent & (rng.random(n) < spec.open_share)
    frame = pd.DataFrame(
        {
            "facility_id": np.arange(1, n + 1),
            spec.date_column: pd.to_datetime(dated).date,
            spec.segment_column: names,
            "ead": np.round(rng.lognormal(9.5, 0.9, n), 2),
            f"{spec.kind}_estimate": pd.array(np.round(estimate, 4), dtype="Float64"),
            f"{spec.kind}_realised": pd.array(np.round(realised, 4), dtype="Float64"),
        }
    )
    if spec.grades:
        grade = np.searchsorted(np.asarray(spec.grades), estimate, side="left") + 1
        frame[f"{spec.kind}_grade"] = [f"G{g}" for g in grade]
    frame.loc[still_open, f"{spec.kind}_realised"] = pd.NA
    frame.loc[rng.random(n) < spec.missing_estimate, f"{spec.kind}_estimate"] = pd.NA
    if spec.downturn_addon:
        estimated = frame[f"{spec.kind}_estimate"]
        without = (estimated - spec.downturn_addon).clip(lower=0.01).round(4)
        frame[f"{spec.kind}_estimate_without_downturn"] = without.astype("Float64")
    return frame
