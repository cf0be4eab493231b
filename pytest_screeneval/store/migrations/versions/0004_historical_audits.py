"""Bias audits on historical data, recorded and chained.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

- ``eval_historical_audits``: one row per ``screeneval audit FILE`` recorded: the export's name,
  sha256, size, rows read, applicants counted, bad rows, first and last date, how its columns
  were read, the run it was reported beside, who ran it, when, and until when it is valid;
- ``eval_chain`` takes ``historical`` entries (each audit's record, hashed into the chain).

The chain table is written out in full (a migration is a snapshot): on SQLite a changed CHECK
constraint means copying the table, which needs its exact shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_KIND = "kind IN ('run', 'acceptance', 'review', 'golden')"
_NEW_KIND = "kind IN ('run', 'acceptance', 'review', 'golden', 'historical')"


def _chain_0003(kind_check: str) -> sa.Table:
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
        sa.Column("format", sa.Integer(), nullable=False, server_default=sa.text("1")),
        sa.Column("key_id", sa.Text(), nullable=True),
        sa.CheckConstraint(kind_check, name="ck_eval_chain_kind"),
        sa.UniqueConstraint("kind", "ref_id", name="uq_eval_chain_kind_ref_id"),
        sa.UniqueConstraint("prev_hash", name="uq_eval_chain_prev_hash"),
        sa.PrimaryKeyConstraint("seq", name="pk_eval_chain"),
    )


def upgrade() -> None:
    op.create_table(
        "eval_historical_audits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("file_name", sa.Text(), nullable=False),
        sa.Column("file_sha256", sa.Text(), nullable=False),
        sa.Column("file_format", sa.Text(), nullable=False),
        sa.Column("file_size", sa.Integer(), nullable=False),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.Column("applicants", sa.Integer(), nullable=False),
        sa.Column("bad_rows", sa.Integer(), nullable=False),
        sa.Column("first_date", sa.Text(), nullable=True),
        sa.Column("last_date", sa.Text(), nullable=True),
        sa.Column("columns", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("audited_by", sa.Text(), nullable=False),
        sa.Column("audited_at", sa.Text(), nullable=False),
        sa.Column("audit_date", sa.Text(), nullable=False),
        sa.Column("valid_until", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["eval_runs.run_id"], name="fk_eval_historical_audits_run_id_eval_runs"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_eval_historical_audits"),
    )
    with op.batch_alter_table("eval_chain", copy_from=_chain_0003(_OLD_KIND)) as batch:
        batch.drop_constraint("ck_eval_chain_kind", type_="check")
        batch.create_check_constraint("ck_eval_chain_kind", _NEW_KIND)


def downgrade() -> None:
    op.execute("DELETE FROM eval_chain WHERE kind = 'historical'")
    with op.batch_alter_table("eval_chain", copy_from=_chain_0003(_NEW_KIND)) as batch:
        batch.drop_constraint("ck_eval_chain_kind", type_="check")
        batch.create_check_constraint("ck_eval_chain_kind", _OLD_KIND)
    op.drop_table("eval_historical_audits")
