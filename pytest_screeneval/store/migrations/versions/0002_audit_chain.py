"""The audit chain: ``eval_chain``, backfilled from the runs, acceptances and reviews already kept.

Revision ID: 0002
Revises: 0001
Create Date: 2025-02-01

The table is written out in full (a migration is a snapshot). The backfill reads the other tables
through column lists of its own, so it keeps working when later revisions add columns to them.
Backfilled entries carry ``backfilled = true``: they vouch for the rows as they were at the
upgrade, not as they were when each run finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from pytest_screeneval.store.chain.payloads import ACCEPTANCE_FIELDS, REVIEW_FIELDS, SCORE_FIELDS
from pytest_screeneval.store.chain.payloads import RUN_FIELDS_V1 as RUN_FIELDS
from pytest_screeneval.store.chain.queries import ChainTables, backfill

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _snapshot(name: str, columns: Sequence[str]) -> sa.TableClause:
    return sa.table(name, *(sa.column(column) for column in columns))


def upgrade() -> None:
    # the gates and crossings decided when a run finishes; runs of 0001 have none
    op.add_column("eval_runs", sa.Column("verdict", sa.Text(), nullable=True))
    chain = op.create_table(
        "eval_chain",
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
        sa.CheckConstraint("kind IN ('run', 'acceptance', 'review')", name="ck_eval_chain_kind"),
        sa.PrimaryKeyConstraint("seq", name="pk_eval_chain"),
        sa.UniqueConstraint("kind", "ref_id", name="uq_eval_chain_kind_ref_id"),
        sa.UniqueConstraint("prev_hash", name="uq_eval_chain_prev_hash"),
    )
    tables = ChainTables(
        runs=_snapshot("eval_runs", RUN_FIELDS),
        scores=_snapshot("eval_scores", ("run_id", *SCORE_FIELDS)),
        acceptances=_snapshot("eval_acceptances", ACCEPTANCE_FIELDS),
        reviews=_snapshot("eval_reviews", REVIEW_FIELDS),
        chain=chain,
    )
    # format 1: the entries this revision has always written (0003 brings format 2)
    backfill(
        op.get_bind(),
        tables,
        recorded_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        chain_format=1,
    )


def downgrade() -> None:
    op.drop_table("eval_chain")
    with op.batch_alter_table("eval_runs") as batch:
        batch.drop_column("verdict")
