"""The demo book's default and delinquency dates, consistent with its 12-month flags.

A loan that defaults within 12 months (``default_12m`` = 1, drawn in :mod:`riskmon.demo.book`)
defaults on a day drawn uniformly over the 365 days after its score date; it first went 30
days past due 30 to 90 days before (not before its score date). A few loans that never default
go 30+ days past due once and cure. A date after the book's end has not happened yet: NULL, as
is the date of a loan that never defaulted — so the vintage curves read by riskmon see only
what was known by each run's date.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

#: the share of loans that never default but go 30+ days past due once
CURED_DPD30 = 0.03
#: a default's days after scoring are uniform on [0, HORIZON_DAYS)
HORIZON_DAYS = 365


def event_dates(
    seed: int, dates: np.ndarray, default: np.ndarray, end: dt.date
) -> tuple[np.ndarray, np.ndarray]:
    """The default date and first 30+ DPD date of each loan (objects: a date or None)."""
    rng = np.random.default_rng([seed, 2])  # its own stream: the rest of the book is unchanged
    n = dates.shape[0]
    defaulted = default.astype(bool)
    when = dates + rng.integers(0, HORIZON_DAYS, n).astype("timedelta64[D]")
    lead = rng.integers(30, 91, n).astype("timedelta64[D]")
    late = np.maximum(when - lead, dates)
    cured = ~defaulted & (rng.random(n) < CURED_DPD30)
    last = np.datetime64(end, "D")
    default_date = np.full(n, None, dtype=object)
    known = defaulted & (when <= last)
    default_date[known] = when[known].astype(object)
    dpd30 = np.full(n, None, dtype=object)
    late_known = (defaulted | cured) & (late <= last)
    dpd30[late_known] = late[late_known].astype(object)
    return default_date, dpd30
