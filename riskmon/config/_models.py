"""The configuration's pydantic models: every key, its default and its check."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from riskmon.config._backtest import Backtest, check_kind
from riskmon.config._base import Period
from riskmon.config._base import Strict as _Strict
from riskmon.config._base import days as _days
from riskmon.config._base import twice as _twice
from riskmon.config._families import Calibration, Challenger, Rating, Vintages
from riskmon.config._paths import path_relative_to_config
from riskmon.config._scorecard import ScorecardAttributes
from riskmon.config._source import SourceConfig
from riskmon.config._thresholds import Thresholds
from riskmon.cron import cron_trigger
from riskmon.redact import register_secret

#: where the configuration is looked for when neither --config nor RISKMON_CONFIG is given
DEFAULT_CONFIG_PATH = Path("riskmon.yaml")
CONFIG_ENV_VAR = "RISKMON_CONFIG"
DEFAULT_STORE_URL = "sqlite:///riskmon.db"

#: variable names riskmon uses for the score and its tables; no characteristic may take them
RESERVED_VARIABLES = frozenset(
    {"score", "score_ranking", "gains", "curve", "pd_grade", "score_cutoff", "challenger_grid"}
)

#: a model's name: lowercase letters, digits, '_' and '-' (it names the model's report folder,
#: <reports_dir>/<name>/, so it must be a plain file name on every system)
MODEL_NAME = re.compile(r"\A[a-z0-9_-]+\Z")
#: the longest model name (the report writer keeps names up to 100 characters as they are)
MAX_MODEL_NAME = 100
#: names a model may not take: ``index`` (the report index, <reports_dir>/index.html) and the
#: device names Windows reserves in every folder
RESERVED_MODEL_NAMES = frozenset(
    {"index", "con", "prn", "aux", "nul"}
    | {f"{device}{n}" for device in ("com", "lpt") for n in range(10)}
)
#: a challenger's name: letters, digits, '_', '.' or '-'
_CHALLENGER_NAME = re.compile(r"\A[A-Za-z0-9_.\-]+\Z")


_UTC = ZoneInfo("UTC")


def _cron(value: str) -> str:
    # the scheduler's own reading of the expression (crontab rules: weekday 0 and 7 are Sunday)
    try:
        cron_trigger(value, _UTC)
    except ValueError as exc:
        raise ValueError(
            f"expected a 5-field cron expression like '0 2 * * *', got {value!r} ({exc})"
        ) from None
    return value


#: a file or folder; a relative one is relative to the configuration file
ConfigPath = Annotated[Path, AfterValidator(path_relative_to_config)]
CronExpression = Annotated[str, AfterValidator(_cron)]
#: what a model predicts: the figure families declare the kinds they apply to
ModelKind = Literal["pd", "lgd", "ccf", "ead"]


class Delinquency(_Strict):
    """The columns holding the date each loan first reached 30, 60 and 90 days past due."""

    dpd30: str | None = None
    dpd60: str | None = None
    dpd90: str | None = None


class ColumnMap(_Strict):
    """Which source column holds what."""

    id: str
    score_date: str
    score: str
    #: the binary outcome (0/1, NULL while not known); a PD model's only
    label: str | None = None
    weight: str | None = None
    segments: list[str] = Field(default_factory=list)
    #: an LGD, CCF or EAD model's realised value (NULL while the recovery is open) and its
    #: exposure at default (the weight of the loss shortfall and the mean absolute deviation)
    realised: str | None = None
    exposure: str | None = None
    #: an LGD, CCF or EAD model's grade (its rating scale): the back-test per grade when the
    #: initial sample has at most 20 grades, else per ECB segment of the estimate
    grade: str | None = None
    #: an LGD, CCF or EAD model's estimate without its downturn component, reported beside
    #: the estimate (``backtest_mean_estimate_without_downturn``)
    downturn: str | None = None
    #: a CCF model's flag of the facilities under the EAD approach (1 or true): left out of the
    #: back-test and counted (M_EAD; ``ead_approach_share``)
    ead_approach: str | None = None
    #: the identity that links an obligor's snapshots on two score dates (rating migration);
    #: default: ``id``
    obligor: str | None = None
    #: the final decision, ``accept`` or ``decline``, beside the cut-off's (an override where
    #: they differ); or the override itself: ``low_side``, ``high_side`` or ``none``
    decision: str | None = None
    override: str | None = None
    #: the date a loan defaulted (NULL if it has not): vintage curves of the cumulative
    #: default rate by months on book, and the ``vintage_defaults`` rule
    default_date: str | None = None
    #: the dates a loan first reached 30, 60 and 90 days past due (NULL if it has not), for
    #: ever-30+/60+/90+ vintage curves: ``{dpd30: col, dpd60: col, dpd90: col}``, any of them
    delinquency: Delinquency | None = None

    @model_validator(mode="after")
    def _one_override_column(self) -> ColumnMap:
        if self.decision is not None and self.override is not None:
            raise ValueError("expected at most one of 'decision' or 'override', got both")
        return self

    @property
    def obligor_column(self) -> str:
        return self.obligor or self.id


class Characteristic(ScorecardAttributes):
    """One model input monitored for stability (CSI) and strength (WOE/IV); binned on the
    scorecard's own attributes when they are given (:class:`ScorecardAttributes`)."""

    name: str
    kind: Literal["numeric", "categorical"]
    column: str | None = None

    @model_validator(mode="after")
    def _attributes_fit_kind(self) -> Characteristic:
        self.check_attributes(self.kind)
        return self

    @property
    def source_column(self) -> str:
        return self.column or self.name


class Window(_Strict):
    """An inclusive range of score dates."""

    start: dt.date
    end: dt.date

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end < self.start:
            raise ValueError(f"expected end >= start, got start {self.start} and end {self.end}")
        return self


class Bins(_Strict):
    """How the baseline is cut into bins."""

    score: int = Field(default=10, ge=2, le=1000)
    characteristics: int = Field(default=10, ge=2, le=1000)
    #: a categorical characteristic keeps its most frequent baseline levels, each its own bin;
    #: the rest share an "other" bin (grouped on the database by this many parameters at most)
    max_levels: int = Field(default=50, ge=1, le=1000)
    #: a score with more distinct baseline values is ranked on a grid of `score_grid` cells
    max_distinct_scores: int = Field(default=20_000, ge=100, le=1_000_000)
    score_grid: int = Field(default=2_000, ge=100, le=100_000)
    #: cells per score of the joint table a challenger is compared on (champion × challenger)
    challenger_grid: int = Field(default=100, ge=10, le=400)


class NotifyChannel(_Strict):
    """One notification target: a webhook URL or an e-mail address."""

    webhook: str | None = None
    email: str | None = None
    notify_on: Literal["change", "amber", "red", "always"] = "change"

    @model_validator(mode="after")
    def _one_target(self) -> NotifyChannel:
        # the URL is the credential (Slack, Teams); its path alone (the channel's own errors
        # scrub it) may be as plain as "/hook", too common to be masked in every message
        register_secret(self.webhook)
        if (self.webhook is None) == (self.email is None):
            raise ValueError("expected exactly one of 'webhook' or 'email'")
        if self.webhook is not None and not re.match(r"^https?://", self.webhook):
            shown = self.webhook.split("://", 1)[0] + "://..." if "://" in self.webhook else "..."
            raise ValueError(f"expected an http(s) webhook URL, got {shown!r} (rest not shown)")
        if self.email is not None and "@" not in self.email:
            raise ValueError(f"expected an e-mail address, got {self.email!r}")
        return self


class ModelConfig(_Strict):
    """One monitored model."""

    name: str
    source: SourceConfig
    columns: ColumnMap
    score_direction: Literal["higher_is_riskier", "higher_is_safer"]
    #: what the model predicts, which chooses the figure families that apply to it: ``pd``, a
    #: binary outcome (default/no default: scorecards and PD models); ``lgd``, ``ccf`` and
    #: ``ead``, continuous targets, are back-tested (``backtest``) over ``observation_window``
    kind: ModelKind = "pd"
    characteristics: list[Characteristic] = Field(default_factory=list)
    baseline: Window
    stability_window: Period = Period(count=1, unit="month")
    performance_window: Period = Period(count=12, unit="month")
    #: LGD, CCF, EAD: the period whose closed recoveries a run back-tests (ending at its date)
    observation_window: Period = Period(count=12, unit="month")
    backtest: Backtest = Backtest()
    bins: Bins = Bins()
    calibration: Calibration = Calibration()
    rating: Rating = Rating()
    #: vintage curves, read when ``columns.default_date`` is set
    vintages: Vintages = Vintages()
    #: challenger scores of the same loans, compared with the score (DeLong's paired test);
    #: a column name, or {column, name, score_direction}
    challengers: list[Challenger] = Field(default_factory=list)
    thresholds: Thresholds = Thresholds()
    #: a loan without a score, or with a weight NULL or negative: left out and counted
    #: (``exclude``, judged by the ``exclusions`` rule), or the run fails (``fail``)
    on_invalid: Literal["exclude", "fail"] = "exclude"
    #: the score's valid values, [low, high]: a loan scored outside is invalid (a PD of 1.7)
    score_range: tuple[float, float] | None = None
    schedule: CronExpression | None = None
    notify: list[NotifyChannel] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not MODEL_NAME.fullmatch(value) or len(value) > MAX_MODEL_NAME:
            raise ValueError(
                f"expected a name of lowercase letters, digits, '_' and '-' (at most "
                f"{MAX_MODEL_NAME} characters, rule {MODEL_NAME.pattern}), got {value!r}"
            )
        if value in RESERVED_MODEL_NAMES:
            raise ValueError(
                f"expected a name other than {value!r}, which is reserved: 'index' names the "
                "report index; con, prn, aux, nul, com0-com9 and lpt0-lpt9 are devices on "
                "Windows"
            )
        return value

    @field_validator("score_range")
    @classmethod
    def _score_range(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not (math.isfinite(value[0]) and value[0] < value[1] < math.inf):
            raise ValueError(f"expected [low, high] with finite low < high, got {list(value)}")
        return value

    @field_validator("characteristics")
    @classmethod
    def _unique_characteristics(cls, value: list[Characteristic]) -> list[Characteristic]:
        names = [c.name for c in value]
        duplicates = _twice(names)
        if duplicates:
            raise ValueError(f"expected unique characteristic names, got {duplicates} twice")
        reserved = sorted(set(names) & RESERVED_VARIABLES)
        if reserved:
            raise ValueError(
                f"expected characteristic names other than {sorted(RESERVED_VARIABLES)} (riskmon's "
                f"own), got {reserved}; keep the column and rename it: {{name: ..., column: ...}}"
            )
        return value

    @field_validator("challengers")
    @classmethod
    def _unique_challengers(cls, value: list[Challenger]) -> list[Challenger]:
        names = [c.label for c in value]
        twice = _twice(names)
        if twice:
            raise ValueError(f"expected unique challenger names, got {twice} twice")
        bad = [n for n in names if not _CHALLENGER_NAME.fullmatch(n)]
        if bad:
            raise ValueError(
                f"expected challenger names of letters, digits, '_', '.' or '-', got {bad}; "
                f"name it: {{column: ..., name: ...}}"
            )
        return value

    @model_validator(mode="after")
    def _challenger_not_score(self) -> ModelConfig:
        for i, challenger in enumerate(self.challengers):
            if challenger.column == self.columns.score:
                raise ValueError(
                    f"challengers[{i}]: expected a column other than the score "
                    f"{self.columns.score!r}, got it"
                )
        return self

    @model_validator(mode="after")
    def _override_needs_cutoff(self) -> ModelConfig:
        if self.columns.decision is not None and self.calibration.cutoff is None:
            raise ValueError(
                "columns.decision: expected calibration.cutoff too (the policy decision the "
                "final decision is compared with), got no cut-off"
            )
        return self

    @model_validator(mode="after")
    def _kind(self) -> ModelConfig:
        check_kind(self)
        return self

    @model_validator(mode="after")
    def _horizon_after_window(self) -> ModelConfig:
        horizon = self.migration_horizon
        if self.rating.migration and _days(horizon) < _days(self.stability_window):
            raise ValueError(
                f"rating.horizon: expected at least the stability window "
                f"({self.stability_window}), so that an obligor's two snapshots never overlap, "
                f"got {horizon}"
            )
        return self

    @property
    def migration_horizon(self) -> Period:
        """How far back the migration matrix reads each obligor's earlier grade."""
        return self.rating.horizon or self.performance_window

    @property
    def higher_is_riskier(self) -> bool:
        return self.score_direction == "higher_is_riskier"

    def challenger_is_riskier(self, challenger: Challenger) -> bool:
        """Whether higher values of ``challenger`` are riskier (its own direction, else the
        model's)."""
        direction = challenger.score_direction or self.score_direction
        return direction == "higher_is_riskier"
