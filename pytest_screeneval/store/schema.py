"""The run store's tables, as SQLAlchemy Core, in one ``MetaData``.

Portable on purpose: every text is ``Text``, every timestamp is ISO-8601 text with its timezone
and every structured value is JSON text, so a row reads back byte-identical from SQLite and from
PostgreSQL. The Alembic revisions (``0001``, then ``0002`` adding ``eval_chain``, then ``0003``
adding the ``partial`` status, golden chain entries and the chain key, then ``0004`` adding
``eval_historical_audits`` and its chain entries, then ``0005`` adding the served model and
system fingerprint of each score row, then ``0006`` adding ``eval_rationale_judgements`` and
its chain entries) create exactly these tables; a test holds them equal.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = [
    "ALEMBIC_VERSION_TABLE",
    "SCHEMA_REVISION",
    "acceptances",
    "alembic_version",
    "cases",
    "chain",
    "expectations",
    "historical_audits",
    "judgements",
    "metadata",
    "ratings",
    "reviews",
    "rubrics",
    "runs",
    "scores",
    "variants",
]

# The Alembic head this code reads and writes; bump it with every new migration script.
SCHEMA_REVISION = "0006"
ALEMBIC_VERSION_TABLE = "alembic_version"

# Constraint names are explicit so migrations can refer to them on every backend.
metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

rubrics = sa.Table(
    "eval_rubrics",
    metadata,
    sa.Column("rubric_id", sa.Text, primary_key=True),
    sa.Column("sha", sa.Text, primary_key=True),
    sa.Column("version", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # canonical JSON of Rubric.as_dict()
    sa.Column("stored_at", sa.Text, nullable=False),
    # the last sync that presented this rubric: "the latest rubric" is the last one synced
    sa.Column("synced_at", sa.Text, nullable=False),
)

variants = sa.Table(
    "eval_variants",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("sha", sa.Text, nullable=False, unique=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("stored_at", sa.Text, nullable=False),
    sa.Column("synced_at", sa.Text, nullable=False),
)

cases = sa.Table(
    "eval_cases",
    metadata,
    sa.Column("case_id", sa.Text, primary_key=True),
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("slices", sa.Text, nullable=False),  # JSON list
    sa.Column("rubric_id", sa.Text, nullable=False),
    sa.Column("input_text", sa.Text, nullable=False),
    sa.Column("input_sha256", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("attributes", sa.Text, nullable=False),  # JSON object
    sa.Column("demographics", sa.Text, nullable=False),  # JSON object
    sa.Column("xfail", sa.Text, nullable=False),  # JSON object
    sa.Column("frozen_at", sa.Text, nullable=False),
    sa.Column("retired_at", sa.Text, nullable=True),
    sa.Column("retired_by", sa.Text, nullable=True),
)

expectations = sa.Table(
    "eval_expectations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("case_id", sa.Text, sa.ForeignKey("eval_cases.case_id"), nullable=False, index=True),
    sa.Column("criterion", sa.Text, nullable=False),
    sa.Column("expected", sa.Integer, nullable=False),
    sa.Column("set_by", sa.Text, nullable=False),
    sa.Column("set_at", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.Text, nullable=False),
)

ratings = sa.Table(
    "eval_ratings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("case_id", sa.Text, sa.ForeignKey("eval_cases.case_id"), nullable=False, index=True),
    sa.Column("criterion", sa.Text, nullable=False),
    sa.Column("rater", sa.Text, nullable=False),
    # NULL records that the rater's rating was withdrawn from the case file
    sa.Column("score", sa.Integer, nullable=True),
    sa.Column("recorded_at", sa.Text, nullable=False),
)

runs = sa.Table(
    "eval_runs",
    metadata,
    sa.Column("run_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("scorer", sa.Text, nullable=False),
    sa.Column("model_id", sa.Text, nullable=False),
    sa.Column("served_model", sa.Text, nullable=True),
    sa.Column("prompt_sha", sa.Text, nullable=False),
    sa.Column("rubric_id", sa.Text, nullable=False),
    sa.Column("rubric_sha", sa.Text, nullable=False),
    sa.Column("temperature", sa.Float, nullable=False),
    sa.Column("golden_sha", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("started_at", sa.Text, nullable=False),
    sa.Column("finished_at", sa.Text, nullable=True),
    sa.Column("plugin_version", sa.Text, nullable=False),
    sa.Column("vcs_commit", sa.Text, nullable=True),
    sa.Column("notes", sa.Text, nullable=False),
    sa.Column("baseline_run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=True),
    sa.Column("selection", sa.Text, nullable=False),
    sa.Column("config", sa.Text, nullable=False),  # JSON object
    sa.Column("host", sa.Text, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    # JSON: the gates and crossings decided when the run finished (revision 0002)
    sa.Column("verdict", sa.Text, nullable=True),
    # the chain position (seq) of the golden set the run was scored against (revision 0003)
    sa.Column("golden_seq", sa.Integer, nullable=True),
    # partial: stopped early (-x, a crashed worker, a failed write), so it can never be accepted
    sa.CheckConstraint(
        "status IN ('running', 'complete', 'partial', 'interrupted')", name="ck_eval_runs_status"
    ),
)

scores = sa.Table(
    "eval_scores",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=False, index=True),
    sa.Column("case_id", sa.Text, nullable=False),
    sa.Column("variant_key", sa.Text, nullable=False),  # '' for the original text
    sa.Column("repeat_index", sa.Integer, nullable=False),
    sa.Column("criterion", sa.Text, nullable=False),
    sa.Column("score", sa.Integer, nullable=True),
    sa.Column("rationale", sa.Text, nullable=False),
    sa.Column("evidence", sa.Text, nullable=False),  # JSON list
    sa.Column("confidence", sa.Float, nullable=True),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("input_sha256", sa.Text, nullable=False),
    sa.Column("prompt_tokens", sa.Integer, nullable=False),
    sa.Column("completion_tokens", sa.Integer, nullable=False),
    sa.Column("reused_from_run", sa.Integer, nullable=True),
    # what the provider said served this call (revision 0005); NULL when it did not say
    sa.Column("served_model", sa.Text, nullable=True),
    sa.Column("system_fingerprint", sa.Text, nullable=True),
    # one row per scored item of a run (PostgreSQL caps identifiers at 63 characters)
    sa.UniqueConstraint(
        "run_id", "case_id", "variant_key", "repeat_index", "criterion", name="uq_eval_scores_item"
    ),
)

acceptances = sa.Table(
    "eval_acceptances",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=False, unique=True),
    sa.Column("accepted_by", sa.Text, nullable=False),
    sa.Column("accepted_at", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("previous_baseline_run_id", sa.Integer, nullable=True),
    sa.Column("forced", sa.Boolean, nullable=False),
)

reviews = sa.Table(
    "eval_reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=False),
    sa.Column("case_id", sa.Text, nullable=False),
    sa.Column("target", sa.Text, nullable=False),  # a criterion name or 'decision'
    sa.Column("baseline_run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=False),
    sa.Column("before", sa.Text, nullable=False),
    sa.Column("after", sa.Text, nullable=False),
    sa.Column("reviewed_by", sa.Text, nullable=False),
    sa.Column("reviewed_at", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False),
    sa.Index("ix_eval_reviews_baseline_case", "baseline_run_id", "case_id"),
)

# The audit chain (revision 0002): one entry per finished run, acceptance and review, each
# hashing its record (and a run's score rows) with the previous entry's hash; see chain/payloads.py.
chain = sa.Table(
    "eval_chain",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.Text, nullable=False),  # 'run', 'acceptance' or 'review'
    sa.Column("ref_id", sa.Integer, nullable=False),  # run_id, or the acceptance's / review's id
    sa.Column("record", sa.Text, nullable=False),  # canonical JSON of the record when chained
    sa.Column("row_count", sa.Integer, nullable=True),  # a run's score rows
    sa.Column("rows_hash", sa.Text, nullable=True),
    sa.Column("rows_index", sa.Text, nullable=True),  # JSON: case -> [row count, digest prefix]
    sa.Column("prev_hash", sa.Text, nullable=False),
    sa.Column("entry_hash", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.Text, nullable=False),
    sa.Column("backfilled", sa.Boolean, nullable=False),  # computed at an upgrade
    # revision 0003: the entry's format (1 before it) and the id of the key that HMAC-ed it
    sa.Column("format", sa.Integer, nullable=False, server_default=sa.text("1")),
    sa.Column("key_id", sa.Text, nullable=True),
    sa.CheckConstraint(
        "kind IN ('run', 'acceptance', 'review', 'golden', 'historical', 'judgement')",
        name="ck_eval_chain_kind",
    ),
    # one entry per record, and no two entries extending the same one (no fork)
    sa.UniqueConstraint("kind", "ref_id", name="uq_eval_chain_kind_ref_id"),
    sa.UniqueConstraint("prev_hash", name="uq_eval_chain_prev_hash"),
)

# A bias audit on historical data (revision 0004): the export it read, by its sha256, rows and
# dates, and how it was read; one chain entry each, so a quiet edit of the record shows.
historical_audits = sa.Table(
    "eval_historical_audits",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("file_name", sa.Text, nullable=False),
    sa.Column("file_sha256", sa.Text, nullable=False),
    sa.Column("file_format", sa.Text, nullable=False),
    sa.Column("file_size", sa.Integer, nullable=False),
    sa.Column("rows", sa.Integer, nullable=False),  # data rows read, good and bad
    sa.Column("applicants", sa.Integer, nullable=False),  # good rows: the full sample
    sa.Column("bad_rows", sa.Integer, nullable=False),
    sa.Column("first_date", sa.Text, nullable=True),
    sa.Column("last_date", sa.Text, nullable=True),
    sa.Column("columns", sa.Text, nullable=False),  # JSON: column map, labels, exclusion
    sa.Column("run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=True),
    sa.Column("audited_by", sa.Text, nullable=False),
    sa.Column("audited_at", sa.Text, nullable=False),
    sa.Column("audit_date", sa.Text, nullable=False),
    sa.Column("valid_until", sa.Text, nullable=False),
)

# The rationale judge's verdicts (revision 0006): one row per judgement asked of an LLM judge,
# with the judge's identity, what it found or the error that kept it from a finding; a row with
# no error is reused for the same (judge, resume text, criterion, score, rationale text), so the
# same rationale is never judged twice in a store. One chain entry each.
judgements = sa.Table(
    "eval_rationale_judgements",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("eval_runs.run_id"), nullable=True),
    sa.Column("case_id", sa.Text, nullable=False),
    sa.Column("criterion", sa.Text, nullable=False),
    sa.Column("score", sa.Integer, nullable=False),
    sa.Column("input_sha256", sa.Text, nullable=False),
    sa.Column("rationale_sha256", sa.Text, nullable=False),
    sa.Column("judge_model", sa.Text, nullable=False),  # as requested
    sa.Column("served_model", sa.Text, nullable=True),  # as the provider said
    sa.Column("prompt_sha", sa.Text, nullable=False),
    sa.Column("temperature", sa.Float, nullable=False),
    sa.Column("response_format", sa.Text, nullable=False),
    # NULL when the judgement failed (see error)
    sa.Column("protected", sa.Boolean, nullable=True),
    sa.Column("protected_category", sa.Text, nullable=False),
    sa.Column("protected_phrase", sa.Text, nullable=False),
    sa.Column("ungrounded", sa.Boolean, nullable=True),
    sa.Column("claim", sa.Text, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("raw", sa.Text, nullable=False),
    sa.Column("prompt_tokens", sa.Integer, nullable=False),
    sa.Column("completion_tokens", sa.Integer, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("judged_at", sa.Text, nullable=False),
    sa.Index(
        "ix_eval_rationale_judgements_key",
        "judge_model",
        "prompt_sha",
        "input_sha256",
        "criterion",
    ),
)

# Alembic's own bookkeeping table, declared here so the store can stamp a fresh database and
# read its revision without importing Alembic (opening a store stays cheap).
_alembic_metadata = sa.MetaData()
alembic_version = sa.Table(
    ALEMBIC_VERSION_TABLE,
    _alembic_metadata,
    sa.Column("version_num", sa.String(32), nullable=False),
    sa.PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)
