"""Tables of the metric store (SQLAlchemy 2.x declarative); Alembic migrates them.

Only the modules of :mod:`riskmon.store` read and write these tables. Conventions:

- ``variable`` is ``"score"`` for the model's score, else a characteristic's name;
- ``segment`` is ``""`` for the whole population, else ``"column=value"``;
- a segment, a variable's name and a bin's label may hold any text of any length: a text with
  a NUL is stored escaped (:func:`stored_text`, undone by :func:`read_text`; PostgreSQL's
  text cannot hold U+0000), a label is ``Text``, and the ``segment`` and ``variable``
  columns, which the unique constraints cover, hold a bounded key (:func:`text_key`: the text
  itself when it is at most :data:`KEY_LENGTH` characters, else a prefix and a digest), the
  whole text then in ``segment_full`` / ``variable_full`` (NULL when the key is the text);
- ``population`` is ``current`` (the stability window), ``performance`` (the matured cohort)
  or ``baseline``;
- times are UTC; floats are double precision on every database.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Date,
    DateTime,
    Double,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from riskmon.store._text import (
    ESCAPED as ESCAPED,
)
from riskmon.store._text import (
    KEY_DIGEST_CHARS as KEY_DIGEST_CHARS,
)
from riskmon.store._text import (
    KEY_LENGTH as KEY_LENGTH,
)
from riskmon.store._text import (
    KEY_MARK as KEY_MARK,
)
from riskmon.store._text import (
    NAME_LENGTH as NAME_LENGTH,
)
from riskmon.store._text import (
    NUL_ESCAPE as NUL_ESCAPE,
)
from riskmon.store._text import (
    key_of as key_of,
)
from riskmon.store._text import (
    read_text as read_text,
)
from riskmon.store._text import (
    stored_text as stored_text,
)
from riskmon.store._text import (
    text_key as text_key,
)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

RUN_STATUSES = ("running", "succeeded", "failed")
ALERT_STATUSES = ("GREEN", "AMBER", "RED", "NOT_EVALUABLE")
NOTIFY_STATES = ("pending", "sent", "failed", "not_needed")
#: a delivery is queued pending with its run, taken (sending), then sent or failed
DELIVERY_STATES = ("pending", "sending", "sent", "failed")
POPULATIONS = ("current", "performance", "baseline")
#: a validator's decision on a run
REVIEW_DECISIONS = ("accepted", "action-required", "escalated")

SHORT = 32

#: the key columns and, beside each, the column holding the whole text when the key is not it
KEYED_COLUMNS = {"segment": "segment_full", "variable": "variable_full"}


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads this class attribute
        dt.datetime: DateTime(timezone=True),
        float: Double(),
        dict[str, Any]: JSON(),
    }


class Model(Base):
    """A monitored model, by name."""

    __tablename__ = "models"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    score_direction: Mapped[str] = mapped_column(String(SHORT))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Baseline(Base):
    """A frozen version of a model's development sample: bins and distributions."""

    __tablename__ = "baselines"
    __table_args__ = (UniqueConstraint("model_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    window_start: Mapped[dt.date] = mapped_column(Date)
    window_end: Mapped[dt.date] = mapped_column(Date)
    frozen_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    config_hash: Mapped[str] = mapped_column(String(64))
    n_rows: Mapped[int] = mapped_column(Integer)
    n_bads: Mapped[int | None] = mapped_column(Integer)
    riskmon_version: Mapped[str] = mapped_column(String(SHORT))


class BaselineVariable(Base):
    """The frozen binning of one variable (the score or a characteristic) in a baseline."""

    __tablename__ = "baseline_variables"
    __table_args__ = (UniqueConstraint("baseline_id", "variable"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    baseline_id: Mapped[int] = mapped_column(ForeignKey("baselines.id", ondelete="CASCADE"))
    variable: Mapped[str] = mapped_column(String(KEY_LENGTH))
    variable_full: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(SHORT))
    binning: Mapped[dict[str, Any]] = mapped_column()
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)


class BaselineBin(Base):
    """The baseline's counts in one bin of one variable (and segment).

    ``n_total``/``total`` count every baseline loan (the expected distribution of PSI/CSI);
    ``n_goods``/``goods`` and ``n_bads``/``bads`` only the loans with a label (WOE/IV).
    """

    __tablename__ = "baseline_bins"
    __table_args__ = (UniqueConstraint("variable_id", "segment", "bin_index"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    variable_id: Mapped[int] = mapped_column(
        ForeignKey("baseline_variables.id", ondelete="CASCADE")
    )
    segment: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    segment_full: Mapped[str | None] = mapped_column(Text)
    bin_index: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(Text)
    n_total: Mapped[int] = mapped_column(Integer)
    total: Mapped[float] = mapped_column()
    n_goods: Mapped[int | None] = mapped_column(Integer)
    goods: Mapped[float | None] = mapped_column()
    n_bads: Mapped[int | None] = mapped_column(Integer)
    bads: Mapped[float | None] = mapped_column()
    share: Mapped[float | None] = mapped_column()


class BaselineFigure(Base):
    """A headline figure of the baseline sample (KS, AUC, Gini, IV per characteristic)."""

    __tablename__ = "baseline_figures"
    __table_args__ = (UniqueConstraint("baseline_id", "name", "variable", "segment"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    baseline_id: Mapped[int] = mapped_column(ForeignKey("baselines.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(SHORT * 2))
    variable: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    variable_full: Mapped[str | None] = mapped_column(Text)
    segment: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    segment_full: Mapped[str | None] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column()
    reason: Mapped[str | None] = mapped_column(Text)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Run(Base):
    """One monitoring run of a model as of a date; at most one per (model, as-of date)."""

    __tablename__ = "runs"
    __table_args__ = (
        UniqueConstraint("model_id", "as_of"),
        CheckConstraint(_in("status", RUN_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    as_of: Mapped[dt.date] = mapped_column(Date)
    status: Mapped[str] = mapped_column(String(SHORT))
    started_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column()
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column()
    owner: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    baseline_id: Mapped[int | None] = mapped_column(ForeignKey("baselines.id"))
    n_current: Mapped[int | None] = mapped_column(Integer)
    n_matured: Mapped[int | None] = mapped_column(Integer)
    n_unmatured: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    riskmon_version: Mapped[str] = mapped_column(String(SHORT))
    config_hash: Mapped[str] = mapped_column(String(64))
    #: what the run measured, as it planned it: windows and the model's columns (JSON object)
    plan: Mapped[dict[str, Any] | None] = mapped_column()
    #: where the run's figures came from: code version, the configuration (secrets masked) and
    #: its fingerprint, each statement's SQL hash and rows, the windows' counts, the baseline
    provenance: Mapped[dict[str, Any] | None] = mapped_column()


class Review(Base):
    """A validator's review of a run. Reviews are only ever appended: riskmon has no way to
    change or delete one; a later review of the same run supersedes it in display only."""

    __tablename__ = "reviews"
    __table_args__ = (
        CheckConstraint(_in("decision", REVIEW_DECISIONS), name="decision"),
        CheckConstraint("assessment IS NULL OR assessment BETWEEN 1 AND 4", name="assessment"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    decision: Mapped[str] = mapped_column(String(SHORT))
    #: the ECB instructions' four-level assessment (1 no deficiency … 4 severe), if given
    assessment: Mapped[int | None] = mapped_column(Integer)
    reviewer: Mapped[str] = mapped_column(String(NAME_LENGTH))
    note: Mapped[str | None] = mapped_column(Text)
    reviewed_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Figure(Base):
    """One figure of a run, with the parameters that produced it."""

    __tablename__ = "figures"
    __table_args__ = (
        UniqueConstraint("run_id", "name", "variable", "segment", "population"),
        CheckConstraint(_in("population", POPULATIONS), name="population"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(SHORT * 2))
    variable: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    variable_full: Mapped[str | None] = mapped_column(Text)
    segment: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    segment_full: Mapped[str | None] = mapped_column(Text)
    population: Mapped[str] = mapped_column(String(SHORT))
    value: Mapped[float | None] = mapped_column()
    reason: Mapped[str | None] = mapped_column(Text)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)


class BinStat(Base):
    """One bin of one variable in a run: counts, shares, WOE and PSI contribution."""

    __tablename__ = "bin_stats"
    __table_args__ = (
        UniqueConstraint("run_id", "variable", "segment", "population", "bin_index"),
        CheckConstraint(_in("population", POPULATIONS), name="population"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    variable: Mapped[str] = mapped_column(String(KEY_LENGTH))
    variable_full: Mapped[str | None] = mapped_column(Text)
    segment: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    segment_full: Mapped[str | None] = mapped_column(Text)
    population: Mapped[str] = mapped_column(String(SHORT))
    bin_index: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(Text)
    lower: Mapped[float | None] = mapped_column()
    upper: Mapped[float | None] = mapped_column()
    n_total: Mapped[int] = mapped_column(Integer)
    total: Mapped[float] = mapped_column()
    n_bads: Mapped[int | None] = mapped_column(Integer)
    bads: Mapped[float | None] = mapped_column()
    expected_share: Mapped[float | None] = mapped_column()
    actual_share: Mapped[float | None] = mapped_column()
    woe: Mapped[float | None] = mapped_column()
    contribution: Mapped[float | None] = mapped_column()
    smoothed: Mapped[bool] = mapped_column(default=False)
    #: the per-bin fields a figure family needs beyond the columns above (JSON object)
    extra: Mapped[dict[str, Any] | None] = mapped_column()


class Alert(Base):
    """The outcome of one alert rule in a run, and whether it has been notified."""

    __tablename__ = "alerts"
    __table_args__ = (
        UniqueConstraint("run_id", "rule", "variable", "segment"),
        CheckConstraint(_in("status", ALERT_STATUSES), name="status"),
        CheckConstraint(_in("notify_state", NOTIFY_STATES), name="notify_state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(SHORT * 2))
    variable: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    variable_full: Mapped[str | None] = mapped_column(Text)
    segment: Mapped[str] = mapped_column(String(KEY_LENGTH), default="")
    segment_full: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(SHORT))
    value: Mapped[float | None] = mapped_column()
    thresholds: Mapped[dict[str, Any]] = mapped_column(default=dict)
    message: Mapped[str] = mapped_column(Text, default="")
    notify_state: Mapped[str] = mapped_column(String(SHORT), default="pending")
    notify_attempts: Mapped[int] = mapped_column(Integer, default=0)
    notify_error: Mapped[str | None] = mapped_column(Text)
    notified_at: Mapped[dt.datetime | None] = mapped_column()


class Delivery(Base):
    """One notification of a run to one channel: queued with the run (pending), taken by the
    process sending it (sending), then sent, or failed and retried later. For a delivery not
    sent yet, ``last_attempt_at`` is when it was queued or taken."""

    __tablename__ = "deliveries"
    __table_args__ = (
        UniqueConstraint("run_id", "channel"),
        CheckConstraint(_in("state", DELIVERY_STATES), name="state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(NAME_LENGTH))
    state: Mapped[str] = mapped_column(String(SHORT))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    last_attempt_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[dt.datetime | None] = mapped_column()


class DayCell(Base):
    """A model's collect sums for one population on one score day (``riskmon.collect.days``):
    what a later run adds instead of reading the day again. ``digest`` fingerprints what the
    sums depend on (columns, bins, baseline); cells of another digest are not used."""

    __tablename__ = "day_cells"
    __table_args__ = (UniqueConstraint("model_id", "population", "day"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    population: Mapped[str] = mapped_column(String(NAME_LENGTH))
    day: Mapped[dt.date] = mapped_column(Date)
    digest: Mapped[str] = mapped_column(String(64))
    cells: Mapped[dict[str, Any]] = mapped_column()
    read_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
