"""A synthetic loan book with known drift and degradation, for the demo and for tests.

Each loan has a latent creditworthiness ``z``; its characteristics depend on ``z`` (income
falls, utilisation rises with risk, ...) and its true probability of default on ``z`` and its
channel. Two models score every loan:

- ``app_points``: an application scorecard, integer points, higher is safer;
- ``behaviour_pd``: a behavioural PD in (0, 1), higher is riskier, rounded to 4 decimals;
  ``behaviour_challenger`` is a challenger of it that does not degrade (NULL for 2 % of loans).

What is injected, each from a date on (all optional):

- ``drift_from``: the population drifts, growing month by month: incomes fall, utilisation
  rises, a region never seen before appears (CSI of those characteristics rises);
- ``degrade_from``: the behavioural PD model loses discrimination: what it sees of ``z`` is
  more noise and less signal month by month, at constant variance (its AUC, KS and Gini fall;
  its score distribution does not move);
- ``bad_segment_from``: loans from the broker channel default much more often.

The default flag matures ``maturity_months`` after scoring: loans scored later than that before
the book's end have a NULL flag.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

REGIONS = ("north", "south", "east", "west", "centre", "coast", "hills", "capital")
NEW_REGION = "new_town"
CHANNELS = ("web", "branch", "broker")
PRODUCTS = ("card", "personal_loan", "auto_loan")
HOUSING = ("own", "mortgage", "rent", "family")
EMPLOYMENT = ("employed", "self_employed", "retired", "student", "unemployed")
EDUCATION = ("secondary", "bachelor", "master", "doctorate")

NUMERIC_CHARACTERISTICS = (
    "income",
    "age",
    "debt_to_income",
    "utilization",
    "months_on_book",
    "n_inquiries",
    "loan_amount",
    "employment_years",
    "savings",
    "n_accounts",
    "delinquencies_24m",
)
CATEGORICAL_CHARACTERISTICS = ("region", "product", "housing", "employment_type", "education")


@dataclass(frozen=True)
class BookSpec:
    """What to generate."""

    start: dt.date
    end: dt.date  # last score date, inclusive
    loans_per_day: float
    seed: int = 0
    drift_from: dt.date | None = None
    degrade_from: dt.date | None = None
    bad_segment_from: dt.date | None = None
    maturity_months: int = 12
    #: months over which drift and degradation grow to their full size
    ramp_months: float = 6.0


def _ramp(dates: np.ndarray, start: dt.date | None, months: float) -> np.ndarray:
    """0 before ``start``, rising linearly to 1 over ``months`` months, 1 afterwards."""
    if start is None:
        return np.zeros(dates.shape[0])
    elapsed = (dates - np.datetime64(start, "D")).astype(np.float64) / 30.4375
    return np.clip(elapsed / months, 0.0, 1.0) * (elapsed >= 0)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-x))
    return out


def _with_missing(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    values[mask] = None
    return values


def generate_book(spec: BookSpec) -> pd.DataFrame:
    """The loans of ``spec``, one row each, in score-date order."""
    rng = np.random.default_rng(spec.seed)
    days = (spec.end - spec.start).days + 1
    per_day = rng.poisson(spec.loans_per_day, days)
    n = int(per_day.sum())
    dates = np.repeat(np.arange(days), per_day).astype("timedelta64[D]") + np.datetime64(
        spec.start, "D"
    )
    drift = _ramp(dates, spec.drift_from, spec.ramp_months)
    degrade = _ramp(dates, spec.degrade_from, spec.ramp_months)
    z = rng.normal(size=n)  # higher = riskier
    channel = rng.choice(CHANNELS, n, p=[0.5, 0.35, 0.15])
    region = rng.choice(REGIONS, n).astype(object)
    region[rng.random(n) < 0.25 * drift] = NEW_REGION

    def missing(values: np.ndarray, share: float) -> np.ndarray:
        out = values.astype(np.float64)
        out[rng.random(n) < share] = np.nan
        return out

    frame = pd.DataFrame(
        {
            "loan_id": np.arange(1, n + 1),
            "score_date": pd.to_datetime(dates).date,
            "channel": channel,
            "income": np.round(np.exp(10.4 - 0.25 * z - 0.35 * drift + rng.normal(0, 0.35, n)), -2),
            "age": np.clip(np.round(42 - 4 * z + rng.normal(0, 11, n)), 18, 85),
            "debt_to_income": np.round(np.clip(0.32 + 0.08 * z + rng.normal(0, 0.1, n), 0, 1.5), 3),
            "utilization": np.round(
                _sigmoid(-0.6 + 0.9 * z + 0.9 * drift + rng.normal(0, 0.8, n)), 3
            ),
            "months_on_book": rng.integers(0, 240, n),
            "n_inquiries": rng.poisson(np.exp(0.3 + 0.35 * z)),
            "loan_amount": np.round(rng.lognormal(9.2, 0.6, n), -1),
            "employment_years": missing(
                np.clip(np.round(8 - 2 * z + rng.normal(0, 5, n)), 0, 45), 0.08
            ),
            "savings": missing(np.round(np.exp(8 - 0.5 * z + rng.normal(0, 1, n)), -1), 0.3),
            "n_accounts": rng.poisson(4, n),
            "delinquencies_24m": rng.poisson(np.exp(-1.5 + 0.6 * z)),
            "region": region,
            "product": rng.choice(PRODUCTS, n, p=[0.5, 0.35, 0.15]),
            "housing": rng.choice(HOUSING, n),
            "employment_type": rng.choice(EMPLOYMENT, n, p=[0.6, 0.15, 0.12, 0.05, 0.08]),
            "education": _with_missing(
                rng.choice(EDUCATION, n).astype(object), rng.random(n) < 0.12
            ),
        }
    )
    broker_bad = (channel == "broker") * _ramp(dates, spec.bad_segment_from, 1.0) * 1.5
    true_pd = _sigmoid(-2.6 + 1.1 * z + broker_bad)
    default = (rng.random(n) < true_pd).astype(np.int64)
    # what each model sees of z: the behavioural model's view blurs as it degrades
    seen_app = z + rng.normal(0, 0.6, n)
    # degrading trades signal for noise at constant variance: the ranking blurs while the
    # score's distribution stays put (so PSI does not see it; AUC, KS and Gini do)
    signal = 1.0 - 0.7 * degrade
    seen_behaviour = signal * z + np.sqrt(1.0 + 0.35**2 - signal**2) * rng.normal(size=n)
    frame["app_points"] = np.round(600 - 40 * seen_app).astype(np.int64)
    frame["behaviour_pd"] = np.round(_sigmoid(-2.6 + 1.0 * seen_behaviour), 4)
    # a challenger of the behavioural model: it keeps its view of z (its own generator, so the
    # rest of the book is the same with or without it); 2 % of loans it did not score
    challenger_rng = np.random.default_rng([spec.seed, 1])
    seen_challenger = z + challenger_rng.normal(0, 0.45, n)
    challenger = np.round(_sigmoid(-2.6 + 0.9 * seen_challenger), 4)
    challenger[challenger_rng.random(n) < 0.02] = np.nan  # written as NULL
    frame["behaviour_challenger"] = challenger
    matured_until = pd.Timestamp(spec.end) - pd.DateOffset(months=spec.maturity_months)
    unmatured = pd.to_datetime(frame["score_date"]) > matured_until
    frame["default_12m"] = pd.array(np.where(unmatured, pd.NA, default), dtype="Int64")
    frame["exposure"] = frame["loan_amount"]
    return frame


def write_book(frame: pd.DataFrame, url: str, *, table: str = "scored_loans") -> None:
    """Write the book into a database (replacing ``table``), indexed on the score date."""
    from sqlalchemy import Index, MetaData, Table, create_engine

    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            frame.to_sql(table, connection, index=False, if_exists="replace", chunksize=20_000)
            loans = Table(table, MetaData(), autoload_with=connection)
            Index(f"ix_{table}_score_date", loans.c.score_date).create(connection)
    finally:
        engine.dispose()
