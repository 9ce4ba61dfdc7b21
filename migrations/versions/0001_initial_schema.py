"""Initial schema: models, baselines (versioned bins and figures), runs, figures, bins, alerts.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("score_direction", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
        sa.UniqueConstraint("name", name=op.f("uq_models_name")),
    )
    op.create_table(
        "baselines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.Date(), nullable=False),
        sa.Column("window_end", sa.Date(), nullable=False),
        sa.Column("frozen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("n_bads", sa.Integer(), nullable=True),
        sa.Column("riskmon_version", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["models.id"],
            name=op.f("fk_baselines_model_id_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_baselines")),
        sa.UniqueConstraint("model_id", "version", name=op.f("uq_baselines_model_id_version")),
    )
    op.create_table(
        "baseline_figures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("baseline_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("variable", sa.String(length=200), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("value", sa.Double(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["baseline_id"],
            ["baselines.id"],
            name=op.f("fk_baseline_figures_baseline_id_baselines"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_baseline_figures")),
        sa.UniqueConstraint(
            "baseline_id",
            "name",
            "variable",
            "segment",
            name=op.f("uq_baseline_figures_baseline_id_name_variable_segment"),
        ),
    )
    op.create_table(
        "baseline_variables",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("baseline_id", sa.Integer(), nullable=False),
        sa.Column("variable", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("binning", sa.JSON(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["baseline_id"],
            ["baselines.id"],
            name=op.f("fk_baseline_variables_baseline_id_baselines"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_baseline_variables")),
        sa.UniqueConstraint(
            "baseline_id", "variable", name=op.f("uq_baseline_variables_baseline_id_variable")
        ),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("owner", sa.String(length=200), nullable=True),
        sa.Column("baseline_id", sa.Integer(), nullable=True),
        sa.Column("n_current", sa.Integer(), nullable=True),
        sa.Column("n_matured", sa.Integer(), nullable=True),
        sa.Column("n_unmatured", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("riskmon_version", sa.String(length=32), nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'succeeded', 'failed')", name=op.f("ck_runs_status")
        ),
        sa.ForeignKeyConstraint(
            ["baseline_id"], ["baselines.id"], name=op.f("fk_runs_baseline_id_baselines")
        ),
        sa.ForeignKeyConstraint(
            ["model_id"], ["models.id"], name=op.f("fk_runs_model_id_models"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("model_id", "as_of", name=op.f("uq_runs_model_id_as_of")),
    )
    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("rule", sa.String(length=64), nullable=False),
        sa.Column("variable", sa.String(length=200), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("value", sa.Double(), nullable=True),
        sa.Column("thresholds", sa.JSON(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("notify_state", sa.String(length=32), nullable=False),
        sa.Column("notify_attempts", sa.Integer(), nullable=False),
        sa.Column("notify_error", sa.Text(), nullable=True),
        sa.Column("notified_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "notify_state IN ('pending', 'sent', 'failed', 'not_needed')",
            name=op.f("ck_alerts_notify_state"),
        ),
        sa.CheckConstraint(
            "status IN ('GREEN', 'AMBER', 'RED', 'NOT_EVALUABLE')", name=op.f("ck_alerts_status")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_alerts_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alerts")),
        sa.UniqueConstraint(
            "run_id",
            "rule",
            "variable",
            "segment",
            name=op.f("uq_alerts_run_id_rule_variable_segment"),
        ),
    )
    op.create_table(
        "baseline_bins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("variable_id", sa.Integer(), nullable=False),
        sa.Column("bin_index", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("n_total", sa.Integer(), nullable=False),
        sa.Column("total", sa.Double(), nullable=False),
        sa.Column("n_bads", sa.Integer(), nullable=True),
        sa.Column("bads", sa.Double(), nullable=True),
        sa.Column("share", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["variable_id"],
            ["baseline_variables.id"],
            name=op.f("fk_baseline_bins_variable_id_baseline_variables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_baseline_bins")),
        sa.UniqueConstraint(
            "variable_id", "bin_index", name=op.f("uq_baseline_bins_variable_id_bin_index")
        ),
    )
    op.create_table(
        "bin_stats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("variable", sa.String(length=200), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("population", sa.String(length=32), nullable=False),
        sa.Column("bin_index", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("lower", sa.Double(), nullable=True),
        sa.Column("upper", sa.Double(), nullable=True),
        sa.Column("n_total", sa.Integer(), nullable=False),
        sa.Column("total", sa.Double(), nullable=False),
        sa.Column("n_bads", sa.Integer(), nullable=True),
        sa.Column("bads", sa.Double(), nullable=True),
        sa.Column("expected_share", sa.Double(), nullable=True),
        sa.Column("actual_share", sa.Double(), nullable=True),
        sa.Column("woe", sa.Double(), nullable=True),
        sa.Column("contribution", sa.Double(), nullable=True),
        sa.Column("smoothed", sa.Boolean(), nullable=False),
        sa.CheckConstraint(
            "population IN ('current', 'performance', 'baseline')",
            name=op.f("ck_bin_stats_population"),
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_bin_stats_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bin_stats")),
        sa.UniqueConstraint(
            "run_id",
            "variable",
            "segment",
            "population",
            "bin_index",
            name=op.f("uq_bin_stats_run_id_variable_segment_population_bin_index"),
        ),
    )
    op.create_table(
        "figures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("variable", sa.String(length=200), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("population", sa.String(length=32), nullable=False),
        sa.Column("value", sa.Double(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.CheckConstraint(
            "population IN ('current', 'performance', 'baseline')",
            name=op.f("ck_figures_population"),
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_figures_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_figures")),
        sa.UniqueConstraint(
            "run_id",
            "name",
            "variable",
            "segment",
            "population",
            name=op.f("uq_figures_run_id_name_variable_segment_population"),
        ),
    )


def downgrade() -> None:
    op.drop_table("figures")
    op.drop_table("bin_stats")
    op.drop_table("baseline_bins")
    op.drop_table("alerts")
    op.drop_table("runs")
    op.drop_table("baseline_variables")
    op.drop_table("baseline_figures")
    op.drop_table("baselines")
    op.drop_table("models")
