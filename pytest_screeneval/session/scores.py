"""The scoring plan and its results: which texts the items need, scored once, kept by key.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`. It turns item needs into
scoring jobs, reuses a previous run's scores when asked, scores each distinct text once (a
variant identical to the original shares its answer), and hands every result to the run's log.
"""

from __future__ import annotations

import concurrent.futures
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pytest_screeneval.golden.model import ORIGINAL, ItemKind, sha256_text
from pytest_screeneval.probes.counterfactual import case_variants, variant_key
from pytest_screeneval.scoring.protocol import CriterionScore
from pytest_screeneval.scoring.results import JobResult, ScoringJob
from pytest_screeneval.scoring.runner import URGENT, Runner

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Rubric, Variants
    from pytest_screeneval.scoring.protocol import Scorer
    from pytest_screeneval.session.run import RunLog
    from pytest_screeneval.settings.options import Settings
    from pytest_screeneval.store.database import ScoreRow

__all__ = ["ItemNeed", "ScoreRequest", "Scores", "shared_twins"]


@dataclass(frozen=True)
class ScoreRequest:
    """One text to score for ``score_texts``; ``fresh`` asks for a re-score, not the cache."""

    case_id: str
    variant_key: str
    text: str
    fresh: bool = False


@dataclass
class _Entry:
    """One queued call and the jobs that share its answer."""

    job: ScoringJob
    future: concurrent.futures.Future[JobResult]
    twins: list[ScoringJob] = field(default_factory=list)
    recorded: bool = False
    stored: JobResult | None = None  # the answer whose rows went to the store early
    stored_twins: int = 0  # of the twins, how many had their rows stored with it


@dataclass(frozen=True)
class ItemNeed:
    """What one selected item needs scored before the run starts."""

    case_id: str
    kind: ItemKind
    target: str  # criterion name, "decision", attribute name or perturbation kind


class Scores:
    """Results by (case, variant, repeat) and by (text, repeat); the scorer calls that made them."""

    def __init__(
        self,
        rubric: Rubric,
        settings: Settings,
        run: RunLog,
        cases: Mapping[str, Case],
        variants: Variants,
        warn: Callable[[str], None],
    ) -> None:
        self.rubric = rubric
        self.settings = settings
        self.run = run
        self.cases = cases
        self.variants = variants
        self.warn = warn
        self.scorer: Scorer | None = None
        self.runner: Runner | None = None
        self.progress: Callable[[int, int, int], None] | None = None  # scored, total, in flight
        self.on_wait: Callable[[], None] | None = None  # called while a wait goes on (drawing)
        # given the answers stored ahead of their items (their rationales are checked ahead)
        self.on_answers: Callable[[Sequence[JobResult]], None] | None = None
        self.results: dict[tuple[str, str, int], JobResult] = {}
        self.cache: dict[tuple[str, int], JobResult] = {}
        self.calls = 0
        self.served_models: set[str] = set()
        self._entries: list[_Entry] = []
        self._swept = 0  # entries before this index are recorded or stored (_store_answered)
        self._rank: dict[str, int] = {}  # case -> its place in the item order: its calls' priority
        self._by_text: dict[tuple[str, int], _Entry] = {}
        self._by_case: dict[str, list[_Entry]] = defaultdict(list)
        self._reserved: dict[tuple[str, str], int] = {}

    def add_worker_calls(self, calls: int, served_models: Iterable[str]) -> None:
        """Count an xdist worker's scorer calls and the models that served them."""
        self.calls += calls
        self.served_models.update(served_models)

    # ---------------------------------------------------------------- the plan

    def jobs_for(self, needs: Iterable[ItemNeed]) -> list[ScoringJob]:
        jobs: dict[tuple[str, str, int], ScoringJob] = {}
        for need in needs:
            case = self.cases[need.case_id]
            if need.kind == ItemKind.CRITERION:
                for repeat in range(self.settings.repeat):
                    jobs[(case.id, ORIGINAL, repeat)] = ScoringJob(
                        case.id, ORIGINAL, repeat, case.input_text, case.input_sha256
                    )
            elif need.kind in (ItemKind.DECISION, ItemKind.PERTURBATION):
                jobs[(case.id, ORIGINAL, 0)] = ScoringJob(
                    case.id, ORIGINAL, 0, case.input_text, case.input_sha256
                )
            elif need.kind == ItemKind.COUNTERFACTUAL:
                for value, variant in case_variants(case, self.variants).get(need.target, []):
                    key = variant_key(need.target, value.value)
                    jobs[(case.id, key, 0)] = ScoringJob(
                        case.id, key, 0, variant.input_text, variant.input_sha256
                    )
        return list(jobs.values())

    def _reuse(self, jobs: Sequence[ScoringJob]) -> dict[tuple[str, str, int], JobResult]:
        assert self.scorer is not None
        store = self.run.store
        previous = store.latest_complete_run(identity=self.scorer.identity)
        if previous is None:
            self.warn(
                "--screeneval-reuse found no complete run with this scorer "
                "identity; every input was scored afresh"
            )
            return {}
        by_input: dict[tuple[str, int], list[ScoreRow]] = defaultdict(list)
        for row in store.scores(previous.run_id):
            if row.error is None:
                by_input[(row.input_sha256, row.repeat_index)].append(row)
        reused: dict[tuple[str, str, int], JobResult] = {}
        for job in jobs:
            rows = by_input.get((job.input_sha256, job.repeat_index))
            if not rows or {r.criterion for r in rows} != set(self.rubric.criterion_names):
                continue
            scores = {
                r.criterion: CriterionScore(
                    r.criterion, r.score or 0, r.rationale, r.evidence, r.confidence
                )
                for r in rows
            }
            reused[(job.case_id, job.variant_key, job.repeat_index)] = JobResult(
                job,
                tuple(scores.values()),
                {},
                0.0,
                0,
                rows[0].served_model or previous.served_model,
                reused_from_run=previous.run_id,
                by_criterion=scores,
                system_fingerprint=rows[0].system_fingerprint,
            )
        return reused

    # ---------------------------------------------------------------- scoring

    def start(
        self,
        runner: Runner,
        needs: Sequence[ItemNeed],
        *,
        reuse: bool,
        after_case: Callable[[str, Sequence[ItemNeed]], None] | None = None,
    ) -> None:
        """Queue every distinct input these items need, in the order the items will run.

        Returns at once: the runner scores in the background, ``settle(case_id)`` waits for one
        case. Reused answers are recorded now; identical texts are queued once. ``after_case``
        runs once a case's texts are queued (the session draws its perturbation examples).
        """
        self.runner = runner
        jobs = self.jobs_for(needs)
        reused = self._reuse(jobs) if reuse else {}
        for result in reused.values():
            self._record(result, ())
        needs_of: dict[str, list[ItemNeed]] = defaultdict(list)
        for need in needs:
            needs_of[need.case_id].append(need)
        current: str | None = None
        for job in jobs:
            if job.case_id != current:
                if current is not None and after_case is not None:
                    after_case(current, needs_of[current])
                current = job.case_id
            if (job.case_id, job.variant_key, job.repeat_index) not in reused:
                self._queue(job)
        if current is not None and after_case is not None:
            after_case(current, needs_of[current])

    def _queue(self, job: ScoringJob) -> _Entry:
        """One call per distinct (text, repeat); a later identical text rides along as a twin."""
        key = (job.input_sha256, job.repeat_index)
        entry = self._by_text.get(key)
        if entry is not None:
            entry.twins.append(job)
        else:
            assert self.runner is not None
            rank = self._rank.setdefault(job.case_id, len(self._rank))
            entry = _Entry(job, self.runner.submit(job, rank))
            self._by_text[key] = entry
            self._entries.append(entry)
        self._by_case[job.case_id].append(entry)
        return entry

    def planned_calls(self) -> list[ScoringJob]:
        """One job per call queued so far (identical texts share one; reused ones make none)."""
        return [entry.job for entry in self._entries]

    def add_text(self, case: Case, variant: str, text: str) -> None:
        """Queue one extra text (a drawn perturbation example) unless it is already queued."""
        sha = sha256_text(text)
        if (sha, 0) in self.cache or (sha, 0) in self._by_text:
            return
        self._queue(ScoringJob(case.id, variant, 0, text, sha))

    def _settle(self, entries: Sequence[_Entry], *, answered_only: bool = False) -> None:
        assert self.runner is not None
        todo = [e for e in entries if not e.recorded]
        if answered_only:  # after a stop: what came back, without waiting or raising
            results = [e.future.result() for e in todo]
        else:
            results = self.runner.wait([e.future for e in todo], on_tick=self._tick)
        for entry, result in zip(todo, results, strict=True):
            if not entry.recorded:
                entry.recorded = True
                self.calls += 1
                if entry.stored is not None:
                    self._record(entry.stored, entry.twins, stored=entry.stored_twins)
                else:
                    self._record(result, entry.twins)
        self._store_answered()
        self.run.flush()

    def _store_answered(self) -> None:
        """Queue for the store the rows of every call answered so far, ahead of their items.

        The item that waits next then writes them all in one transaction: a write per case
        costs a transaction per case, which was a third of the plugin's time on 10,000 items
        with a fast scorer. What items and the noise probe read (results, the cache) still
        changes only as each case settles, in item order, whatever the scorer's timing.
        """
        entries = self._entries
        answered: list[JobResult] = []
        while self._swept < len(entries):
            entry = entries[self._swept]
            if not entry.recorded and entry.stored is None:
                future = entry.future
                if not future.done() or future.cancelled() or future.exception() is not None:
                    break  # in queue order: later answers wait for the next settle
                result = future.result()  # made safe by result_of
                entry.stored, entry.stored_twins = result, len(entry.twins)
                for copy in self._copies(result, entry.twins):
                    self.run.queue(copy)
                    answered.append(copy)
            self._swept += 1
        if answered and self.on_answers is not None:
            self.on_answers(answered)

    def _tick(self) -> None:
        if self.on_wait is not None:
            self.on_wait()
        if self.progress is not None and self.runner is not None:
            runner = self.runner
            self.progress(runner.finished, runner.submitted, runner.in_flight)

    def settle(self, case_id: str) -> None:
        """Wait until every text this case's items need is scored, and record it."""
        entries = self._by_case.pop(case_id, None)
        if entries:
            self._settle(entries)

    def settle_all(self, *, stop: bool) -> None:
        """At the end: record everything; after a stop (-x, Ctrl-C) cancel what will not run
        and keep only what was already answered."""
        if self.runner is None:
            return
        if stop:
            self.runner.cancel_pending()
            done = [
                e
                for e in self._entries
                if not e.recorded
                and e.future.done()
                and not e.future.cancelled()
                and e.future.exception() is None
            ]
            self._settle(done, answered_only=True)
        else:
            self._settle(self._entries)
        self._by_case.clear()
        self.run.flush(force=True)

    def _copies(self, result: JobResult, twins: Sequence[ScoringJob]) -> list[JobResult]:
        """The answer for its job, then one for each twin: a twin shares the answer, not the
        call, so its rows carry no tokens of their own."""
        return [
            result,
            *(
                replace(result, job=twin, cached=True, prompt_tokens=0, completion_tokens=0)
                for twin in twins
            ),
        ]

    def _record(
        self, result: JobResult, twins: Sequence[ScoringJob], *, stored: int | None = None
    ) -> None:
        """Give the answer to the run: results, the cache, and its rows for the store.

        ``stored``: the answer's rows (with that many twins) were
        stored early (``_store_answered``); only twins queued since get rows now.
        """
        for index, copy in enumerate(self._copies(result, twins)):
            target = copy.job
            self.results[(target.case_id, target.variant_key, target.repeat_index)] = copy
            self.cache.setdefault((target.input_sha256, target.repeat_index), copy)
            if stored is None or index > stored:
                self.run.queue(copy)
        self.run.flush()

    def score_text(self, case: Case, variant: str, text: str) -> JobResult:
        """Score one extra text (a perturbation) through the run's cache, and record it."""
        [result] = self.score_texts([ScoreRequest(case.id, variant, text)])
        return result

    def score_texts(self, requests: Sequence[ScoreRequest | ScoringJob]) -> list[JobResult]:
        """Score several texts concurrently through the session's queue; results in order.

        A request answered before (same text) comes from the cache unless ``fresh``; a fresh
        request is a re-score, stored as the next free repeat of its (case, variant). A
        ScoringJob is taken as it is (its repeat chosen by the caller), always scored.
        """
        assert self.runner is not None
        waiting: list[tuple[int, _Entry]] = []
        answers: dict[int, JobResult] = {}
        for index, request in enumerate(requests):
            if isinstance(request, ScoringJob):
                job = request
            else:
                sha = sha256_text(request.text)
                if not request.fresh:
                    cached = self.cache.get((sha, 0))
                    if cached is not None:
                        answers[index] = cached
                        continue
                    queued = self._by_text.get((sha, 0))
                    if queued is not None:
                        waiting.append((index, queued))
                        continue
                    repeat = 0
                else:
                    repeat = self.next_repeat(request.case_id, request.variant_key)
                job = ScoringJob(request.case_id, request.variant_key, repeat, request.text, sha)
            self._reserve(job)
            # an item waits for this text now (a re-score, a shrinking candidate): it goes
            # before every call queued ahead for later cases
            entry = _Entry(job, self.runner.submit(job, URGENT))
            self._entries.append(entry)
            if job.repeat_index == 0:
                self._by_text.setdefault((job.input_sha256, 0), entry)
            waiting.append((index, entry))
        self._settle([entry for _index, entry in waiting])
        for index, entry in waiting:
            answers[index] = (
                self.results.get((entry.job.case_id, entry.job.variant_key, entry.job.repeat_index))
                or self.cache[(entry.job.input_sha256, entry.job.repeat_index)]
            )
        return [answers[index] for index in range(len(requests))]

    def next_repeat(self, case_id: str, variant_key: str) -> int:
        """The first repeat_index no answer or queued call of (case, variant) has taken."""
        used = [r for (c, v, r) in self.results if c == case_id and v == variant_key]
        return max([*used, self._reserved.get((case_id, variant_key), -1)]) + 1

    def _reserve(self, job: ScoringJob) -> None:
        key = (job.case_id, job.variant_key)
        self._reserved[key] = max(self._reserved.get(key, -1), job.repeat_index)

    # ---------------------------------------------------------------- reading

    def load_from_store(self) -> None:
        """The controller rebuilds the run's results from the rows the workers wrote."""
        assert self.run.run_id is not None
        store = self.run.store
        grouped: dict[tuple[str, str, int], list[ScoreRow]] = defaultdict(list)
        for row in store.scores(self.run.run_id):
            grouped[(row.case_id, row.variant_key, row.repeat_index)].append(row)
        served = store.get_run(self.run.run_id).served_model
        for (case_id, variant, repeat), rows in grouped.items():
            usable = {
                r.criterion: CriterionScore(
                    r.criterion, r.score, r.rationale, r.evidence, r.confidence
                )
                for r in rows
                if r.score is not None and r.error is None
            }
            errors = {r.criterion: r.error for r in rows if r.error}
            first = rows[0]
            job = ScoringJob(case_id, variant, repeat, "", first.input_sha256)
            self.results[(case_id, variant, repeat)] = JobResult(
                job,
                tuple(usable.values()),
                errors,
                first.latency_ms,
                first.attempts,
                first.served_model or served,
                sum(r.prompt_tokens for r in rows),
                sum(r.completion_tokens for r in rows),
                reused_from_run=first.reused_from_run,
                by_criterion=usable,
                system_fingerprint=first.system_fingerprint,
            )
        self.results.update(shared_twins(self.results))

    def served(self) -> set[str]:
        return self.served_models | {
            r.served_model for r in self.results.values() if r.served_model
        }

    def table(self, variant: str = ORIGINAL, repeat: int = 0) -> dict[tuple[str, str], int | None]:
        """Scores by (case, criterion) of one variant and repeat."""
        table: dict[tuple[str, str], int | None] = {}
        for (case_id, variant_key_, repeat_index), result in self.results.items():
            if variant_key_ != variant or repeat_index != repeat:
                continue
            for criterion in self.rubric.criterion_names:
                score = result.by_criterion.get(criterion)
                table[(case_id, criterion)] = score.score if score else None
        return table

    def overall_of(self, result: JobResult) -> float | None:
        if all(name in result.by_criterion for name in self.rubric.criterion_names):
            return self.rubric.overall({k: v.score for k, v in result.by_criterion.items()})
        return None


def shared_twins(
    results: Mapping[tuple[str, str, int], JobResult],
) -> dict[tuple[str, str, int], JobResult]:
    """The rows a worker wrote for an identical text it scored once, marked ``cached``.

    A single process knows which answers it shared; the xdist controller only has the rows, where
    a shared text's twins carry the same input sha256 and repeat index. The first of each
    (text, repeat) in sorted order counts as the call, so "N identical texts shared (K attempts)"
    reads the same with ``-n 2`` as without.
    """
    seen: set[tuple[str, int]] = set()
    twins: dict[tuple[str, str, int], JobResult] = {}
    for key in sorted(results):
        result = results[key]
        if result.reused_from_run is not None or result.cached:
            continue
        text = (result.job.input_sha256, key[2])
        if text in seen:
            twins[key] = replace(result, cached=True, prompt_tokens=0, completion_tokens=0)
        seen.add(text)
    return twins
