"""One evaluation session: the golden set, the store, the scorer, the run and its results.

The plugin keeps exactly one of these in ``config.stash`` and adapts pytest objects to the plain
values it takes. Nothing here imports pytest, so ``screeneval`` commands and tests can drive it too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_screeneval import __version__
from pytest_screeneval.errors import GoldenSetError, ScreenevalError
from pytest_screeneval.evidence.rationale.flags import rationale_flags
from pytest_screeneval.evidence.verdicts import (
    BaselineInfo,
    CriterionEvidence,
    ReviewInfo,
    Tolerances,
    Verdict,
    criterion_verdict,
    decision_verdict,
)
from pytest_screeneval.golden.load import load_case_file, load_rubric, load_variants
from pytest_screeneval.golden.model import Case, GoldenSet, Rubric, Variants, sha256_text
from pytest_screeneval.probes.counterfactual import case_variants, variant_key
from pytest_screeneval.scoring.protocol import CriterionScore, Scorer
from pytest_screeneval.scoring.runner import JobResult, ScoringJob, load_scorer_factory, run_jobs
from pytest_screeneval.session.fairness import FairnessItems
from pytest_screeneval.session.summary import RunSummary, Summaries
from pytest_screeneval.settings.options import Settings
from pytest_screeneval.store.database import RunRecord, ScoreRow, Store, default_url

__all__ = ["ItemNeed", "RunSummary", "ScreenevalSession"]

ORIGINAL = ""
FLUSH_EVERY_ROWS = 500
FLUSH_EVERY_SECONDS = 1.0


@dataclass(frozen=True)
class ItemNeed:
    """What one selected item needs scored before the run starts."""

    case_id: str
    kind: str  # "criterion" | "decision" | "counterfactual" | "perturbation"
    target: str  # criterion name, "decision", attribute name or perturbation kind


def _vcs_commit(rootdir: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=rootdir, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


class ScreenevalSession(FairnessItems, Summaries):
    def __init__(
        self,
        settings: Settings,
        rootdir: Path,
        *,
        db_url: str | None = None,
        scorer_override: Callable[[Rubric], Scorer | None] | None = None,
        reuse: bool = False,
        notes: str = "",
        option_getter: Callable[[object], object | None] | None = None,
    ) -> None:
        self.settings = settings
        self.rootdir = rootdir
        self.cases_dir = (rootdir / settings.cases).resolve()
        self.db_url = (
            db_url or settings.db or os.environ.get("SCREENEVAL_DB") or default_url(rootdir)
        )
        self.scorer_override = scorer_override
        self.reuse = reuse
        self.notes = notes
        self.store: Store | None = None
        self.rubric: Rubric
        self.variants: Variants
        self.cases: dict[str, Case] = {}
        self.case_paths: dict[str, str] = {}
        self.frozen: dict[str, tuple[str, str]] = {}
        self.scorer: Scorer | None = None
        self.run_id: int | None = None
        self.baseline: RunRecord | None = None
        self.baseline_info: BaselineInfo | None = None
        self.baseline_scores: dict[tuple[str, str], int | None] = {}
        self.reviews: dict[tuple[str, str, str, str], ReviewInfo] = {}
        self.results: dict[tuple[str, str, int], JobResult] = {}
        self.cache: dict[tuple[str, int], JobResult] = {}
        self.needs: list[ItemNeed] = []
        self.pending_rows: list[ScoreRow] = []
        self.last_flush = time.monotonic()
        self.started = time.monotonic()
        self.warnings: list[str] = []
        self.counterfactual_gaps: dict[str, dict[str, dict[str, object]]] = defaultdict(dict)
        self.perturbation_shifts: dict[str, dict[str, dict[str, object]]] = defaultdict(dict)
        self.finished = False
        self.summary: RunSummary | None = None
        self.option_getter = option_getter
        self.golden_only = False
        self.acceptance_error: str | None = None
        self.scorer_calls = 0
        self.ran_needs: list[ItemNeed] = []
        self.worker_needs: dict[str, list[ItemNeed]] = {}
        self.start_error: str | None = None
        self.served_models: set[str] = set()
        self.flag_cache: dict[tuple[str, str, str, tuple[str, ...]], tuple[str, ...]] = {}
        self._twins: dict[tuple[str, int], list[ScoringJob]] = defaultdict(list)

    # ---------------------------------------------------------------- set-up

    def open(self) -> None:
        """Open the store and read the rubric and variants; errors are one sentence."""
        self.store = Store.open(self.db_url)
        for run_id in self.store.mark_abandoned_runs():
            self.warnings.append(
                f"run {run_id} was left running by a process that is gone; "
                "it is now marked interrupted"
            )
        if self.settings.source == "db":
            golden = self.store.load_golden_set()
            self.rubric, self.variants = golden.rubric, golden.variants
            for case in golden.active_cases:
                self.cases[case.id] = case
                self.case_paths[case.id] = f"db:{case.id}"
        else:
            shown = self._shown(self.cases_dir)
            if not self.cases_dir.is_dir():
                raise GoldenSetError(
                    f"{shown}: the golden set folder does not exist (set ini screeneval_cases)."
                )
            self.rubric = load_rubric(self.cases_dir / "rubric.yaml", f"{shown}/rubric.yaml")
            self.variants = load_variants(
                self.cases_dir / "variants.yaml", f"{shown}/variants.yaml"
            )
        self.frozen = self.store.frozen_cases()
        self.baseline = self.store.baseline(self.rubric.id)
        if self.baseline is not None:
            acceptance = self.baseline.accepted
            self.baseline_info = BaselineInfo(
                self.baseline.run_id,
                acceptance.accepted_by if acceptance else "?",
                acceptance.accepted_at if acceptance else "",
            )
            self.baseline_scores = {
                (row.case_id, row.criterion): row.score
                for row in self.store.scores(self.baseline.run_id)
                if row.variant_key == ORIGINAL and row.repeat_index == 0
            }
            # every review against this baseline, read once: items and the summary look up here
            self.reviews = {
                (r.case_id, r.target, r.before, r.after): ReviewInfo(
                    r.reviewed_by, r.reviewed_at, r.note
                )
                for r in self.store.reviews(baseline_run_id=self.baseline.run_id)
            }

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.rootdir).as_posix()
        except ValueError:
            return str(path)

    def load_case(self, path: Path) -> Case:
        """Load one case file, refusing a duplicate id or a changed frozen text."""
        shown = self._shown(path)
        case = load_case_file(path, self.rubric, shown, self.variants)
        first = self.case_paths.get(case.id)
        if first is not None and first != shown:
            raise GoldenSetError(
                f"{shown}: duplicate case id {case.id!r}, already used in {first}."
            )
        frozen = self.frozen.get(case.id)
        if frozen is not None and frozen[0] != case.input_sha256:
            raise GoldenSetError(
                f"{shown}: case {case.id} changed its frozen input_text (frozen on "
                f"{frozen[1][:10]} as sha256 {frozen[0][:12]}, now {case.input_sha256[:12]}); "
                "retire it (screeneval cases retire) and add the new text under a new id."
            )
        self.case_paths[case.id] = shown
        self.cases[case.id] = case
        return case

    def is_case_file(self, path: Path) -> bool:
        return (
            self.settings.source == "yaml"
            and path.suffix in (".yaml", ".yml")
            and path.parent.parent == self.cases_dir
        )

    def golden_set(self) -> GoldenSet:
        return GoldenSet(
            self.rubric, self.variants, tuple(self.cases.values()), self._shown(self.cases_dir)
        )

    # ---------------------------------------------------------------- scoring

    def _resolve_scorer(self) -> Scorer:
        if self.scorer_override is not None:
            scorer = self.scorer_override(self.rubric)
            if scorer is not None:
                return scorer
        if self.settings.scorer == "openai":
            return self._openai_scorer()
        factory = load_scorer_factory(self.settings.scorer)
        try:
            return factory(self.rubric)
        except ScreenevalError:
            raise
        except Exception as exc:
            raise ScreenevalError(
                f"The scorer factory {self.settings.scorer!r} raised {type(exc).__name__}: {exc}."
            ) from None

    def _openai_scorer(self) -> Scorer:
        from pytest_screeneval.scoring.openai.options import settings_from as openai_settings_from
        from pytest_screeneval.scoring.openai.scorer import make_scorer

        get = self.option_getter or (lambda name: None)
        scorer = make_scorer(self.rubric, openai_settings_from(get), root=self.rootdir)
        self.warnings.extend(scorer.warnings)
        return scorer

    def prepare_scorer(self) -> None:
        """Resolve the scorer before collection, so a refused scorer stops the session early."""
        self.scorer = self._resolve_scorer()

    @property
    def scored_inputs(self) -> int:
        return self.scorer_calls

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

    def start(
        self,
        needs: Sequence[ItemNeed],
        selection: str,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Sync the golden set, open a run and score every input the selected items need."""
        self.needs = list(needs)
        self.begin_run(selection, cases_selected=len({need.case_id for need in needs}))
        self.score_needs(self.needs, progress)

    def begin_run(self, selection: str, cases_selected: int | None = None) -> int:
        """Sync the golden set into the store and open the run row."""
        assert self.store is not None
        if self.settings.source == "yaml" and self.cases:
            self.store.sync_golden_set(self.golden_set())
        if self.scorer is None:
            self.scorer = self._resolve_scorer()
        self.run_id = self.store.start_run(
            identity=self.scorer.identity,
            rubric_id=self.rubric.id,
            golden_sha=self.golden_set().sha,
            plugin_version=__version__,
            vcs_commit=_vcs_commit(self.rootdir),
            notes=self.notes,
            baseline_run_id=self.baseline.run_id if self.baseline else None,
            selection=selection,
            config=dict(vars(self.settings))
            | {"cases_selected": cases_selected, "python": sys.version.split()[0]},
        )
        return self.run_id

    def score_needs(
        self, needs: Sequence[ItemNeed], progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Score every distinct input these items need, with bounded concurrency."""
        assert self.scorer is not None
        jobs = self.jobs_for(needs)
        reused = self._reuse(jobs) if self.reuse else {}
        for result in reused.values():
            self._record(result)
        todo = [
            job for job in jobs if (job.case_id, job.variant_key, job.repeat_index) not in reused
        ]
        unique = self._dedupe(todo)
        done = [0]

        def on_result(result: JobResult) -> None:
            self.scorer_calls += 1
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
        self.flush(force=True)

    # ---------------------------------------------------------------- pytest-xdist

    def load_all_cases(self) -> None:
        """The controller reads every valid case file (workers report the invalid ones)."""
        if self.settings.source != "yaml":
            return
        from pytest_screeneval.golden.load import case_files

        for path in case_files(self.cases_dir):
            try:
                self.load_case(path)
            except GoldenSetError:
                continue

    def attach_run(self, run_id: int, needs: Sequence[ItemNeed]) -> None:
        """A worker writes its rows into the run the controller opened."""
        self.run_id = run_id
        self.worker_needs = {}
        for need in needs:
            self.worker_needs.setdefault(need.case_id, []).append(need)

    def ensure_scored(self, case_id: str) -> None:
        """On a worker: score a case's inputs when its first item runs (cases are not split)."""
        pending = self.worker_needs.pop(case_id, None) if self.worker_needs else None
        if pending:
            self.score_needs(pending)

    def worker_output(self) -> dict[str, object]:
        self.flush(force=True)
        return {
            "needs": [[n.case_id, n.kind, n.target] for n in self.ran_needs],
            "counterfactual": {a: dict(v) for a, v in self.counterfactual_gaps.items()},
            "perturbation": {k: dict(v) for k, v in self.perturbation_shifts.items()},
            "scorer_calls": self.scorer_calls,
            "warnings": self.warnings,
            "served_models": sorted(self._served_models()),
        }

    def merge_worker_output(self, output: Mapping[str, object]) -> None:
        self.needs.extend(ItemNeed(*need) for need in output["needs"])  # type: ignore[attr-defined]
        for attribute, by_case in dict(output["counterfactual"]).items():  # type: ignore[call-overload]
            self.counterfactual_gaps[attribute].update(by_case)
        for kind, by_case in dict(output["perturbation"]).items():  # type: ignore[call-overload]
            self.perturbation_shifts[kind].update(by_case)
        self.scorer_calls += int(output["scorer_calls"])  # type: ignore[call-overload]
        self.served_models.update(output["served_models"])  # type: ignore[arg-type]
        self.warnings.extend(w for w in output["warnings"] if w not in self.warnings)  # type: ignore[attr-defined]

    def load_results_from_store(self) -> None:
        """The controller rebuilds the run's results from the rows the workers wrote.

        Workers that were stopped (Ctrl-C) send nothing back; the items their rows stand for are
        then taken from the rows themselves, so the summary still covers what was scored.
        """
        assert self.store is not None and self.run_id is not None
        grouped: dict[tuple[str, str, int], list[ScoreRow]] = defaultdict(list)
        for row in self.store.scores(self.run_id):
            grouped[(row.case_id, row.variant_key, row.repeat_index)].append(row)
        served = self.store.get_run(self.run_id).served_model
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
        if not self.needs:
            scored = sorted(
                {case_id for case_id, variant, _ in self.results if variant == ORIGINAL}
            )
            self.needs = [
                ItemNeed(case_id, "criterion", criterion)
                for case_id in scored
                for criterion in self.rubric.criterion_names
            ] + [ItemNeed(case_id, "decision", "decision") for case_id in scored]

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
        assert self.store is not None and self.scorer is not None
        previous = self.store.latest_complete_run(identity=self.scorer.identity)
        if previous is None:
            self.warnings.append(
                "--screeneval-reuse found no complete run with this scorer "
                "identity; every input was scored afresh"
            )
            return {}
        by_input: dict[tuple[str, int], list[ScoreRow]] = defaultdict(list)
        for row in self.store.scores(previous.run_id):
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
            self._queue_rows(copy)
        self.flush()

    def _queue_rows(self, result: JobResult) -> None:
        assert self.run_id is not None
        job = result.job
        for criterion in self.rubric.criterion_names:
            score = result.by_criterion.get(criterion)
            self.pending_rows.append(
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
                    prompt_tokens=result.prompt_tokens
                    if criterion == self.rubric.criterion_names[0]
                    else 0,
                    completion_tokens=result.completion_tokens
                    if criterion == self.rubric.criterion_names[0]
                    else 0,
                    reused_from_run=result.reused_from_run,
                )
            )

    def flush(self, force: bool = False) -> None:
        """Write queued score rows in one batch: every 500 rows, every second, or when forced."""
        if not self.pending_rows or self.store is None:
            return
        due = len(self.pending_rows) >= FLUSH_EVERY_ROWS or (
            time.monotonic() - self.last_flush >= FLUSH_EVERY_SECONDS
        )
        if force or due:
            rows, self.pending_rows = self.pending_rows, []
            self.store.write_scores(rows)
            self.last_flush = time.monotonic()

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
        self.scorer_calls += 1
        self.cache[(sha, 0)] = result
        self.results.setdefault((case.id, variant, 0), result)
        self._queue_rows(result)
        self.flush()
        return result

    # ---------------------------------------------------------------- verdicts

    def _tolerances(self) -> Tolerances:
        s = self.settings
        return Tolerances(
            s.expected_tolerance,
            s.movement_tolerance,
            s.contested_max_confidence,
            s.rationale_flags == "fail",
        )

    def _review(self, case_id: str, target: str, before: str, after: str) -> ReviewInfo | None:
        """The review of this movement against the baseline, if a person recorded one."""
        return self.reviews.get((case_id, target, before, after))

    def served_model_mismatch(self, result: JobResult) -> str | None:
        assert self.scorer is not None
        requested = self.scorer.identity.model_id
        served = result.served_model
        if served and served != requested:
            return f"the scorer asked for model {requested!r} but was served {served!r}"
        return None

    def evidence(self, case: Case, criterion: str, repeat: int = 0) -> CriterionEvidence:
        result = self.results.get((case.id, ORIGINAL, repeat))
        if result is None:
            return CriterionEvidence(None, "", None, "this input was not scored", ())
        score = result.by_criterion.get(criterion)
        error = result.error_for(criterion)
        flags: tuple[str, ...] = ()
        if score is not None:
            # the item and the summary both ask; the checks run once per rationale
            key = (case.id, criterion, score.rationale, tuple(score.evidence))
            flags = self.flag_cache.get(key)  # type: ignore[assignment]
            if flags is None:
                flags = tuple(
                    rationale_flags(
                        case.input_text, criterion, score.score, score.rationale, key[3]
                    )
                )
                self.flag_cache[key] = flags
        return CriterionEvidence(
            score.score if score else None,
            score.rationale if score else "",
            score.confidence if score else None,
            error,
            flags,
            self.served_model_mismatch(result),
        )

    def criterion_verdict(self, case_id: str, criterion: str) -> Verdict:
        case = self.cases[case_id]
        evidence = self.evidence(case, criterion)
        before = self.baseline_scores.get((case_id, criterion))
        review = None
        if before is not None and evidence.score is not None and before != evidence.score:
            review = self._review(case_id, criterion, str(before), str(evidence.score))
        return criterion_verdict(
            case, criterion, evidence, self._tolerances(), self.baseline_info, before, review
        )

    def current_table(
        self, variant: str = ORIGINAL, repeat: int = 0
    ) -> dict[tuple[str, str], int | None]:
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

    def decision_verdict(self, case_id: str) -> Verdict:
        case = self.cases[case_id]
        result = self.results.get((case_id, ORIGINAL, 0))
        overall = self.overall_of(result) if result else None
        missing = [
            n for n in self.rubric.criterion_names if result is None or n not in result.by_criterion
        ]
        baseline_overall = None
        if self.baseline is not None:
            before = {
                c: self.baseline_scores.get((case_id, c)) for c in self.rubric.criterion_names
            }
            if all(v is not None for v in before.values()):
                baseline_overall = self.rubric.overall(before)  # type: ignore[arg-type]
        review = None
        if overall is not None and baseline_overall is not None:
            b, a = self.rubric.decision(baseline_overall), self.rubric.decision(overall)
            if a != b:
                review = self._review(case_id, "decision", b, a)
        return decision_verdict(
            case, self.rubric, overall, missing, self.baseline_info, baseline_overall, review
        )

    # ---------------------------------------------------------------- finish

    def session_failed(self) -> bool:
        """A failed gate, or an acceptance that was asked for and refused."""
        failed_gates = self.summary is not None and any(g.failed for g in self.summary.gates)
        return failed_gates or self.acceptance_error is not None

    def accept_run(self, *, by: str, note: str, force: bool) -> None:
        """Accept this run as the baseline unless a gate failed or a crossing is unreviewed."""
        assert self.store is not None and self.run_id is not None and self.summary is not None
        from pytest_screeneval.session.acceptance import accept_run, acceptance_blockers

        try:
            acceptance, _forced = accept_run(
                self.store,
                self.run_id,
                by=by,
                note=note,
                force=force,
                check=acceptance_blockers,
                how_to_force="force it with --screeneval-force-accept and --screeneval-accept-note",
            )
        except ScreenevalError as exc:
            self.acceptance_error = str(exc)
            return
        self.summary.accepted = {
            "accepted_by": acceptance.accepted_by,
            "accepted_at": acceptance.accepted_at,
            "note": acceptance.note,
            "forced": acceptance.forced,
            "previous_baseline_run_id": acceptance.previous_baseline_run_id,
        }

    def finish(self, status: str, verdict: Mapping[str, object] | None = None) -> None:
        """Write what is queued and close the run as complete or interrupted, recording the
        verdict (gates and crossings) with it."""
        if self.finished or self.store is None or self.run_id is None:
            return
        self.finished = True
        try:
            self.flush(force=True)
        finally:
            served = ", ".join(sorted(self._served_models()))
            self.store.finish_run(
                self.run_id, status=status, served_model=served or None, verdict=verdict
            )

    def _served_models(self) -> set[str]:
        return self.served_models | {
            r.served_model for r in self.results.values() if r.served_model
        }

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
