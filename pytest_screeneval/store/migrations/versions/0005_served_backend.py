"""What the provider served, on every score row.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

- ``eval_scores.served_model``: the model the provider said answered this call (the run row
  keeps the set of them, as before);
- ``eval_scores.system_fingerprint``: the provider's own record of the backend configuration
  that served it, so a backend change within a run or against the baseline can be seen.

Both are nullable: rows written before this revision, reused rows and scorers that do not say
keep NULL. Plain ``ADD COLUMN`` on every backend (no table copy on SQLite).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("eval_scores", sa.Column("served_model", sa.Text(), nullable=True))
    op.add_column("eval_scores", sa.Column("system_fingerprint", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("eval_scores") as batch:
        batch.drop_column("system_fingerprint")
        batch.drop_column("served_model")
