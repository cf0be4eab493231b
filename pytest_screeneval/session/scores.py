"""The scoring plan and its results: which texts the items need, scored once, kept by key.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`. It turns item needs into
scoring jobs, reuses a previous run's scores when asked, scores each distinct text once (a
variant identical to the original shares its answer), and hands every result to the run's log.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_screeneval.golden.model import sha256_text
from pytest_screeneval.probes.counterfactual import case_variants, variant_key
from pytest_screeneval.scoring.protocol import CriterionScore
from pytest_screeneval.scoring.runner import JobResult, ScoringJob, run_jobs

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Rubric, Variants
    from pytest_screeneval.scoring.protocol import Scorer
    from pytest_screeneval.session.run import RunLog
    from pytest_screeneval.settings.options import Settings
    from pytest_screeneval.store.database import ScoreRow

__all__ = ["ORIGINAL", "ItemNeed", "Scores"]

ORIGINAL = ""


@dataclass(frozen=True)
class ItemNeed:
    """What one selected item needs scored before the run starts."""

    case_id: str
    kind: str  # "criterion" | "decision" | "counterfactual" | "perturbation"
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
        self.results: dict[tuple[str, str, int], JobResult] = {}
        self.cache: dict[tuple[str, int], JobResult] = {}
        self.calls = 0
        self.served_models: set[str] = set()
        self._twins: dict[tuple[str, int], list[ScoringJob]] = defaultdict(list)

    # ---------------------------------------------------------------- the plan

    def jobs_for(self, needs: Iterable[ItemNeed]) -> list[ScoringJob]:
        jobs: dict[tuple[str, str, int], ScoringJob] = {}
        for need in needs:
            case = self.cases[need.case_id]
            if need.kind == "criterion":
                for repeat in range(self.settings.repeat):
                    jobs[(case.id, ORIGINAL, repeat)] = ScoringJob(
                        case.id, ORIGINAL, repeat, case.input_text, case.input_sha256
                    )
            elif need.kind in ("decision", "perturbation"):
                jobs[(case.id, ORIGINAL, 0)] = ScoringJob(
                    case.id, ORIGINAL, 0, case.input_text, case.input_sha256
                )
            elif need.kind == "counterfactual":
                for value, variant in case_variants(case, self.variants).get(need.target, []):
                    key = variant_key(need.target, value.value)
                    jobs[(case.id, key, 0)] = ScoringJob(
                        case.id, key, 0, variant.input_text, variant.input_sha256
                    )
        return list(jobs.values())

    def _dedupe(self, jobs: list[ScoringJob]) -> list[ScoringJob]:
        """Identical texts (a variant equal to the original) are scored once per repeat."""
        unique: dict[tuple[str, int], ScoringJob] = {}
        self._twins = defaultdict(list)
        for job in jobs:
            key = (job.input_sha256, job.repeat_index)
            if key in unique:
                self._twins[key].append(job)
            else:
                unique[key] = job
        return list(unique.values())

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
                previous.served_model,
                reused_from_run=previous.run_id,
                by_criterion=scores,
            )
        return reused

    # ---------------------------------------------------------------- scoring

    def score_needs(
        self,
        needs: Sequence[ItemNeed],
        *,
        reuse: bool,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Score every distinct input these items need, with bounded concurrency."""
        assert self.scorer is not None
        jobs = self.jobs_for(needs)
        reused = self._reuse(jobs) if reuse else {}
        for result in reused.values():
            self._record(result)
        todo = [
            job for job in jobs if (job.case_id, job.variant_key, job.repeat_index) not in reused
        ]
        unique = self._dedupe(todo)
        done = [0]

        def on_result(result: JobResult) -> None:
            self.calls += 1
            self._record(result)
            done[0] += 1
            if progress is not None:
                progress(done[0], len(unique))

        run_jobs(
            self.scorer,
            self.rubric,
            unique,
            concurrency=self.settings.concurrency,
            timeout=self.settings.timeout,
            on_result=on_result,
        )
        self.run.flush(force=True)

    def _record(self, result: JobResult) -> None:
        job = result.job
        twins = self._twins.get((job.input_sha256, job.repeat_index), [])
        for target in (job, *twins):
            # a twin shares the answer, not the call: its rows carry no tokens of their own
            copy = (
                result
                if target is job
                else replace(result, job=target, cached=True, prompt_tokens=0, completion_tokens=0)
            )
            self.results[(target.case_id, target.variant_key, target.repeat_index)] = copy
            self.cache.setdefault((target.input_sha256, target.repeat_index), copy)
            self.run.queue(copy)
        self.run.flush()

    def score_text(self, case: Case, variant: str, text: str) -> JobResult:
        """Score one extra text (a perturbation) through the run's cache, and record it."""
        assert self.scorer is not None
        sha = sha256_text(text)
        cached = self.cache.get((sha, 0))
        if cached is not None:
            return cached
        job = ScoringJob(case.id, variant, 0, text, sha)
        [result] = run_jobs(
            self.scorer, self.rubric, [job], concurrency=1, timeout=self.settings.timeout
        )
        self.calls += 1
        self.cache[(sha, 0)] = result
        self.results.setdefault((case.id, variant, 0), result)
        self.run.queue(result)
        self.run.flush()
        return result

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
                served,
                sum(r.prompt_tokens for r in rows),
                sum(r.completion_tokens for r in rows),
                reused_from_run=first.reused_from_run,
                by_criterion=usable,
            )

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
