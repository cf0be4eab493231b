"""The rationale judge's verdicts in the store: each recorded with the judge's identity and
chained in the same transaction, and found again for the same question (schema revision 0006).

The cache key is the judge's identity (the model as requested, the prompt's sha, the
temperature) and the question (the sha256 of the resume text, the criterion, the score, the
sha256 of the rationale): the same rationale is never judged twice in a store. Only a verdict is
reused; a judgement that failed is kept (it is evidence of what happened) but asked again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.connect import write_transaction

if TYPE_CHECKING:
    from pytest_screeneval.store.database import Store

__all__ = [
    "JudgementKey",
    "JudgementRecord",
    "find_judgement",
    "find_judgements",
    "judgements",
    "record_judgement",
]


@dataclass(frozen=True)
class JudgementKey:
    """What a verdict is reused for: the judge's identity and the question it was asked."""

    judge_model: str
    prompt_sha: str
    temperature: float
    input_sha256: str
    criterion: str
    score: int
    rationale_sha256: str


@dataclass(frozen=True)
class JudgementRecord:
    """One judgement as stored (``id`` is None until it is)."""

    run_id: int | None
    case_id: str
    criterion: str
    score: int
    input_sha256: str
    rationale_sha256: str
    judge_model: str
    served_model: str | None
    prompt_sha: str
    temperature: float
    response_format: str
    protected: bool | None
    protected_category: str
    protected_phrase: str
    ungrounded: bool | None
    claim: str
    error: str | None
    raw: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    latency_ms: float
    judged_at: str
    id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def key(self) -> JudgementKey:
        return JudgementKey(
            self.judge_model,
            self.prompt_sha,
            self.temperature,
            self.input_sha256,
            self.criterion,
            self.score,
            self.rationale_sha256,
        )


_NAMES = frozenset(f.name for f in dataclasses.fields(JudgementRecord))


def _record(row: Any) -> JudgementRecord:
    values = {k: v for k, v in dict(row).items() if k in _NAMES}
    for flag in ("protected", "ungrounded"):
        if values[flag] is not None:
            values[flag] = bool(values[flag])
    values["temperature"] = float(values["temperature"])
    values["latency_ms"] = float(values["latency_ms"])
    return JudgementRecord(**values)


def record_judgement(store: Store, record: JudgementRecord) -> JudgementRecord:
    """Store ``record`` and its chain entry in one transaction; the stored record, with its id."""
    values = {k: v for k, v in record.as_dict().items() if k != "id"}
    try:
        with write_transaction(store.engine) as conn:
            store._refuse_unkeyed_append(conn)
            inserted = conn.execute(t.judgements.insert().values(**values))
            key = inserted.inserted_primary_key
            assert key is not None
            judgement_id = int(key[0])
            store_chain.append_entry(
                conn,
                store_chain.STORE_TABLES,
                kind="judgement",
                ref_id=judgement_id,
                recorded_at=record.judged_at,
                key=store.chain_key,
            )
    except sa.exc.SQLAlchemyError as exc:
        raise store._error(exc) from None
    return dataclasses.replace(record, id=judgement_id)


def find_judgement(store: Store, key: JudgementKey) -> JudgementRecord | None:
    """The first verdict (no error) stored for this judge and question, or None."""
    return find_judgements(store, [key]).get(key)


def find_judgements(
    store: Store, keys: Sequence[JudgementKey]
) -> dict[JudgementKey, JudgementRecord]:
    """The first verdict (no error) stored for each of ``keys`` that has one: one query for a
    whole batch of answers (the session asks as each batch of answers is stored)."""
    if not keys:
        return {}
    table = t.judgements
    by_question: dict[tuple[str, str, str, str, int, str], list[JudgementKey]] = {}
    for key in dict.fromkeys(keys):
        by_question.setdefault(_question(key), []).append(key)
    texts = sorted({k.input_sha256 for k in keys})
    # only this judge's verdicts (a run has one judge): not every past judge's of these resumes
    judges = sorted({(k.judge_model, k.prompt_sha) for k in keys})
    found: dict[JudgementKey, JudgementRecord] = {}
    try:
        with store.engine.connect() as conn:
            for start in range(0, len(texts), _IN_CHUNK):
                query = (
                    sa.select(table)
                    .where(
                        table.c.input_sha256.in_(texts[start : start + _IN_CHUNK]),
                        sa.tuple_(table.c.judge_model, table.c.prompt_sha).in_(judges),
                        table.c.error.is_(None),
                    )
                    .order_by(table.c.id)
                )
                for row in conn.execute(query).mappings():
                    record = _record(row)
                    for key in by_question.get(_question(record), ()):
                        if abs(record.temperature - key.temperature) < 1e-9:
                            found.setdefault(key, record)
    except sa.exc.SQLAlchemyError as exc:
        raise store._error(exc) from None
    return found


_IN_CHUNK = 500  # resume hashes in one IN list


def _question(key: JudgementKey | JudgementRecord) -> tuple[str, str, str, str, int, str]:
    """What a verdict is reused for, but the temperature (compared apart: a float column need
    not give back the exact value)."""
    return (
        key.judge_model,
        key.prompt_sha,
        key.input_sha256,
        key.criterion,
        key.score,
        key.rationale_sha256,
    )


def judgements(store: Store, *, run_id: int | None = None) -> list[JudgementRecord]:
    """The stored judgements, oldest first (those first asked in one run, when given)."""
    table = t.judgements
    query = sa.select(table).order_by(table.c.id)
    if run_id is not None:
        query = query.where(table.c.run_id == run_id)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
    except sa.exc.SQLAlchemyError as exc:
        raise store._error(exc) from None
    return [_record(row) for row in rows]
