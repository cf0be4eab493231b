"""The initial run store: golden set, runs, scores, acceptances, reviews.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Written out in full rather than generated from ``store_schema.metadata``: a migration is a
snapshot and must not change when the tables module does. A test holds the two equal.
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
        "eval_rubrics",
        sa.Column("rubric_id", sa.Text(), nullable=False),
        sa.Column("sha", sa.Text(), nullable=False),
        sa.Column("version", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("stored_at", sa.Text(), nullable=False),
        sa.Column("synced_at", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("rubric_id", "sha", name="pk_eval_rubrics"),
    )
    op.create_table(
        "eval_variants",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("sha", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("stored_at", sa.Text(), nullable=False),
        sa.Column("synced_at", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_eval_variants"),
        sa.UniqueConstraint("sha", name="uq_eval_variants_sha"),
    )
    op.create_table(
        "eval_cases",
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("slices", sa.Text(), nullable=False),
        sa.Column("rubric_id", sa.Text(), nullable=False),
        sa.Column("input_text", sa.Text(), nullable=False),
        sa.Column("input_sha256", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("attributes", sa.Text(), nullable=False),
        sa.Column("demographics", sa.Text(), nullable=False),
        sa.Column("xfail", sa.Text(), nullable=False),
        sa.Column("frozen_at", sa.Text(), nullable=False),
        sa.Column("retired_at", sa.Text(), nullable=True),
        sa.Column("retired_by", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("case_id", name="pk_eval_cases"),
    )
    op.create_table(
        "eval_expectations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("criterion", sa.Text(), nullable=False),
        sa.Column("expected", sa.Integer(), nullable=False),
        sa.Column("set_by", sa.Text(), nullable=False),
        sa.Column("set_at", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"],
            ["eval_cases.case_id"],
            name="fk_eval_expectations_case_id_eval_cases",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_eval_expectations"),
    )
    op.create_index("ix_eval_expectations_case_id", "eval_expectations", ["case_id"], unique=False)
    op.create_table(
        "eval_ratings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("criterion", sa.Text(), nullable=False),
        sa.Column("rater", sa.Text(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("recorded_at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"], ["eval_cases.case_id"], name="fk_eval_ratings_case_id_eval_cases"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_eval_ratings"),
    )
    op.create_index("ix_eval_ratings_case_id", "eval_ratings", ["case_id"], unique=False)
    op.create_table(
        "eval_runs",
        sa.Column("run_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scorer", sa.Text(), nullable=False),
        sa.Column("model_id", sa.Text(), nullable=False),
        sa.Column("served_model", sa.Text(), nullable=True),
        sa.Column("prompt_sha", sa.Text(), nullable=False),
        sa.Column("rubric_id", sa.Text(), nullable=False),
        sa.Column("rubric_sha", sa.Text(), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("golden_sha", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("started_at", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.Text(), nullable=True),
        sa.Column("plugin_version", sa.Text(), nullable=False),
        sa.Column("vcs_commit", sa.Text(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("baseline_run_id", sa.Integer(), nullable=True),
        sa.Column("selection", sa.Text(), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("host", sa.Text(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'complete', 'interrupted')", name="ck_eval_runs_status"
        ),
        sa.ForeignKeyConstraint(
            ["baseline_run_id"],
            ["eval_runs.run_id"],
            name="fk_eval_runs_baseline_run_id_eval_runs",
        ),
        sa.PrimaryKeyConstraint("run_id", name="pk_eval_runs"),
    )
    op.create_table(
        "eval_scores",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("variant_key", sa.Text(), nullable=False),
        sa.Column("repeat_index", sa.Integer(), nullable=False),
        sa.Column("criterion", sa.Text(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("input_sha256", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("reused_from_run", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_eval_scores"),
        sa.UniqueConstraint(
            "run_id",
            "case_id",
            "variant_key",
            "repeat_index",
            "criterion",
            name="uq_eval_scores_item",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["eval_runs.run_id"], name="fk_eval_scores_run_id_eval_runs"
        ),
    )
    op.create_index("ix_eval_scores_run_id", "eval_scores", ["run_id"], unique=False)
    op.create_table(
        "eval_acceptances",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("accepted_by", sa.Text(), nullable=False),
        sa.Column("accepted_at", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("previous_baseline_run_id", sa.Integer(), nullable=True),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_eval_acceptances"),
        sa.UniqueConstraint("run_id", name="uq_eval_acceptances_run_id"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["eval_runs.run_id"], name="fk_eval_acceptances_run_id_eval_runs"
        ),
    )
    op.create_table(
        "eval_reviews",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("baseline_run_id", sa.Integer(), nullable=False),
        sa.Column("before", sa.Text(), nullable=False),
        sa.Column("after", sa.Text(), nullable=False),
        sa.Column("reviewed_by", sa.Text(), nullable=False),
        sa.Column("reviewed_at", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["eval_runs.run_id"], name="fk_eval_reviews_run_id_eval_runs"
        ),
        sa.ForeignKeyConstraint(
            ["baseline_run_id"],
            ["eval_runs.run_id"],
            name="fk_eval_reviews_baseline_run_id_eval_runs",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_eval_reviews"),
    )
    op.create_index(
        "ix_eval_reviews_baseline_case",
        "eval_reviews",
        ["baseline_run_id", "case_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_eval_reviews_baseline_case", table_name="eval_reviews")
    op.drop_table("eval_reviews")
    op.drop_table("eval_acceptances")
    op.drop_index("ix_eval_scores_run_id", table_name="eval_scores")
    op.drop_table("eval_scores")
    op.drop_table("eval_runs")
    op.drop_index("ix_eval_ratings_case_id", table_name="eval_ratings")
    op.drop_table("eval_ratings")
    op.drop_index("ix_eval_expectations_case_id", table_name="eval_expectations")
    op.drop_table("eval_expectations")
    op.drop_table("eval_cases")
    op.drop_table("eval_variants")
    op.drop_table("eval_rubrics")
