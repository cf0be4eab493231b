"""The run: its row in the store, its score rows written in batches, its baseline, its close.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`. It owns the store
connection's writes for the run; the other parts hand it results and read the baseline.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.noise import NoiseEstimate, estimate_noise
from pytest_screeneval.evidence.verdicts import BaselineInfo, ReviewInfo
from pytest_screeneval.golden.model import ORIGINAL
from pytest_screeneval.version import __version__

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Rubric
    from pytest_screeneval.scoring.protocol import ScorerIdentity
    from pytest_screeneval.scoring.results import JobResult
    from pytest_screeneval.store.database import Acceptance, RunRecord, ScoreRow, Store

__all__ = ["FLUSH_EVERY_ROWS", "FLUSH_EVERY_SECONDS", "Baseline", "RunLog"]

FLUSH_EVERY_ROWS = 500
FLUSH_EVERY_SECONDS = 1.0


def _vcs_commit(rootdir: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=rootdir, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass(frozen=True)
class Baseline:
    """The accepted run this one is judged against, its scores and every review against it.

    ``scores`` are its first answers (the items' "before"); ``originals`` every answer of each
    case's original text (its repeats, its probe's and confirmations' re-scores), and ``noise``
    what they measured: a movement is confirmed against both.
    """

    record: RunRecord | None = None
    info: BaselineInfo | None = None
    scores: Mapping[tuple[str, str], int | None] = field(default_factory=dict)
    reviews: Mapping[tuple[str, str, str, str], ReviewInfo] = field(default_factory=dict)
    originals: Mapping[str, tuple[Mapping[str, int], ...]] = field(default_factory=dict)
    noise: NoiseEstimate | None = None
    fingerprints: tuple[str, ...] = ()  # the system fingerprints its answers carried

    @classmethod
    def load(cls, store: Store, rubric: Rubric) -> Baseline:
        record = store.baseline(rubric.id)
        if record is None:
            return cls()
        acceptance = record.accepted
        info = BaselineInfo(
            record.run_id,
            acceptance.accepted_by if acceptance else "?",
            acceptance.accepted_at if acceptance else "",
        )
        rows = store.scores(record.run_id)
        scores = {
            (row.case_id, row.criterion): row.score
            for row in rows
            if row.variant_key == ORIGINAL and row.repeat_index == 0
        }
        answers: dict[tuple[str, str], dict[int, dict[str, int]]] = defaultdict(dict)
        for row in rows:
            if row.score is not None and row.error is None:
                by_repeat = answers[(row.case_id, row.variant_key)]
                by_repeat.setdefault(row.repeat_index, {})[row.criterion] = row.score
        ordered = {
            key: tuple(levels for _repeat, levels in sorted(by_repeat.items()))
            for key, by_repeat in answers.items()
        }
        originals = {case_id: a for (case_id, variant), a in ordered.items() if variant == ORIGINAL}
        noise = estimate_noise({f"{c}\x00{v}": a for (c, v), a in ordered.items()}, rubric)
        # every review against this baseline, read once: items and the summary look up here
        reviews = {
            (r.case_id, r.target, r.before, r.after): ReviewInfo(
                r.reviewed_by, r.reviewed_at, r.note
            )
            for r in store.reviews(baseline_run_id=record.run_id)
        }
        fingerprints = tuple(sorted({r.system_fingerprint for r in rows if r.system_fingerprint}))
        return cls(record, info, scores, reviews, originals, noise, fingerprints)

    def review(self, case_id: str, target: str, before: str, after: str) -> ReviewInfo | None:
        """The review of this movement against the baseline, if a person recorded one."""
        return self.reviews.get((case_id, target, before, after))


class RunLog:
    """The run row and its score rows: opened (or attached to), written in batches, closed."""

    def __init__(self, store: Store, rubric: Rubric) -> None:
        self.store = store
        self.criteria = rubric.criterion_names
        self.run_id: int | None = None
        self.finished = False
        self._pending: list[ScoreRow] = []
        self._pending_cases: set[str] = set()  # whose rows are among the pending ones
        self._early: list[JobResult] = []
        self._last_flush = time.monotonic()

    def open(
        self,
        *,
        identity: ScorerIdentity,
        rubric_id: str,
        golden_sha: str,
        rootdir: Path,
        notes: str,
        baseline_run_id: int | None,
        selection: str,
        config: Mapping[str, object],
    ) -> int:
        self.run_id = self.store.start_run(
            identity=identity,
            rubric_id=rubric_id,
            golden_sha=golden_sha,
            plugin_version=__version__,
            vcs_commit=_vcs_commit(rootdir),
            notes=notes,
            baseline_run_id=baseline_run_id,
            selection=selection,
            config=dict(config) | {"python": sys.version.split()[0]},
        )
        early, self._early = self._early, []
        for result in early:
            self.queue(result)
        return self.run_id

    def attach(self, run_id: int) -> None:
        """A worker writes its rows into the run the controller opened."""
        self.run_id = run_id

    def queue(self, result: JobResult) -> None:
        """Queue one row per criterion; the call's tokens go on the first criterion's row."""
        from pytest_screeneval.store.database import ScoreRow

        if self.run_id is None:  # reused before the run row is opened (the plan comes first)
            self._early.append(result)
            return
        job = result.job
        first = self.criteria[0]
        self._pending_cases.add(job.case_id)
        for criterion in self.criteria:
            score = result.by_criterion.get(criterion)
            self._pending.append(
                ScoreRow(
                    run_id=self.run_id,
                    case_id=job.case_id,
                    variant_key=job.variant_key,
                    repeat_index=job.repeat_index,
                    criterion=criterion,
                    score=score.score if score else None,
                    rationale=score.rationale if score else "",
                    evidence=tuple(score.evidence) if score else (),
                    confidence=score.confidence if score else None,
                    latency_ms=result.latency_ms,
                    attempts=result.attempts,
                    error=result.error_for(criterion),
                    input_sha256=job.input_sha256,
                    prompt_tokens=result.prompt_tokens if criterion == first else 0,
                    completion_tokens=result.completion_tokens if criterion == first else 0,
                    reused_from_run=result.reused_from_run,
                    served_model=result.served_model,
                    system_fingerprint=result.system_fingerprint,
                )
            )

    def flush(self, force: bool = False) -> None:
        """Write queued score rows in one batch: every 500 rows, every second, or when forced."""
        if not self._pending:
            return
        due = len(self._pending) >= FLUSH_EVERY_ROWS or (
            time.monotonic() - self._last_flush >= FLUSH_EVERY_SECONDS
        )
        if force or due:
            rows, self._pending = self._pending, []
            self._pending_cases = set()
            self.store.write_scores(rows)
            self._last_flush = time.monotonic()

    def flush_case(self, case_id: str) -> None:
        """Write the queued rows now if this case's are among them (its items may not pass
        before their rows are stored); else as ``flush`` would. Rows of later cases, stored
        ahead, then go in one batch, not in a transaction per item."""
        self.flush(force=case_id in self._pending_cases)

    def finish(
        self, status: str, served_models: set[str], verdict: Mapping[str, object] | None
    ) -> None:
        """Write what is queued and close the run as complete or interrupted, with its verdict."""
        if self.finished or self.run_id is None:
            return
        self.finished = True
        try:
            self.flush(force=True)
        finally:
            served = ", ".join(sorted(served_models))
            self.store.finish_run(
                self.run_id, status=status, served_model=served or None, verdict=verdict
            )

    def accept(self, *, by: str, note: str, force: bool) -> Acceptance:
        """Accept the run as the baseline; a refusal raises one sentence."""
        from pytest_screeneval.session.acceptance import accept_run, acceptance_blockers

        assert self.run_id is not None
        acceptance, _forced = accept_run(
            self.store,
            self.run_id,
            by=by,
            note=note,
            force=force,
            check=acceptance_blockers,
            how_to_force="force it with --screeneval-force-accept and --screeneval-accept-note",
        )
        return acceptance
