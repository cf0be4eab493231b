"""Honest runs and a chain that covers everything.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

- ``eval_runs.status`` may be ``partial`` (stopped early: -x, a crashed worker, a failed write);
- ``eval_runs.golden_seq``: the chain position of the golden set a run was scored against;
- ``eval_chain`` takes ``golden`` entries, and records each entry's ``format`` (1 for every
  entry written before this revision) and the id of the key that HMAC-ed it (``key_id``);
- the golden set already stored is chained once, as a backfilled golden entry: from here on
  ``screeneval verify`` names any edit to a case, an expectation, a rating, a rubric or variants.

The tables are written out in full (a migration is a snapshot): on SQLite a changed CHECK
constraint means copying the table, which needs its exact shape. ``upgrade`` in the store turns
SQLite's foreign keys off around the migration (SQLite's documented way to copy a referenced
table) and checks them before committing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from pytest_screeneval.store.chain.payloads import (
    ACCEPTANCE_FIELDS,
    REVIEW_FIELDS,
    RUN_FIELDS,
    SCORE_FIELDS,
)
from pytest_screeneval.store.chain.queries import ChainTables, GoldenTables, append_golden

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_STATUS = "status IN ('running', 'complete', 'interrupted')"
_NEW_STATUS = "status IN ('running', 'complete', 'partial', 'interrupted')"
_OLD_KIND = "kind IN ('run', 'acceptance', 'review')"
_NEW_KIND = "kind IN ('run', 'acceptance', 'review', 'golden')"


def _runs_0002(status_check: str) -> sa.Table:
    return sa.Table(
        "eval_runs",
        sa.MetaData(),
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
        sa.Column("verdict", sa.Text(), nullable=True),
        sa.CheckConstraint(status_check, name="ck_eval_runs_status"),
        sa.ForeignKeyConstraint(
            ["baseline_run_id"],
            ["eval_runs.run_id"],
            name="fk_eval_runs_baseline_run_id_eval_runs",
        ),
        sa.PrimaryKeyConstraint("run_id", name="pk_eval_runs"),
    )


def _chain_0002(kind_check: str) -> sa.Table:
    return sa.Table(
        "eval_chain",
        sa.MetaData(),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("ref_id", sa.Integer(), nullable=False),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=True),
        sa.Column("rows_hash", sa.Text(), nullable=True),
        sa.Column("rows_index", sa.Text(), nullable=True),
        sa.Column("prev_hash", sa.Text(), nullable=False),
        sa.Column("entry_hash", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.Text(), nullable=False),
        sa.Column("backfilled", sa.Boolean(), nullable=False),
        sa.CheckConstraint(kind_check, name="ck_eval_chain_kind"),
        sa.UniqueConstraint("kind", "ref_id", name="uq_eval_chain_kind_ref_id"),
        sa.UniqueConstraint("prev_hash", name="uq_eval_chain_prev_hash"),
        sa.PrimaryKeyConstraint("seq", name="pk_eval_chain"),
    )


def _snapshot(name: str, columns: Sequence[str]) -> sa.TableClause:
    return sa.table(name, *(sa.column(column) for column in columns))


def upgrade() -> None:
    with op.batch_alter_table("eval_runs", copy_from=_runs_0002(_OLD_STATUS)) as batch:
        batch.add_column(sa.Column("golden_seq", sa.Integer(), nullable=True))
        batch.drop_constraint("ck_eval_runs_status", type_="check")
        batch.create_check_constraint("ck_eval_runs_status", _NEW_STATUS)
    with op.batch_alter_table("eval_chain", copy_from=_chain_0002(_OLD_KIND)) as batch:
        batch.add_column(
            sa.Column("format", sa.Integer(), nullable=False, server_default=sa.text("1"))
        )
        batch.add_column(sa.Column("key_id", sa.Text(), nullable=True))
        batch.drop_constraint("ck_eval_chain_kind", type_="check")
        batch.create_check_constraint("ck_eval_chain_kind", _NEW_KIND)

    golden = GoldenTables(
        cases=_snapshot(
            "eval_cases",
            (
                "case_id",
                "label",
                "slices",
                "rubric_id",
                "input_text",
                "input_sha256",
                "source",
                "attributes",
                "demographics",
                "xfail",
                "frozen_at",
                "retired_at",
                "retired_by",
            ),
        ),
        expectations=_snapshot(
            "eval_expectations",
            ("id", "case_id", "criterion", "expected", "set_by", "set_at", "recorded_at"),
        ),
        ratings=_snapshot(
            "eval_ratings", ("id", "case_id", "criterion", "rater", "score", "recorded_at")
        ),
        rubrics=_snapshot("eval_rubrics", ("rubric_id", "sha", "version", "body", "stored_at")),
        variants=_snapshot("eval_variants", ("id", "sha", "body", "stored_at")),
    )
    tables = ChainTables(
        runs=_snapshot("eval_runs", RUN_FIELDS),
        scores=_snapshot("eval_scores", ("run_id", *SCORE_FIELDS)),
        acceptances=_snapshot("eval_acceptances", ACCEPTANCE_FIELDS),
        reviews=_snapshot("eval_reviews", REVIEW_FIELDS),
        chain=_snapshot(
            "eval_chain",
            (
                "seq",
                "kind",
                "ref_id",
                "record",
                "row_count",
                "rows_hash",
                "rows_index",
                "prev_hash",
                "entry_hash",
                "recorded_at",
                "backfilled",
                "format",
                "key_id",
            ),
        ),
        golden=golden,
    )
    append_golden(
        op.get_bind(),
        tables,
        before={},
        reason="the golden set as stored at the upgrade to schema revision 0003",
        recorded_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        backfilled=True,
    )


def downgrade() -> None:
    op.execute("DELETE FROM eval_chain WHERE kind = 'golden'")
    op.execute("UPDATE eval_runs SET status = 'interrupted' WHERE status = 'partial'")
    with op.batch_alter_table("eval_chain", copy_from=_chain_0002(_NEW_KIND)) as batch:
        batch.drop_constraint("ck_eval_chain_kind", type_="check")
        batch.create_check_constraint("ck_eval_chain_kind", _OLD_KIND)
    with op.batch_alter_table("eval_chain") as batch:
        batch.drop_column("key_id")
        batch.drop_column("format")
    with op.batch_alter_table("eval_runs", copy_from=_runs_0002(_NEW_STATUS)) as batch:
        batch.drop_constraint("ck_eval_runs_status", type_="check")
        batch.create_check_constraint("ck_eval_runs_status", _OLD_STATUS)
    with op.batch_alter_table("eval_runs") as batch:
        batch.drop_column("golden_seq")
