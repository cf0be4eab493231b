"""The rationale judge's verdicts, recorded and chained.

Revision ID: 0006
Revises: 0005
Create Date: 2027-01-15

- ``eval_rationale_judgements``: one row per judgement asked of an LLM judge of the rationales
  (``screeneval_rationale_judge``): the case, criterion, score, the sha256 of the resume text
  and of the rationale, the judge's identity (model as requested and as served, prompt sha,
  temperature, response format), what it found (protected attribute with category and phrase,
  unsupported claim) or the error that kept it from a finding, the raw answer, tokens, attempts,
  latency and when; indexed by the judge and the resume for the cache;
- ``eval_chain`` takes ``judgement`` entries (each verdict's record, hashed into the chain).

The chain table is written out in full (a migration is a snapshot): on SQLite a changed CHECK
constraint means copying the table, which needs its exact shape (as in 0004).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_KIND = "kind IN ('run', 'acceptance', 'review', 'golden', 'historical')"
_NEW_KIND = "kind IN ('run', 'acceptance', 'review', 'golden', 'historical', 'judgement')"


def _chain_0005(kind_check: str) -> sa.Table:
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
        "eval_rationale_judgements",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("criterion", sa.Text(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("input_sha256", sa.Text(), nullable=False),
        sa.Column("rationale_sha256", sa.Text(), nullable=False),
        sa.Column("judge_model", sa.Text(), nullable=False),
        sa.Column("served_model", sa.Text(), nullable=True),
        sa.Column("prompt_sha", sa.Text(), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("response_format", sa.Text(), nullable=False),
        sa.Column("protected", sa.Boolean(), nullable=True),
        sa.Column("protected_category", sa.Text(), nullable=False),
        sa.Column("protected_phrase", sa.Text(), nullable=False),
        sa.Column("ungrounded", sa.Boolean(), nullable=True),
        sa.Column("claim", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("judged_at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["eval_runs.run_id"], name="fk_eval_rationale_judgements_run_id_eval_runs"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_eval_rationale_judgements"),
    )
    op.create_index(
        "ix_eval_rationale_judgements_key",
        "eval_rationale_judgements",
        ["judge_model", "prompt_sha", "input_sha256", "criterion"],
    )
    with op.batch_alter_table("eval_chain", copy_from=_chain_0005(_OLD_KIND)) as batch:
        batch.drop_constraint("ck_eval_chain_kind", type_="check")
        batch.create_check_constraint("ck_eval_chain_kind", _NEW_KIND)


def downgrade() -> None:
    op.execute("DELETE FROM eval_chain WHERE kind = 'judgement'")
    with op.batch_alter_table("eval_chain", copy_from=_chain_0005(_NEW_KIND)) as batch:
        batch.drop_constraint("ck_eval_chain_kind", type_="check")
        batch.create_check_constraint("ck_eval_chain_kind", _OLD_KIND)
    op.drop_index("ix_eval_rationale_judgements_key", table_name="eval_rationale_judgements")
    op.drop_table("eval_rationale_judgements")
