"""The demo's application scorecard as a points table, and its underwriters' overrides.

The scorecard adds the points of eight application characteristics' attributes to
:data:`BASE_POINTS` (:data:`ATTRIBUTES`, roughly 53 points per unit of the book's true
log-odds, so the odds double about every 37 points); the demo's configuration lists the same
attributes and points, so its characteristic analysis adds up to the observed shift of the mean
score. ``delinquencies_24m`` has a special value, :data:`NO_RECORD` ("no bureau record"), with
points of its own: a growing share of loans comes without a bureau record once the population
drifts (a feed that degrades).

Underwriters override the cut-off: they accept :data:`LOW_SIDE` of the loans it declines and
decline :data:`HIGH_SIDE` of those it accepts; from ``overrides_from`` the broker channel's
low-side overrides grow to :data:`BROKER_LOW_SIDE` (those loans, below the cut-off, default
more than the accepted ones).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

#: the score of a loan with 0 points in every attribute
BASE_POINTS = 400
#: the cut-off of the demo's configuration: loans below it are declined by policy
CUTOFF = 560
#: "no bureau record" in ``delinquencies_24m``
NO_RECORD = -999
#: the share of loans without a bureau record, and what the drift adds to it
NO_RECORD_SHARE, NO_RECORD_DRIFT = 0.03, 0.07
#: low-side (of policy declines) and high-side (of policy accepts) override shares
LOW_SIDE, HIGH_SIDE, BROKER_LOW_SIDE = 0.06, 0.02, 0.35


def _bins(*bins: tuple[float | None, int]) -> list[dict[str, Any]]:
    """Numeric attributes from (upper edge, points) pairs, the last edge None (open)."""
    return [{"points": p} if u is None else {"upper": u, "points": p} for u, p in bins]


#: each characteristic's attributes and points, as the configuration lists them
ATTRIBUTES: list[dict[str, Any]] = [
    {
        "name": "income",
        "kind": "numeric",
        "bins": _bins((20000, 0), (35000, 16), (60000, 31), (None, 50)),
    },
    {
        "name": "age",
        "kind": "numeric",
        "bins": _bins((25, 0), (35, 7), (50, 14), (None, 22)),
    },
    {
        "name": "debt_to_income",
        "kind": "numeric",
        "bins": _bins((0.2, 36), (0.35, 24), (0.5, 14), (None, 0)),
    },
    {
        "name": "n_inquiries",
        "kind": "numeric",
        "bins": _bins((0, 33), (2, 25), (4, 16), (None, 0)),
    },
    {
        "name": "delinquencies_24m",
        "kind": "numeric",
        "bins": _bins((0, 36), (1, 21), (None, 0)),
        "special": [{"value": NO_RECORD, "points": 18}],
    },
    {
        "name": "region",
        "kind": "categorical",
        "attributes": {
            "capital": 32,
            "west": 27,
            "south": 24,
            "hills": 21,
            "centre": 16,
            "north": 8,
            "coast": 8,
            "east": 5,
            "other": 0,
        },
    },
    {
        "name": "housing",
        "kind": "categorical",
        "attributes": {"own": 45, "mortgage": 37, "family": 13, "rent": 0},
    },
    {
        "name": "employment_type",
        "kind": "categorical",
        "attributes": {
            "retired": 59,
            "employed": 56,
            "self_employed": 43,
            "student": 21,
            "unemployed": 0,
        },
    },
]


def _points(values: pd.Series, attributes: dict[str, Any]) -> np.ndarray:
    """Each loan's points in one characteristic (right-closed bins, the special value first)."""
    if attributes["kind"] == "categorical":
        table = attributes["attributes"]
        mapped = values.map(table).fillna(table.get("other", 0))
        as_points: np.ndarray = mapped.to_numpy(dtype=np.float64)
        return as_points
    bins = attributes["bins"]
    x = values.to_numpy(dtype=np.float64)
    uppers = [b["upper"] for b in bins if "upper" in b]
    by_bin = np.asarray([b["points"] for b in bins], dtype=np.float64)
    points: np.ndarray = by_bin[np.searchsorted(uppers, x, side="left")]
    for special in attributes.get("special", ()):
        points[x == special["value"]] = special["points"]
    return points


def score(frame: pd.DataFrame) -> np.ndarray:
    """The scorecard's points of each loan: :data:`BASE_POINTS` and its attributes' points."""
    total: np.ndarray = np.full(len(frame), float(BASE_POINTS))
    for attributes in ATTRIBUTES:
        total += _points(frame[attributes["name"]], attributes)
    return total


def _grown(dates: pd.Series, start: dt.date | None, months: float = 6.0) -> np.ndarray:
    """0 before ``start``, growing to 1 over ``months`` months."""
    if start is None:
        return np.zeros(len(dates))
    days = (pd.to_datetime(dates) - pd.Timestamp(start)).dt.days.to_numpy(dtype=np.float64)
    grown: np.ndarray = np.clip(days / (30.4375 * months), 0.0, 1.0)
    return grown


def apply(
    frame: pd.DataFrame, *, seed: int, drift_from: dt.date | None, overrides_from: dt.date | None
) -> pd.DataFrame:
    """``frame`` with the bureau's missing records, ``app_points`` scored by the points table
    and the underwriters' ``decision`` (accept / decline). Its own random generator, so the
    rest of the book is the same."""
    rng = np.random.default_rng([seed, 2])
    n = len(frame)
    no_record = NO_RECORD_SHARE + NO_RECORD_DRIFT * _grown(frame["score_date"], drift_from)
    delinquencies = frame["delinquencies_24m"].to_numpy(dtype=np.int64).copy()
    delinquencies[rng.random(n) < no_record] = NO_RECORD
    frame = frame.assign(delinquencies_24m=delinquencies)
    points = score(frame)
    declined = points < CUTOFF
    broker = frame["channel"].to_numpy() == "broker"
    grown = _grown(frame["score_date"], overrides_from) * broker
    low_side = declined & (rng.random(n) < LOW_SIDE + (BROKER_LOW_SIDE - LOW_SIDE) * grown)
    high_side = ~declined & (rng.random(n) < HIGH_SIDE)
    accepted = (~declined & ~high_side) | low_side
    return frame.assign(
        app_points=points.astype(np.int64), decision=np.where(accepted, "accept", "decline")
    )
