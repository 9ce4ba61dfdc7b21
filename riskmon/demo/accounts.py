"""A synthetic book of accounts re-rated every month, for the demo's rating migrations.

Each account has a long-run creditworthiness (a logit ``mu``); its logit this month wanders
around it (an AR(1): ``x = mu + phi·(x_prev − mu) + noise``), and the behavioural model scores it
on the 28th of every month with the PD ``sigmoid(x)`` (``rating_pd``, 4 decimals). A small share
of the accounts close each month and as many new ones open, so obligors enter and leave the
book. ``default_12m`` is drawn from the month's PD and is NULL for the last ``maturity_months``.

From ``jumpy_from`` on, the noise is ``jump`` times larger and the pull back to ``mu`` weaker:
ratings move farther month to month, so the migration matrix widens (its bandwidth grows)
while the portfolio's mean PD barely moves.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: the day of the month accounts are scored on
SCORE_DAY = 28


@dataclass(frozen=True)
class AccountSpec:
    """What to generate: monthly scores from ``start``'s month to ``end``'s."""

    start: dt.date
    end: dt.date
    n_accounts: int
    seed: int = 0
    jumpy_from: dt.date | None = None
    jump: float = 3.0
    #: accounts closed (and as many opened) each month
    turnover: float = 0.01
    maturity_months: int = 12


def generate_accounts(spec: AccountSpec) -> pd.DataFrame:
    """One row per account and month, in month order."""
    rng = np.random.default_rng(spec.seed)
    months = pd.date_range(spec.start.replace(day=1), spec.end, freq="MS")
    n = spec.n_accounts
    ids = np.arange(1, n + 1)
    next_id = n + 1
    mu = rng.normal(-3.4, 0.9, n)
    x = mu + rng.normal(0, 0.4, n)
    sme = rng.random(n) < 0.3
    exposure = np.round(rng.lognormal(9.0, 0.8, n), -1)
    matured_until = pd.Timestamp(spec.end) - pd.DateOffset(months=spec.maturity_months)
    frames = []
    for month in months:
        day = month.date().replace(day=SCORE_DAY)
        jumpy = spec.jumpy_from is not None and day >= spec.jumpy_from
        phi, noise = (0.8, 0.25 * spec.jump) if jumpy else (0.9, 0.25)
        x = mu + phi * (x - mu) + rng.normal(0, noise, n)
        closing = rng.random(n) < spec.turnover
        k = int(closing.sum())
        ids[closing] = np.arange(next_id, next_id + k)  # closed accounts replaced by new ones
        next_id += k
        mu[closing] = rng.normal(-3.4, 0.9, k)
        x[closing] = mu[closing] + rng.normal(0, 0.4, k)
        sme[closing] = rng.random(k) < 0.3
        exposure[closing] = np.round(rng.lognormal(9.0, 0.8, k), -1)
        pd_month = 1.0 / (1.0 + np.exp(-x))
        default = (rng.random(n) < pd_month).astype(np.int64)
        label = pd.array(default, dtype="Int64")
        if pd.Timestamp(day) > matured_until:
            label = pd.array([pd.NA] * n, dtype="Int64")
        frames.append(
            pd.DataFrame(
                {
                    "account_id": ids.copy(),
                    "score_date": day,
                    "rating_pd": np.round(pd_month, 4),
                    "default_12m": label,
                    "segment": np.where(sme, "sme", "retail"),
                    "exposure": exposure.copy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
