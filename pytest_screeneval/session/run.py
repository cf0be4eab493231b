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

from pytest_screeneval.errors import StoreError, StoreUnavailable
from pytest_screeneval.evidence.noise import NoiseEstimate, estimate_noise
from pytest_screeneval.evidence.verdicts import BaselineInfo, ReviewInfo
from pytest_screeneval.golden.model import ORIGINAL
from pytest_screeneval.version import __version__

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pytest_screeneval.golden.model import Rubric
    from pytest_screeneval.scoring.protocol import ScorerIdentity
    from pytest_screeneval.scoring.results import JobResult
    from pytest_screeneval.store.database import Acceptance, RunRecord, ScoreRow, Store
    from pytest_screeneval.store.spool import Spool

__all__ = ["FLUSH_EVERY_ROWS", "FLUSH_EVERY_SECONDS", "RETRY_SECONDS", "Baseline", "RunLog"]

FLUSH_EVERY_ROWS = 500
FLUSH_EVERY_SECONDS = 1.0
# How long a failed write is retried (with back-off) before its rows go to the spool: longer
# than a database restart or a fail-over, which take a few seconds.
RETRY_SECONDS = 20.0
_FIRST_DELAY_S = 0.05
_LONGEST_DELAY_S = 2.0


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

    def __init__(
        self,
        store: Store,
        rubric: Rubric,
        *,
        spool: Spool | None = None,
        retry_seconds: float = RETRY_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.criteria = rubric.criterion_names
        self.run_id: int | None = None
        self.finished = False
        self._pending: list[ScoreRow] = []
        self._pending_cases: set[str] = set()  # whose rows are among the pending ones
        self._early: list[JobResult] = []
        self._last_flush = time.monotonic()
        self.spool = spool
        self.retry_seconds = retry_seconds
        self.sleep = sleep
        # rows the store did not take after their retries, kept in the spool (and here, to
        # store them after all if the store comes back before the run ends)
        self._spooled: list[ScoreRow] = []
        self._spooled_cases: dict[str, str] = {}  # case -> why its rows are not stored
        self.unkept: list[ScoreRow] = []  # neither stored nor spooled: the spool failed too
        self._down: StoreError | None = None  # the store's last failure, until a write succeeds
        self.write_errors: list[str] = []  # one clause per kind of failure, for the summary

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
        """Write queued score rows in one batch: every 500 rows, every second, or when forced.

        The rows stay queued until the store has them: a failed write is retried with back-off
        for ``retry_seconds``, then its rows go to the spool (fsync'd) and the run is partial.
        Nothing raises here unless the spool cannot be written either.
        """
        if not self._pending:
            if force and self._spooled:
                self._store_spooled()  # at the end, one more try: is the store back?
            return
        due = len(self._pending) >= FLUSH_EVERY_ROWS or (
            time.monotonic() - self._last_flush >= FLUSH_EVERY_SECONDS
        )
        if force or due:
            rows, cases = self._pending, self._pending_cases
            self._write(rows, cases)
            # only now: a write that raised (the spool failed too) leaves them queued
            self._pending, self._pending_cases = [], set()
            self._last_flush = time.monotonic()

    def _write(self, rows: Sequence[ScoreRow], cases: set[str]) -> None:
        try:
            self._retried(lambda: self.store.write_scores(rows))
        except StoreError as error:
            self._down = error  # a refusal too: later writes get one try each
            where = self._spool_rows(rows, error)
            for case_id in cases:
                self._spooled_cases.setdefault(case_id, f"{error} {where}")
            return
        if self._spooled:
            self._store_spooled()

    def _retried(self, write: Callable[[], object]) -> None:
        """Every write of the run (its rows, its close): a store that cannot take it just now
        (locked by another writer, a restart, a fail-over) is tried again with back-off for
        ``retry_seconds``; a refusal of the write itself is raised at once."""
        # while the store is known to be down, one try: the retries were spent already
        budget = 0.0 if self._down is not None else self.retry_seconds
        deadline = time.monotonic() + budget
        delay = _FIRST_DELAY_S
        while True:
            try:
                write()
            except StoreUnavailable as exc:
                if time.monotonic() + delay > deadline:
                    self._down = exc  # later writes get one try each until one succeeds
                    raise
                self.sleep(delay)
                delay = min(delay * 2, _LONGEST_DELAY_S)
            else:
                self._down = None
                return

    def _spool_rows(self, rows: Sequence[ScoreRow], error: StoreError) -> str:
        """Keep the rows in the spool; the clause saying where they wait."""
        if self.spool is None:
            self.unkept.extend(rows)
            self._note(f"{len(self.unkept)} score rows could not be stored ({error})")
            return "(an in-memory store has no spool: they are lost with this process)"
        try:
            path = self.spool.append(rows)
        except StoreError as spool_error:
            self.unkept.extend(rows)
            self._note(f"score rows could not be stored ({error}) nor spooled ({spool_error})")
            return f"({spool_error})"
        self._spooled.extend(rows)
        self._note(f"score rows could not be stored ({error})")
        return f"They wait in the spool file {path}: import them with `screeneval db recover`."

    def _store_spooled(self) -> None:
        """The store is back: store the spooled rows after all, and empty this run's spool."""
        rows = self._spooled
        try:
            self.store.write_scores(rows)
        except StoreError:
            return  # they stay in the spool, for `screeneval db recover`
        self._down = None
        self._spooled = []
        if self.spool is not None and self.run_id is not None:
            self.spool.file_for(self.run_id).unlink(missing_ok=True)

    def _note(self, clause: str) -> None:
        if clause not in self.write_errors:
            self.write_errors.append(clause)

    @property
    def spooled_rows(self) -> int:
        """Rows of this process that wait in the spool (stored again if the store came back)."""
        return len(self._spooled)

    def flush_case(self, case_id: str) -> None:
        """Store this case's queued rows now (with any queued before them): its items may not
        pass before their rows are committed. Rows of later cases, stored ahead, go in the same
        batch, not in a transaction per item. Raises one sentence if the case's rows could not
        be stored (they wait in the spool)."""
        self.flush(force=case_id in self._pending_cases)
        why = self._spooled_cases.get(case_id)
        if why is not None and any(row.case_id == case_id for row in self._spooled + self.unkept):
            raise StoreError(f"The score rows of case {case_id} are not stored: {why}")

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
            run_id = self.run_id
            self._retried(
                lambda: self.store.finish_run(
                    run_id, status=status, served_model=served or None, verdict=verdict
                )
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
