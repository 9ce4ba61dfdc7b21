"""Legal but degenerate books of loans, and models with every optional feature on or off, for
the matrix test that no legal data fails a run (tests/run/test_legal_data_matrix.py).

A book has three populations, each in its own window of a model run as of :data:`AS_OF` with a
six-month performance window: the baseline (development window, January to March 2024), the
performance cohort (June 2024) and the current population (December 2024). The same obligors
are scored in June and December, so the migration matrix has obligors at both ends. Each
population is drawn healthy, then one :data:`CASES` entry may make one of them degenerate.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from riskmon.config import ModelConfig, parse_config

AS_OF = dt.date(2024, 12, 31)
#: each population's window (dates inclusive) for a run as of AS_OF
WINDOWS = {
    "baseline": (dt.date(2024, 1, 1), dt.date(2024, 3, 31)),
    "performance": (dt.date(2024, 6, 1), dt.date(2024, 6, 30)),
    "current": (dt.date(2024, 12, 1), dt.date(2024, 12, 31)),
}
POPULATIONS = tuple(WINDOWS)
#: the rating column's grades, best first: a PD of exactly 0 (guaranteed) is SAFE, of exactly
#: 1 (in default) DEF, the others A to E by the PD upper edges GRADE_EDGES (the master scale)
GRADE_ORDER = ["SAFE", "A", "B", "C", "D", "E", "DEF"]
GRADE_EDGES = [0.03, 0.06, 0.1, 0.2]
CHANNELS = np.array(["web", "branch", "phone"], dtype=object)


def _grade(pd_score: np.ndarray) -> np.ndarray:
    scale = np.array(GRADE_ORDER[1:-1], dtype=object)[np.searchsorted(GRADE_EDGES, pd_score)]
    return np.where(pd_score == 0, "SAFE", np.where(pd_score == 1, "DEF", scale))


def population(window: str, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` healthy loans of one population: defaults drawn from their PDs, obligors 0..n-1."""
    start, end = WINDOWS[window]
    days = rng.integers(0, (end - start).days + 1, n)
    pd_score = np.round(np.clip(rng.beta(1.5, 12.0, n), 0.001, 0.95), 4)
    return pd.DataFrame(
        {
            "loan_id": np.arange(n),
            "score_date": [start + dt.timedelta(days=int(d)) for d in days],
            "pd_score": pd_score,
            "bad": pd.array((rng.random(n) < pd_score).astype(int), dtype="Int64"),
            "exposure": np.round(rng.gamma(2.0, 500.0, n), 2),
            "channel": rng.choice(CHANNELS, n),
            "income": np.round(rng.normal(50.0, 12.0, n) - 40 * pd_score, 1),
            "region": rng.choice(np.array(["N", "S", "E", "W"], dtype=object), n),
            "pd_v2": np.round(np.clip(pd_score * rng.lognormal(0.0, 0.3, n), 0.0, 1.0), 4),
            "rating": _grade(pd_score),
        }
    )


Case = Callable[[pd.DataFrame], pd.DataFrame]


def _no_loans(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.iloc[0:0]


def _unlabeled(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(bad=pd.array([pd.NA] * len(frame), dtype="Int64"))


def _goods_only(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(bad=pd.array([0] * len(frame), dtype="Int64"))


def _bads_only(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(bad=pd.array([1] * len(frame), dtype="Int64"))


def _equal_pds(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(pd_score=0.05, pd_v2=0.05, rating="B")


def _certain_pds(frame: pd.DataFrame) -> pd.DataFrame:
    """One PD in 13 exactly 1 (7.7 %, each of them a default), one in 13 exactly 0 (none)."""
    n = len(frame)
    position = np.arange(n) % 13
    one, zero = position == 0, position == 1
    pd_score = np.where(one, 1.0, np.where(zero, 0.0, frame["pd_score"]))
    bad = np.where(one, 1, np.where(zero, 0, frame["bad"].to_numpy(dtype=int)))
    return frame.assign(
        pd_score=pd_score,
        pd_v2=np.where(one, 1.0, np.where(zero, 0.0, frame["pd_v2"])),
        bad=pd.array(bad, dtype="Int64"),
        rating=_grade(pd_score),
    )


def _all_certain(frame: pd.DataFrame) -> pd.DataFrame:
    """Every PD exactly 0 or 1, as the outcome then is."""
    one = np.arange(len(frame)) % 2 == 0
    return frame.assign(
        pd_score=np.where(one, 1.0, 0.0),
        pd_v2=np.where(one, 1.0, 0.0),
        bad=pd.array(one.astype(int), dtype="Int64"),
        rating=np.where(one, "DEF", "SAFE"),
    )


def _no_web(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["channel"] != "web"]


def _null_characteristics(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(income=np.nan, region=None)


def _null_challenger(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(pd_v2=np.nan)


def _one_loan(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.iloc[0:1]


#: the degenerate cases one population can be made of
CASES: dict[str, Case] = {
    "no_loans": _no_loans,
    "one_loan": _one_loan,
    "unlabeled": _unlabeled,
    "goods_only": _goods_only,
    "bads_only": _bads_only,
    "equal_pds": _equal_pds,
    "certain_pds": _certain_pds,
    "all_certain": _all_certain,
    "segment_missing": _no_web,
    "characteristics_null": _null_characteristics,
    "challenger_null": _null_challenger,
}


def book(degenerate: dict[str, str] | None = None, *, n: int = 240, seed: int = 3) -> pd.DataFrame:
    """The three populations, each of ``n`` loans, ``degenerate`` mapping a population to the
    :data:`CASES` entry applied to it."""
    rng = np.random.default_rng(seed)
    cases = degenerate or {}
    frames = []
    for window in POPULATIONS:
        frame = population(window, n, rng)
        if window in cases:
            frame = CASES[cases[window]](frame)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["bad"] = out["bad"].astype("Int64")
    out["income"] = out["income"].astype(float)
    out["pd_v2"] = out["pd_v2"].astype(float)
    return out


@dataclass(frozen=True)
class Features:
    """Which optional features a model has on."""

    weights: bool = False
    segments: bool = False
    challengers: bool = False
    #: "off", "default" (the baseline's score bins), "edges" (a PD master scale), "column"
    calibration: str = "default"
    cutoff: bool = False
    migration: bool = False
    categorical: bool = False

    def label(self) -> str:
        on = [name for name, value in vars(self).items() if value is True]
        return "+".join([f"cal={self.calibration}", *on])


ALL_ON = Features(True, True, True, "edges", True, True, True)


def model(url: str, features: Features) -> ModelConfig:
    """The model of the book at ``url`` with ``features``."""
    columns: dict[str, Any] = {
        "id": "loan_id",
        "score_date": "score_date",
        "score": "pd_score",
        "label": "bad",
    }
    document: dict[str, Any] = {
        "name": "legal",
        "source": {"url": url, "table": "loans"},
        "score_direction": "higher_is_riskier",
        "baseline": {"start": str(WINDOWS["baseline"][0]), "end": str(WINDOWS["baseline"][1])},
        "performance_window": "6 months",
        "characteristics": [{"name": "income", "kind": "numeric"}],
        "columns": columns,
    }
    if features.weights:
        columns["weight"] = "exposure"
    if features.segments:
        columns["segments"] = ["channel"]
    if features.challengers:
        document["challengers"] = ["pd_v2"]
    if features.categorical:
        document["characteristics"].append({"name": "region", "kind": "categorical"})
    calibration: dict[str, Any] = {}
    if features.calibration == "off":
        calibration["enabled"] = False
    elif features.calibration == "edges":
        calibration["grades"] = GRADE_EDGES
    elif features.calibration == "column":
        calibration["grades"] = {"column": "rating", "order": GRADE_ORDER}
    if features.cutoff:
        calibration |= {"cutoff": 0.1, "costs": {"false_accept": 5, "false_decline": 1}}
    document["calibration"] = calibration
    if features.migration:
        document["rating"] = {"migration": True, "min_rerated": 20}
    return parse_config({"models": [document]}, source="test", env={}).models[0]
