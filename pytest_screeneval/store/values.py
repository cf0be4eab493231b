"""The run store's values (what its methods take and return) and how they map to rows.

Frozen dataclasses, re-exported by ``store/database.py``; kept here so the modules of queries
(``golden_sync.py``, ``runs.py``) stay about queries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_screeneval.scoring.protocol import ScorerIdentity
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.docs import to_json

if TYPE_CHECKING:
    from sqlalchemy.engine import RowMapping

__all__ = [
    "Acceptance",
    "Review",
    "RunRecord",
    "ScoreRow",
    "SyncReport",
    "review_from_row",
    "run_record",
    "score_row",
    "score_values",
]


@dataclass(frozen=True)
class Acceptance:
    """Who made a run the baseline, when, why, and which baseline it replaced."""

    run_id: int
    accepted_by: str
    accepted_at: str
    note: str
    previous_baseline_run_id: int | None
    forced: bool


@dataclass(frozen=True)
class RunRecord:
    run_id: int
    scorer: str
    model_id: str
    served_model: str | None
    prompt_sha: str
    rubric_id: str
    rubric_sha: str
    temperature: float
    golden_sha: str
    status: str
    started_at: str
    finished_at: str | None
    plugin_version: str
    vcs_commit: str | None
    notes: str
    baseline_run_id: int | None
    selection: str
    config: Mapping[str, Any]
    accepted: Acceptance | None
    host: str = ""
    pid: int = 0
    verdict: Mapping[str, Any] | None = None  # gates and crossings recorded at the finish
    golden_seq: int | None = None  # the chain position of the golden set it was scored against

    @property
    def identity(self) -> ScorerIdentity:
        return ScorerIdentity(
            name=self.scorer,
            model_id=self.model_id,
            prompt_sha=self.prompt_sha,
            rubric_sha=self.rubric_sha,
            temperature=self.temperature,
        )


@dataclass(frozen=True)
class ScoreRow:
    """One scored (case, variant, repeat, criterion) of a run, as written and read back."""

    run_id: int
    case_id: str
    variant_key: str
    repeat_index: int
    criterion: str
    score: int | None
    rationale: str
    evidence: tuple[str, ...]
    confidence: float | None
    latency_ms: float
    attempts: int
    error: str | None
    input_sha256: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reused_from_run: int | None = None
    served_model: str | None = None  # the model the provider said answered this call
    system_fingerprint: str | None = None  # the provider's record of the backend that served it


@dataclass(frozen=True)
class Review:
    """A person read one movement (case, criterion or decision, before → after vs a baseline)."""

    run_id: int
    case_id: str
    target: str
    baseline_run_id: int
    before: str
    after: str
    reviewed_by: str
    reviewed_at: str
    note: str


@dataclass(frozen=True)
class SyncReport:
    """What a golden-set sync did, by case id."""

    added: tuple[str, ...]
    unchanged: tuple[str, ...]
    expectations_changed: tuple[str, ...]
    ratings_changed: tuple[str, ...]
    retired: tuple[str, ...]
    # labels, slices, attributes, demographics, xfail or source changed (the text did not)
    updated: tuple[str, ...] = ()
    # active in the store but absent from the synced folder (left active: retire them explicitly)
    missing: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


def score_values(row: ScoreRow) -> dict[str, Any]:
    return {
        "run_id": row.run_id,
        "case_id": row.case_id,
        "variant_key": row.variant_key,
        "repeat_index": row.repeat_index,
        "criterion": row.criterion,
        "score": row.score,
        "rationale": row.rationale,
        "evidence": to_json(list(row.evidence)),
        "confidence": row.confidence,
        "latency_ms": float(row.latency_ms),
        "attempts": row.attempts,
        "error": row.error,
        "input_sha256": row.input_sha256,
        "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens,
        "reused_from_run": row.reused_from_run,
        "served_model": row.served_model,
        "system_fingerprint": row.system_fingerprint,
    }


def score_row(row: Any) -> ScoreRow:
    return ScoreRow(
        run_id=row.run_id,
        case_id=row.case_id,
        variant_key=row.variant_key,
        repeat_index=row.repeat_index,
        criterion=row.criterion,
        score=row.score,
        rationale=row.rationale,
        evidence=tuple(json.loads(row.evidence)),
        confidence=row.confidence,
        latency_ms=row.latency_ms,
        attempts=row.attempts,
        error=row.error,
        input_sha256=row.input_sha256,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        reused_from_run=row.reused_from_run,
        served_model=row.served_model,
        system_fingerprint=row.system_fingerprint,
    )


def run_record(row: RowMapping) -> RunRecord:
    runs, acc = t.runs.c, t.acceptances.c
    accepted = None
    if row[acc.id] is not None:
        accepted = Acceptance(
            run_id=row[runs.run_id],
            accepted_by=row[acc.accepted_by],
            accepted_at=row[acc.accepted_at],
            note=row[acc.note],
            previous_baseline_run_id=row[acc.previous_baseline_run_id],
            forced=bool(row[acc.forced]),
        )
    return RunRecord(
        run_id=row[runs.run_id],
        scorer=row[runs.scorer],
        model_id=row[runs.model_id],
        served_model=row[runs.served_model],
        prompt_sha=row[runs.prompt_sha],
        rubric_id=row[runs.rubric_id],
        rubric_sha=row[runs.rubric_sha],
        temperature=row[runs.temperature],
        golden_sha=row[runs.golden_sha],
        status=row[runs.status],
        started_at=row[runs.started_at],
        finished_at=row[runs.finished_at],
        plugin_version=row[runs.plugin_version],
        vcs_commit=row[runs.vcs_commit],
        notes=row[runs.notes],
        baseline_run_id=row[runs.baseline_run_id],
        selection=row[runs.selection],
        config=json.loads(row[runs.config]),
        accepted=accepted,
        host=row[runs.host],
        pid=row[runs.pid],
        verdict=None if row[runs.verdict] is None else json.loads(row[runs.verdict]),
        golden_seq=row[runs.golden_seq],
    )


def review_from_row(row: Any) -> Review:
    return Review(
        run_id=row.run_id,
        case_id=row.case_id,
        target=row.target,
        baseline_run_id=row.baseline_run_id,
        before=row.before,
        after=row.after,
        reviewed_by=row.reviewed_by,
        reviewed_at=row.reviewed_at,
        note=row.note,
    )
