"""A synthetic loan book with known drift and degradation, for the demo and for tests.

Each loan has a latent creditworthiness ``z`` that its characteristics depend on (income falls,
utilisation rises, time on book shortens with risk, ...), so that they are correlated as a real
book's are. Its true log-odds of default is the sum of its characteristics' points
(:mod:`riskmon.demo._points`: every characteristic but one or two weak ones carries
information), a part no characteristic shows, and its channel's. Two models score every loan
with those points, each turned into a PD by a logistic regression fitted on the book's first
months (its development):

- ``app_points``: an application scorecard over the characteristics known at application,
  integer points (600 at 11:1 good:bad odds, the odds doubling every 37 points), higher is safer;
- ``behaviour_pd``: a behavioural PD over every characteristic, in (0, 1), higher is riskier,
  rounded to 4 decimals; ``behaviour_challenger`` is a challenger of it, a noisier view of the
  same points that does not degrade (NULL for 2 % of loans).

So a drift of the characteristics moves both scores' distributions, in proportion to the
drifting characteristics' points, and the outcome with them.

What is injected, each from a date on (all optional):

- ``drift_from``: the population drifts, growing month by month: incomes fall, utilisation
  rises, a region never seen before appears (CSI of those characteristics rises, the scores'
  PSI and the default rate with them);
- ``degrade_from``: the behavioural PD model loses discrimination: a growing share of each
  day's loans is scored on another loan's record of that day (its AUC, KS and Gini fall; its
  score distribution does not move);
- ``bad_segment_from``: loans from the broker channel default much more often.

The default flag matures ``maturity_months`` after scoring: loans scored later than that before
the book's end have a NULL flag.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from riskmon.demo import scorecard
from riskmon.demo._points import APPLICATION, fit_logit, points
from riskmon.demo.vintages import event_dates

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

#: the true log-odds of default: this intercept, the characteristics' points
#: (:mod:`riskmon.demo._points`) and a part none of them shows, of this standard deviation
TRUE_INTERCEPT = -2.85
UNSEEN_SD = 0.5
#: what the broker channel adds to the log-odds from ``bad_segment_from``
BROKER_BAD = 1.5
#: the models are fitted on the book's first months
DEVELOPMENT_MONTHS = 6
#: the share of loans a fully degraded behavioural model scores on another loan's record
DEGRADED_SHARE = 0.8
#: the challenger sees the characteristics' points with noise of this standard deviation
CHALLENGER_NOISE = 0.3


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
    #: score ``app_points`` with the points table of :mod:`riskmon.demo.scorecard` (with its
    #: special value and the underwriters' ``decision``) instead of the fitted log-odds
    scorecard: bool = False
    #: with ``scorecard``: the broker channel's low-side overrides grow from this date
    overrides_from: dt.date | None = None


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


def _development_end(spec: BookSpec) -> dt.date:
    """The end of the months the models are fitted on: the book's first six, or fewer when an
    injected change to the outcome starts earlier."""
    end: dt.date = (pd.Timestamp(spec.start) + pd.DateOffset(months=DEVELOPMENT_MONTHS)).date()
    changes = [d for d in (spec.drift_from, spec.bad_segment_from) if d is not None]
    return min([end, *changes])


def _shuffled_within_days(
    rng: np.random.Generator, rows: np.ndarray, dates: np.ndarray
) -> np.ndarray:
    """``rows`` (in date order) permuted among the rows of the same date."""
    day = dates[rows].astype("datetime64[D]").astype(np.int64)
    return rows[np.lexsort((rng.random(rows.shape[0]), day))]


def _characteristics(
    rng: np.random.Generator, dates: np.ndarray, drift: np.ndarray
) -> pd.DataFrame:
    """The loans' characteristics: they depend on a latent creditworthiness ``z`` (higher is
    riskier), which makes them correlated as a real book's are, and drift with ``drift``."""
    n = int(dates.shape[0])
    z = rng.normal(size=n)
    region = rng.choice(REGIONS, n).astype(object)
    region[rng.random(n) < 0.25 * drift] = NEW_REGION

    def missing(values: np.ndarray, share: float) -> np.ndarray:
        out = values.astype(np.float64)
        out[rng.random(n) < share] = np.nan
        return out

    return pd.DataFrame(
        {
            "loan_id": np.arange(1, n + 1),
            "score_date": pd.to_datetime(dates).date,
            "channel": rng.choice(CHANNELS, n, p=[0.5, 0.35, 0.15]),
            "income": np.round(np.exp(10.4 - 0.25 * z - 0.35 * drift + rng.normal(0, 0.35, n)), -2),
            "age": np.clip(np.round(42 - 4 * z + rng.normal(0, 11, n)), 18, 85),
            "debt_to_income": np.round(np.clip(0.32 + 0.08 * z + rng.normal(0, 0.1, n), 0, 1.5), 3),
            "utilization": np.round(
                _sigmoid(-0.6 + 0.9 * z + 0.9 * drift + rng.normal(0, 0.8, n)), 3
            ),
            "months_on_book": np.clip(
                np.round(np.exp(4.0 - 0.3 * z + rng.normal(0, 0.8, n))), 0, 360
            ),
            "n_inquiries": rng.poisson(np.exp(0.3 + 0.35 * z)),
            "loan_amount": np.round(rng.lognormal(9.2 + 0.05 * z, 0.6), -1),
            "employment_years": missing(
                np.clip(np.round(8 - 2 * z + rng.normal(0, 5, n)), 0, 45), 0.08
            ),
            "savings": missing(np.round(np.exp(8 - 0.5 * z + rng.normal(0, 1, n)), -1), 0.3),
            "n_accounts": rng.poisson(np.exp(1.35 + 0.1 * z)),
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


def generate_book(spec: BookSpec) -> pd.DataFrame:
    """The loans of ``spec``, one row each, in score-date order."""
    rng = np.random.default_rng(spec.seed)
    days = (spec.end - spec.start).days + 1
    per_day = rng.poisson(spec.loans_per_day, days)
    n = int(per_day.sum())
    dates = np.repeat(np.arange(days), per_day).astype("timedelta64[D]") + np.datetime64(
        spec.start, "D"
    )
    frame = _characteristics(rng, dates, _ramp(dates, spec.drift_from, spec.ramp_months))
    # the outcome: the characteristics' points, a part none of them shows, and from
    # bad_segment_from the broker channel's turn for the worse
    known = points(frame)
    unseen = UNSEEN_SD * rng.normal(size=n)
    broker = frame["channel"].to_numpy() == "broker"
    broker_bad = BROKER_BAD * broker * _ramp(dates, spec.bad_segment_from, 1.0)
    true_pd = _sigmoid(TRUE_INTERCEPT + known + unseen + broker_bad)
    default = (rng.random(n) < true_pd).astype(np.int64)
    # each model turns its points into a PD fitted on the development months
    development = dates < np.datetime64(_development_end(spec), "D")
    app = points(frame, APPLICATION)
    intercept, slope = fit_logit(app[development], default[development])
    # 600 points at 11:1 good:bad odds, the odds doubling every 37 points
    app_points = 600 - 37 / np.log(2) * (np.log(11) + intercept + slope * app)
    frame["app_points"] = np.round(app_points).astype(np.int64)
    intercept, slope = fit_logit(known[development], default[development])
    behaviour = intercept + slope * known
    # degrading: a growing share of a day's loans are scored on another loan's record of that
    # day, so the score's distribution stays put (PSI does not see it; AUC, KS and Gini do)
    wrong = np.flatnonzero(
        rng.random(n) < DEGRADED_SHARE * _ramp(dates, spec.degrade_from, spec.ramp_months)
    )
    behaviour[wrong] = behaviour[_shuffled_within_days(rng, wrong, dates)]
    frame["behaviour_pd"] = np.round(_sigmoid(behaviour), 4)
    # a challenger of the behavioural model: a noisier view of the same points that does not
    # degrade (its own generator, so the rest of the book is the same with or without it);
    # 2 % of loans it did not score
    challenger_rng = np.random.default_rng([spec.seed, 1])
    seen = known + challenger_rng.normal(0, CHALLENGER_NOISE, n)
    intercept, slope = fit_logit(seen[development], default[development])
    challenger = np.round(_sigmoid(intercept + slope * seen), 4)
    challenger[challenger_rng.random(n) < 0.02] = np.nan  # written as NULL
    frame["behaviour_challenger"] = challenger
    if spec.scorecard:
        frame = scorecard.apply(
            frame, seed=spec.seed, drift_from=spec.drift_from, overrides_from=spec.overrides_from
        )
    matured_until = pd.Timestamp(spec.end) - pd.DateOffset(months=spec.maturity_months)
    unmatured = pd.to_datetime(frame["score_date"]) > matured_until
    frame["default_12m"] = pd.array(np.where(unmatured, pd.NA, default), dtype="Int64")
    frame["default_date"], frame["dpd30_date"] = event_dates(spec.seed, dates, default, spec.end)
    frame["exposure"] = frame["loan_amount"]
    return frame


def write_book(
    frame: pd.DataFrame, url: str, *, table: str = "scored_loans", date: str = "score_date"
) -> None:
    """Write the book into a database (replacing ``table``), indexed on its ``date`` column
    (the date that decides a row's window).

    The table is declared as ``DataFrame.to_sql`` declares it. On SQLite its rows then go
    through the driver's ``executemany`` (NULL for a missing value, a date as SQLAlchemy's
    SQLite dialect writes it, ISO 8601): ``to_sql`` made each of the demo's 220,132 rows an
    SQLAlchemy parameter set first: 5.2 s against 1.9 s. Other databases take ``to_sql``'s
    inserts."""
    from sqlalchemy import Index, MetaData, Table, create_engine

    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            dates = _date_columns(frame) if connection.dialect.name == "sqlite" else None
            if dates is None:
                frame.to_sql(table, connection, index=False, if_exists="replace", chunksize=20_000)
            else:
                frame.head(0).to_sql(
                    table, connection, index=False, if_exists="replace", dtype=dates
                )
                columns = [_sqlite_values(frame[c], as_text=c in dates) for c in frame.columns]
                quoted = connection.dialect.identifier_preparer.quote
                marks = ", ".join("?" * len(columns))
                connection.exec_driver_sql(
                    f"INSERT INTO {quoted(table)} VALUES ({marks})",
                    list(zip(*columns, strict=True)),
                )
            loans = Table(table, MetaData(), autoload_with=connection)
            Index(f"ix_{table}_{date}", loans.c[date]).create(connection)
    finally:
        engine.dispose()


#: the kinds of column (``pandas.api.types.infer_dtype``) written through SQLite's driver; a
#: book with another (times, decimals, ...) is written by ``to_sql``
_DRIVER_TYPES = frozenset(
    {"integer", "floating", "mixed-integer-float", "string", "boolean", "date", "empty"}
)


def _date_columns(frame: pd.DataFrame) -> dict[str, object] | None:
    """The columns of dates, declared DATE as ``to_sql`` infers them from the whole column;
    None when a column holds a kind the driver is not given (:data:`_DRIVER_TYPES`)."""
    from sqlalchemy import Date

    inferred = {c: pd.api.types.infer_dtype(frame[c], skipna=True) for c in frame.columns}
    if not _DRIVER_TYPES.issuperset(inferred.values()):
        return None
    return {c: Date() for c, kind in inferred.items() if kind == "date"}


def _sqlite_values(column: pd.Series, *, as_text: bool) -> list[object]:
    """A column's values as Python objects SQLite's driver takes: None where one is missing
    (NaN, NA, None), each date (``as_text``) as its ISO text."""
    values: list[object] = column.astype(object).where(column.notna(), None).tolist()
    if as_text:
        return [v.isoformat() if isinstance(v, dt.date) else v for v in values]
    return values
