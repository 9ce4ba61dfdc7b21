"""The demo book's points model: what each characteristic adds to a loan's log-odds of default.

A loan's true log-odds of default is the sum of its characteristics' points (below) and of a
part no characteristic shows; the demo's two models score the loans with the same points, so a
characteristic's drift moves the scores and the outcome alike:

- the application scorecard adds the points of the characteristics known at application
  (:data:`APPLICATION`), and
- the behavioural PD model those of every characteristic.

A numeric characteristic adds ``weight · (transform(x) − centre) / scale`` log-odds, a missing
value :data:`MISSING_POINTS`; a categorical one the log-odds of its level (0 for a level the
table does not list). Each model turns its sum into a PD through an intercept and a slope fitted
by :func:`fit_logit` on the book's development months, as a scorecard is fitted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd


def _log1p(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.log1p(x)
    return out


def _capped(cap: float) -> Callable[[np.ndarray], np.ndarray]:
    def capped(x: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.minimum(x, cap)
        return out

    return capped


def _identity(x: np.ndarray) -> np.ndarray:
    return x


@dataclass(frozen=True)
class NumericPoints:
    """``weight · (transform(x) − centre) / scale`` log-odds; ``missing`` for a missing value."""

    weight: float
    centre: float
    scale: float
    transform: Callable[[np.ndarray], np.ndarray] = _identity
    missing: float = 0.0

    def of(self, values: np.ndarray) -> np.ndarray:
        x = np.asarray(values, dtype=np.float64)
        known = ~np.isnan(x)
        out = np.full(x.shape[0], self.missing)
        out[known] = self.weight * (self.transform(x[known]) - self.centre) / self.scale
        return out


#: log-odds points of the numeric characteristics (positive weight: the higher, the riskier)
NUMERIC_POINTS: Mapping[str, NumericPoints] = {
    "income": NumericPoints(-0.225, 10.4, 0.43, np.log),
    "age": NumericPoints(-0.112, 42.0, 11.7),
    "debt_to_income": NumericPoints(0.262, 0.32, 0.13),
    "utilization": NumericPoints(0.338, 0.37, 0.22),
    "months_on_book": NumericPoints(-0.188, 4.0, 0.9, _log1p),
    "n_inquiries": NumericPoints(0.135, 1.45, 1.3, _capped(8.0)),
    "loan_amount": NumericPoints(0.12, 9.2, 0.6, np.log),
    "employment_years": NumericPoints(-0.112, 8.0, 5.4, missing=0.10),
    "savings": NumericPoints(-0.15, 8.0, 1.1, _log1p, missing=0.15),
    "n_accounts": NumericPoints(0.10, 4.0, 2.0),
    "delinquencies_24m": NumericPoints(0.165, 0.3, 0.6, _capped(4.0)),
}

#: log-odds points of the categorical characteristics' levels
LEVEL_POINTS: Mapping[str, Mapping[str, float]] = {
    "region": {
        "north": 0.15,
        "south": -0.15,
        "east": 0.20,
        "west": -0.20,
        "centre": 0.0,
        "coast": 0.15,
        "hills": -0.10,
        "capital": -0.30,
        "new_town": 0.30,
    },
    "product": {"card": 0.30, "personal_loan": -0.15, "auto_loan": -0.70},
    "housing": {"own": -0.40, "mortgage": -0.25, "rent": 0.45, "family": 0.20},
    "employment_type": {
        "employed": -0.15,
        "self_employed": 0.10,
        "retired": -0.20,
        "student": 0.50,
        "unemployed": 0.90,
    },
    "education": {"secondary": 0.40, "bachelor": 0.0, "master": -0.25, "doctorate": -0.40},
}

#: the characteristics an application scorecard can use: known when the loan is applied for
#: (the behavioural ones, utilisation, time on book, savings and accounts, are not)
APPLICATION = (
    "income",
    "age",
    "debt_to_income",
    "n_inquiries",
    "loan_amount",
    "employment_years",
    "delinquencies_24m",
    "region",
    "product",
    "housing",
    "employment_type",
    "education",
)


def points(frame: pd.DataFrame, names: tuple[str, ...] | None = None) -> np.ndarray:
    """The log-odds points of ``frame``'s loans summed over ``names`` (every characteristic
    when None)."""
    chosen = tuple(NUMERIC_POINTS) + tuple(LEVEL_POINTS) if names is None else names
    total = np.zeros(len(frame))
    for name in chosen:
        if name in NUMERIC_POINTS:
            total += NUMERIC_POINTS[name].of(
                frame[name].to_numpy(dtype=np.float64, na_value=np.nan)
            )
        else:
            total += frame[name].map(LEVEL_POINTS[name]).fillna(0.0).to_numpy(dtype=np.float64)
    return total


#: Newton steps of :func:`fit_logit` (it converges in fewer on the demo's books)
_NEWTON_STEPS = 25


def fit_logit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The intercept and slope of the logistic regression of ``y`` (0/1) on ``x``, by
    Newton's method (a model's development: its points turned into a PD)."""
    if not 0 < int(y.sum()) < y.shape[0]:
        raise ValueError(
            f"Expected goods and bads to fit a model on, got {int(y.sum())} bads of {y.shape[0]}"
        )
    design = np.column_stack([np.ones(x.shape[0]), x])
    beta = np.zeros(2)
    for _ in range(_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (y - p)
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(beta[0]), float(beta[1])
