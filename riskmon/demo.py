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
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from riskmon.config import Period
from riskmon.errors import EXIT_USAGE, RiskmonError

if TYPE_CHECKING:
    from riskmon.outcome import RunOutcome

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


# --------------------------------------------------------------------------- the demo

DEMO_START, DEMO_END = dt.date(2023, 1, 1), dt.date(2024, 12, 31)
DEMO_LOANS_PER_DAY = 300
DEMO_SPEC = BookSpec(
    start=DEMO_START,
    end=DEMO_END,
    loans_per_day=DEMO_LOANS_PER_DAY,
    seed=2024,
    drift_from=dt.date(2024, 4, 1),  # current populations drift from April 2024
    degrade_from=dt.date(2023, 4, 1),  # cohorts scored from April 2023 lose discrimination
    bad_segment_from=dt.date(2023, 6, 1),  # broker loans from June 2023 default more
)
DEMO_RUNS = (dt.date(2024, 1, 31), dt.date(2024, 12, 31))  # monthly as-of dates, month ends


def demo_config(folder: Path) -> dict[str, object]:
    """The demo's configuration: two models on one table of scored loans."""
    source = {"url": f"sqlite:///{(folder / 'loans.db').resolve()}", "table": "scored_loans"}
    characteristics = [{"name": n, "kind": "numeric"} for n in NUMERIC_CHARACTERISTICS] + [
        {"name": n, "kind": "categorical"} for n in CATEGORICAL_CHARACTERISTICS
    ]
    common: dict[str, object] = {
        "source": source,
        "characteristics": characteristics,
        "baseline": {"start": "2023-01-01", "end": "2023-06-30"},
        "stability_window": "1 month",
        "performance_window": "12 months",
        "schedule": "0 2 1 * *",
        # a month's cohort per channel is a few thousand loans: judge only significant drops
        "thresholds": {"significant_drops_only": True},
    }
    columns: dict[str, object] = {
        "id": "loan_id",
        "score_date": "score_date",
        "label": "default_12m",
        "segments": ["channel"],
    }
    return {
        "store": {
            "url": f"sqlite:///{(folder / 'riskmon.db').resolve()}",
            "reports_dir": str((folder / "reports").resolve()),
        },
        "models": [
            {
                "name": "application_scorecard",
                **common,
                "columns": {**columns, "score": "app_points"},
                "score_direction": "higher_is_safer",
                # the scorecard's points as a PD: 600 points at 11:1 good:bad odds, odds
                # doubling every 37 points (fitted on the development window)
                # loans below 560 points are declined; a bad accepted costs five good declined
                "calibration": {
                    "points_to_pd": {"points": 600, "odds": 11, "pdo": 37},
                    "cutoff": 560,
                    "costs": {"false_accept": 5, "false_decline": 1},
                },
            },
            {
                "name": "behaviour_pd",
                **common,
                "columns": {**columns, "score": "behaviour_pd", "weight": "exposure"},
                "score_direction": "higher_is_riskier",
                # the master scale: PD upper edges of the grades (the last grade is open)
                "calibration": {
                    "grades": [0.02, 0.04, 0.07, 0.12, 0.2, 0.35],
                    "default_correlation": 0.03,
                },
                # a challenger scoring the same loans, compared by DeLong's paired test
                "challengers": [{"column": "behaviour_challenger", "name": "challenger"}],
            },
        ],
    }


class DemoError(RiskmonError):
    """The demo cannot be built where it was asked to be."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class DemoResult:
    """What `riskmon demo` made."""

    folder: Path
    config_path: Path
    index_path: Path
    n_loans: int
    outcomes: tuple[RunOutcome, ...]


def run_demo(folder: Path, *, progress: bool = True) -> DemoResult:
    """Build the demo in ``folder``: a loan book, a configuration, baselines, a year of monthly
    runs of two models, their reports and the index."""
    import yaml
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from riskmon.baseline import freeze
    from riskmon.collect import Source
    from riskmon.config import load_config
    from riskmon.plan import as_of_dates
    from riskmon.report import render_index
    from riskmon.run import run_models
    from riskmon.store import MetricStore
    from riskmon.store.migrate import upgrade

    folder = _prepare(folder)
    dates = as_of_dates(*DEMO_RUNS, Period(count=1, unit="month"))
    columns = (
        TextColumn("{task.description:<46}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, disable=not progress, console=Console(stderr=True)) as bar:
        steps = bar.add_task("generating the loan book", total=2 + 2 * (1 + len(dates)))
        book = generate_book(DEMO_SPEC)
        bar.advance(steps)
        bar.update(steps, description=f"writing {len(book):,} loans to loans.db")
        write_book(book, f"sqlite:///{(folder / 'loans.db').resolve()}")
        bar.advance(steps)
        config_path = folder / "riskmon.yaml"
        config_path.write_text(_DEMO_HEADER + yaml.safe_dump(demo_config(folder), sort_keys=False))
        config = load_config(config_path)
        store = MetricStore.open(config.store.url)
        try:
            upgrade(store.engine)
            outcomes: list[RunOutcome] = []
            for model in config.models:
                bar.update(steps, description=f"{model.name}: freezing the baseline")
                with Source(model) as source:
                    freeze(model, source, store)
                bar.advance(steps)
                for day in dates:
                    bar.update(steps, description=f"{model.name} as of {day}")
                    outcomes += run_models(
                        config, [model.name], day, store=store, notify=False, report=True
                    )
                    bar.advance(steps)
            index = render_index(config, store)
        finally:
            store.engine.dispose()
    return DemoResult(folder, config_path, index, len(book), tuple(outcomes))


_DEMO_HEADER = """\
# The riskmon demo: two models on a synthetic book of scored loans (see riskmon.demo).
# Try: riskmon -c riskmon.yaml history behaviour_pd
#      riskmon -c riskmon.yaml run behaviour_pd --as-of 2024-12-31 --format json
"""


def _prepare(folder: Path) -> Path:
    """The demo folder, emptied of an earlier demo; refuses a folder with other files."""
    folder = folder.resolve()
    ours = {"loans.db", "riskmon.db", "riskmon.yaml", "reports", "riskmon.db-wal", "riskmon.db-shm"}
    if folder.exists():
        others = sorted(p.name for p in folder.iterdir() if p.name not in ours)
        if others:
            raise DemoError(
                f"{folder} holds files that are not the demo's ({', '.join(others[:5])}):"
                f" choose an empty or new folder with --dir"
            )
        import shutil

        for name in ours:
            path = folder / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    return folder
