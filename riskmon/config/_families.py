"""What the figure families are configured with beyond the thresholds: calibration (the PD,
the grades, the cut-off and its costs), the rating system's migrations and the challengers."""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from riskmon.config._base import Period
from riskmon.config._base import Strict as _Strict
from riskmon.config._base import twice as _twice


class PointsToPd(_Strict):
    """A scorecard's points as a PD: ``points`` at good:bad ``odds``, odds doubling every
    ``pdo`` points (PD = 1 / (1 + odds · 2^((score − points) / pdo)))."""

    points: float
    odds: float = Field(gt=0)
    pdo: float = Field(gt=0)


class Costs(_Strict):
    """What a wrong decision at the cut-off costs, per loan (any unit, the same for both)."""

    false_accept: float = Field(gt=0)  # a bad loan accepted
    false_decline: float = Field(gt=0)  # a good loan declined


class GradeColumn(_Strict):
    """Grades read from a column, listed best (lowest PD) to worst."""

    column: str
    order: list[Annotated[str, BeforeValidator(str)]] = Field(min_length=2)

    @field_validator("order")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        twice = _twice(value)
        if twice:
            raise ValueError(f"expected each grade once, got {twice} twice")
        return value


def _pd_edges(value: list[float]) -> list[float]:
    if not all(0 < e < 1 for e in value):
        raise ValueError(f"expected PD upper edges strictly between 0 and 1, got {value}")
    if any(b <= a for a, b in itertools.pairwise(value)):
        raise ValueError(f"expected strictly increasing PD upper edges, got {value}")
    return value


class Calibration(_Strict):
    """Are the PDs right (back-testing per grade and for the portfolio), and how the decision
    at the cut-off performs."""

    #: None: on when the score is a PD (higher_is_riskier, baseline scores within [0, 1]) or
    #: when `pd` or `points_to_pd` is given
    enabled: bool | None = None
    #: the column holding each loan's PD (default: the score itself)
    pd: str | None = None
    #: a scorecard's points mapped to a PD, instead of a PD column
    points_to_pd: PointsToPd | None = None
    #: the master scale: PD upper edges of the grades (the last grade is open), or a column
    #: holding each loan's grade; default: the baseline's score bins
    grades: Annotated[list[float], AfterValidator(_pd_edges)] | GradeColumn | None = None
    #: the AUC of the initial validation for the ECB AUC test (default: the baseline's)
    initial_auc: float | None = Field(default=None, gt=0, le=1)
    #: the ECB AUC test's standard error: "current", the ECB's, s = s_now (the initial AUC taken
    #: as known); "both", a variant treating the initial AUC as an estimate too,
    #: s = √(s_now² + s_init²)
    auc_test_variance: Literal["current", "both"] = "current"
    #: with auc_test_variance "both": the initial AUC's standard error (default: the baseline's
    #: DeLong standard error)
    initial_auc_se: float | None = Field(default=None, gt=0)
    #: default correlation for the correlation-adjusted binomial test (Vasicek one-factor)
    default_correlation: float = Field(default=0.0, ge=0, lt=1)
    #: confidence of the binomial tests' critical default counts
    confidence: float = Field(default=0.99, gt=0.5, lt=1)
    #: fewer expected defaults than this in a grade: Hosmer-Lemeshow merges it with a neighbour
    min_expected_defaults: float = Field(default=5.0, gt=0)
    #: the score at which loans are declined (higher_is_riskier: a score at or above it;
    #: higher_is_safer: a score below it)
    cutoff: float | None = None
    costs: Costs | None = None

    @model_validator(mode="after")
    def _initial_se_used(self) -> Calibration:
        if self.initial_auc_se is not None and self.auc_test_variance != "both":
            raise ValueError(
                "initial_auc_se is used only by the variant of the ECB AUC test that counts the "
                "initial AUC's variance: set auc_test_variance: both, or remove initial_auc_se"
            )
        return self

    @model_validator(mode="after")
    def _one_pd(self) -> Calibration:
        if self.pd is not None and self.points_to_pd is not None:
            raise ValueError("expected at most one of 'pd' and 'points_to_pd'")
        if self.costs is not None and self.cutoff is None:
            raise ValueError("'costs' go with a 'cutoff'")
        return self


class Rating(_Strict):
    """The rating system's migrations: each obligor's grade now against its grade one
    ``horizon`` earlier (the same grades as calibration's)."""

    #: compute the migration matrix (the source re-scores obligors: one row per obligor and
    #: score date)
    migration: bool = False
    #: how far back an obligor's earlier grade is read (default: the performance window)
    horizon: Period | None = None
    #: fewer obligors graded at both ends than this: the migration rules are not evaluable
    min_rerated: int = Field(default=100, ge=1)


class Vintages(_Strict):
    """Vintage curves (with ``columns.default_date``): which months on book the
    ``vintage_defaults`` rule judges, and how far the curves reach."""

    #: a vintage's curve is judged at the latest of these MOBs it has reached
    mobs: list[int] = Field(default_factory=lambda: [3, 6, 9])
    #: the curves' last MOB: vintages scored this many months before the run are shown, and
    #: the default timing σ(m) is learnt up to it
    max_mob: int = Field(default=12, ge=1, le=120)

    @model_validator(mode="after")
    def _mobs_on_the_curve(self) -> Vintages:
        outside = [m for m in self.mobs if not 1 <= m <= self.max_mob]
        if outside or not self.mobs:
            raise ValueError(
                f"expected MOBs between 1 and max_mob ({self.max_mob}), got {self.mobs}"
            )
        return self


class Challenger(_Strict):
    """A challenger score of the same loans, compared with the model's score (the champion)."""

    column: str
    #: how it is shown and stored (default: the column's name)
    name: str | None = None
    #: default: the model's own direction
    score_direction: Literal["higher_is_riskier", "higher_is_safer"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _column_alone(cls, value: Any) -> Any:
        return {"column": value} if isinstance(value, str) else value

    @property
    def label(self) -> str:
        return self.name or self.column
