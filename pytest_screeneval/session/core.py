"""One evaluation session, composed of its parts; the one object the plugin talks to.

The parts, each with a small interface and state of its own:

- :class:`~pytest_screeneval.session.golden_cases.GoldenCases`: the rubric, variants and cases;
- :class:`~pytest_screeneval.session.run.RunLog` and ``Baseline``: the run row, its score rows,
  the accepted run it is judged against;
- :class:`~pytest_screeneval.session.scores.Scores`: the scoring plan and its results;
- :class:`~pytest_screeneval.session.judge.Judge` and
  :class:`~pytest_screeneval.session.fairness.Fairness`: the items' verdicts;
- :func:`~pytest_screeneval.session.summary.summarize`: the run's tables and gates.

The plugin keeps exactly one session in ``config.stash`` and adapts pytest objects to the plain
values it takes; the methods here are thin. Nothing here imports pytest, so ``screeneval``
commands and tests can drive it too.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_screeneval.boundary.documents import safe_document, safe_string
from pytest_screeneval.boundary.logs import redact_log_records
from pytest_screeneval.boundary.secrets import forget, remember, url_secrets
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.gate_status import GateStatus
from pytest_screeneval.evidence.verdicts import with_served_model_fault
from pytest_screeneval.golden.load import SizeLimits
from pytest_screeneval.golden.model import (
    ORIGINAL,
    Case,
    GoldenSet,
    ItemKind,
    Rubric,
    Variants,
)
from pytest_screeneval.probes.counterfactual import variant_text
from pytest_screeneval.scoring.protocol import Scorer, prepare_scorer
from pytest_screeneval.scoring.redact import scorer_secrets
from pytest_screeneval.scoring.results import JobResult, ScoringJob, safe_identity
from pytest_screeneval.scoring.runner import Runner
from pytest_screeneval.session.acceptance import verdict_document
from pytest_screeneval.session.baseline_confirm import BaselineConfirmation
from pytest_screeneval.session.closing import RunEnd
from pytest_screeneval.session.confirmation import Confirmer
from pytest_screeneval.session.decide import Decider
from pytest_screeneval.session.distributed import SharedParts, WorkerCases, needs_from_rows
from pytest_screeneval.session.examples import PerturbationExamples
from pytest_screeneval.session.fairness import Fairness
from pytest_screeneval.session.golden_cases import GoldenCases
from pytest_screeneval.session.judge import Judge, protected_terms
from pytest_screeneval.session.noise_summary import ItemOutcome, record_noise
from pytest_screeneval.session.plan import CostPlan, JudgePlan, cost_plan, judge_plan
from pytest_screeneval.session.run import Baseline, RunLog
from pytest_screeneval.session.scorer_choice import resolve_scorer
from pytest_screeneval.session.scores import ItemNeed, ScoreRequest, Scores
from pytest_screeneval.session.summary import RunSummary, summarize
from pytest_screeneval.session.worker_output import WorkerOutput
from pytest_screeneval.settings.controls import RunControls
from pytest_screeneval.settings.options import Settings
from pytest_screeneval.store.connect import missing_sqlite_folder
from pytest_screeneval.store.database import Store, default_url
from pytest_screeneval.store.spool import Spool, spool_dir

if TYPE_CHECKING:
    from pytest_screeneval.evidence.verdicts import Verdict
    from pytest_screeneval.store.chain_reads import ChainHead

__all__ = ["ItemNeed", "RunSummary", "ScreenevalSession"]


class ScreenevalSession:
    def __init__(
        self,
        settings: Settings,
        rootdir: Path,
        *,
        db_url: str | None = None,
        scorer_override: Callable[[Rubric], Scorer | None] | None = None,
        controls: RunControls | None = None,
        option_getter: Callable[[str], object | None] | None = None,
    ) -> None:
        self.settings = settings
        self.rootdir = rootdir
        self.cases_dir = (rootdir / settings.cases).resolve()
        self.db_url = (
            db_url or settings.db or os.environ.get("SCREENEVAL_DB") or default_url(rootdir)
        )
        # every sink redacts these from here on: the store's password, the API key in the
        # environment (whichever scorer reads it); the scorer's own once it is made
        self._secrets = remember(*url_secrets(self.db_url), *scorer_secrets(None))
        self._stop_log_redaction = redact_log_records()  # log lines are a sink too
        self.scorer_override = scorer_override
        self.controls = controls or RunControls()
        self.option_getter = option_getter
        self.golden = GoldenCases(
            settings.source,
            self.cases_dir,
            rootdir,
            SizeLimits(settings.max_case_id_chars, settings.max_input_chars),
        )
        self.store: Store | None = None
        self.scorer: Scorer | None = None
        self.baseline = Baseline()
        # the parts that need the rubric are made in open()
        self.run: RunLog
        self.scores: Scores
        self.judge: Judge
        self.fairness: Fairness
        self.needs: list[ItemNeed] = []
        self.ran_needs: list[ItemNeed] = []
        self.worker_cases: WorkerCases | None = None  # on an xdist worker
        self.started = time.monotonic()
        self.warnings: list[str] = []
        self.summary: RunSummary | None = None
        self.golden_only = False
        # what confirmation concluded per item, gathered from the items' reports by the plugin
        self.item_outcomes: list[ItemOutcome] = []
        self.acceptance_error: str | None = None
        self._close_error: str | None = None  # the last rows could not be stored
        self.start_error: str | None = None  # the run could not start: nothing to summarize
        self.stop_error: str | None = None  # what stopped the scoring: the run is interrupted
        self.runner: Runner | None = None
        self.plan: CostPlan | None = None

    # ---------------------------------------------------------------- set-up

    def open(self) -> None:
        """Open the store and read the rubric and variants; errors are one sentence."""
        terms = protected_terms(self.settings, self.rootdir)  # a bad file stops us before the store
        folder = missing_sqlite_folder(self.db_url)
        self.store = Store.open(self.db_url)
        if folder is not None:
            self.warnings.append(f"the store's folder {folder} did not exist; it was created")
        spool = self.spool()
        waiting = spool.waiting if spool is not None else None
        for run_id in self.store.mark_abandoned_runs(waiting=waiting):
            self.warnings.append(
                f"run {run_id} was left running by a process that is gone; "
                "it is now marked interrupted"
            )
        self.golden.open(self.store)
        unread = self.golden.unread_files()
        if unread:
            shown = ", ".join(f"{self.golden.shown(path)} ({why})" for path, why in unread[:5])
            more = f" and {len(unread) - 5} more" if len(unread) > 5 else ""
            self.warnings.append(f"case files not read: {shown}{more}")
        rubric, cases = self.golden.rubric, self.golden.cases
        self.baseline = Baseline.load(self.store, rubric)
        self.run = RunLog(
            self.store,
            rubric,
            spool=self.spool(),
            retry_seconds=self.settings.store_retry_seconds,
        )
        self.scores = Scores(
            rubric, self.settings, self.run, cases, self.golden.variants, self.warnings.append
        )
        self.confirmer = Confirmer(
            self.settings, rubric, self.scores, cases, score_texts=self.score_texts
        )
        self.baseline_confirmation = BaselineConfirmation(rubric, self.baseline, self.confirmer)
        self.judge = Judge(
            rubric,
            self.settings,
            cases,
            self.scores,
            self.baseline,
            self._requested_model,
            terms,
            self.baseline_confirmation,
        )
        if self.settings.rationale_judge:
            from pytest_screeneval.session.rationale_judging import (
                open_rationale_judging,
                rationale_judge_secrets,
            )

            # its key and its endpoint's password are secrets every sink redacts from here on
            self._secrets += remember(*rationale_judge_secrets(self.settings))
            self.judge.judging = open_rationale_judging(
                self.settings, self.store, run_id=lambda: self.run_id
            )
        self.examples = PerturbationExamples(
            cases, self.scores, self.settings.perturbation_examples
        )
        self.fairness = Fairness(
            self.settings,
            cases,
            self.golden.variants,
            self.scores,
            self.score_text,
            self.confirmer,
            self.examples.texts,
        )
        self.shared = SharedParts(
            self.run, self.scores, self.fairness, self.baseline_confirmation, self.judge.judging
        )

    def spool(self) -> Spool | None:
        """The spool beside the store: rows the store would not take wait there."""
        directory = spool_dir(self.db_url, self.rootdir)
        return None if directory is None else Spool(directory)

    def rows_waiting(self) -> int:
        """Score rows of this run in the spool (any process's: xdist workers spool their own)."""
        spool = self.run.spool if self.store is not None else None
        if spool is None or self.run.run_id is None:
            return 0
        return spool.waiting(self.run.run_id)

    def store_clauses(self) -> list[str]:
        """What the store did not take, for the run's 'partial' sentence: the rows waiting in
        the spool, and any the spool could not take either."""
        clauses: list[str] = []
        waiting = self.rows_waiting()
        if waiting:
            assert self.run.spool is not None
            clauses.append(
                f"{waiting} score rows wait in the spool {self.run.spool.directory} (the store "
                "did not take them): import them with `screeneval db recover`"
            )
        if self.store is not None and self.run.unkept:
            clauses.append(
                f"{len(self.run.unkept)} score rows are lost: neither the store nor the spool "
                "took them"
            )
        judging = self.judge.judging if hasattr(self, "judge") else None  # not if open() failed
        if judging is not None and judging.unstored:
            clauses.append(
                f"{judging.unstored} rationale judge verdicts are not in the store, which "
                f"refused them ({judging.store_error})"
            )
        return clauses

    @property
    def rubric(self) -> Rubric:
        return self.golden.rubric

    @property
    def variants(self) -> Variants:
        return self.golden.variants

    @property
    def cases(self) -> dict[str, Case]:
        return self.golden.cases

    @property
    def run_id(self) -> int | None:
        return self.run.run_id if self.store is not None else None

    def load_case(self, path: Path) -> Case:
        return self.golden.load_case(path)

    def is_case_file(self, path: Path) -> bool:
        return self.golden.is_case_file(path)

    def golden_set(self) -> GoldenSet:
        return self.golden.golden_set()

    # ---------------------------------------------------------------- the scorer

    def _resolve_scorer(self) -> Scorer:
        scorer, warnings = resolve_scorer(
            self.settings.scorer,
            self.rubric,
            self.rootdir,
            override=self.scorer_override,
            option_getter=self.option_getter,
        )
        self.warnings.extend(warnings)
        self._secrets += remember(*scorer_secrets(scorer))
        return scorer

    def prepare_scorer(self) -> None:
        """Resolve the scorer before collection, so a refused scorer stops the session early."""
        self.scorer = self._resolve_scorer()
        self.scores.scorer = self.scorer

    def _requested_model(self) -> str:
        assert self.scorer is not None
        return self.scorer.identity.model_id

    @property
    def scored_inputs(self) -> int:
        return self.scores.calls

    # ---------------------------------------------------------------- the run

    def start(
        self,
        needs: Sequence[ItemNeed],
        selection: str,
        progress: Callable[..., None] | None = None,
        *,
        announce: Callable[[str], None] = lambda line: None,
    ) -> CostPlan:
        """Queue every text the selected items need, print the plan, open the run, let the
        calls go, then draw the perturbation examples. Nothing is called before the plan is
        printed and checked against ``screeneval_max_calls``; with ``--screeneval-plan``
        nothing is called and no run is opened. A refusal is kept as ``start_error``.

        The examples are drawn after the calls go (a Hypothesis search per case and kind takes
        ~10 ms: seconds before the first call on a large set), each queued as it is drawn, at
        its case's place in the order: so the plan counts them as a bound, the examples asked
        for, which identical draws only lower.
        """
        try:
            return self._start(needs, selection, progress, announce)
        except ScreenevalError as exc:
            self.start_error = str(exc)
            raise

    def _start(
        self,
        needs: Sequence[ItemNeed],
        selection: str,
        progress: Callable[..., None] | None,
        announce: Callable[[str], None],
    ) -> CostPlan:
        price, max_calls = self.controls.price, self.controls.max_calls
        self.needs = list(needs)
        runner = self._runner(paused=True)
        self.stream(self.needs, progress, draw=False)
        planned = self.scores.planned_calls()
        examples = max(1, self.settings.perturbation_examples)
        example_slots = [
            self.cases[need.case_id].input_text
            for need in self.needs
            if need.kind == ItemKind.PERTURBATION
            for _ in range(examples)
        ]
        # the budget: twice the calls, unless set
        self.confirmer.plan(
            len(planned) + len(example_slots), fairness_items=_fairness_items(self.needs)
        )
        self.plan = cost_plan(
            planned,
            len(self.rubric.criterion_names),
            price,
            self.confirmer.budget,
            example_texts=example_slots,
            decide_budget=self.settings.decide_budget,
            judge=self._judge_plan(),
        )
        for line in self.plan.lines(price):
            announce(line)
        if self.controls.plan_only:
            return self.plan
        if max_calls is not None and self.plan.calls > max_calls:
            raise ScreenevalError(
                f"The run would make up to {self.plan.calls} scorer calls, over "
                f"screeneval_max_calls = {max_calls}; select fewer items (-k) or raise the limit."
            )
        self.begin_run(selection, cases_selected=len({need.case_id for need in needs}))
        self._check_rationales_ahead(self.needs)
        runner.release()
        self.examples.start(self.needs)
        return self.plan

    def _judge_plan(self) -> JudgePlan | None:
        """The rationale judge's calls: at most one per criterion item's answer."""
        judging = self.judge.judging
        if judging is None:
            return None
        texts = [
            self.cases[need.case_id].input_text
            for need in self.needs
            if need.kind == ItemKind.CRITERION
        ]
        return judge_plan(judging.identity.model, judging.scope, texts)

    def _check_rationales_ahead(self, needs: Sequence[ItemNeed]) -> None:
        """Check each answer's rationale as it is stored, ahead of its items, when there are
        many (``session.rationale_checks``)."""
        self.judge.checks.expect(sum(1 for need in needs if need.kind == ItemKind.CRITERION))
        if self.judge.judging is not None:
            self.judge.judging.selected = {
                (need.case_id, need.target) for need in needs if need.kind == ItemKind.CRITERION
            }
        if not self.judge.checks.in_process or self.judge.judging is not None:
            self.scores.on_answers = self._send_answers

    def _send_answers(self, results: Sequence[JobResult]) -> None:
        self.judge.judge_ahead(results)
        self.judge.checks.ahead(
            [
                (
                    result.job.case_id,
                    self.cases[result.job.case_id].input_text,
                    [
                        (s.criterion, s.score, s.rationale, tuple(s.evidence))
                        for s in result.by_criterion.values()
                    ],
                )
                for result in results
                if result.job.variant_key == ORIGINAL and result.job.repeat_index == 0
            ]
        )

    def begin_run(self, selection: str, cases_selected: int | None = None) -> int:
        """Sync the golden set into the store and open the run row."""
        assert self.store is not None
        self.golden.check_attributes_used()
        if self.settings.source == "yaml" and self.cases:
            self.store.sync_golden_set(self.golden_set())
        if self.scorer is None:
            self.scorer = self._resolve_scorer()
            self.scores.scorer = self.scorer
        # e.g. the openai scorer's response format, part of the identity recorded below
        prepare_scorer(self.scorer)
        return self.run.open(
            identity=safe_identity(self.scorer.identity),
            rubric_id=self.rubric.id,
            golden_sha=self.golden_set().sha,
            rootdir=self.rootdir,
            notes=safe_string(self.controls.notes),
            baseline_run_id=self.baseline.record.run_id if self.baseline.record else None,
            selection=selection,
            # stored and chained: URLs masked, no secret (the store's password was in `db`)
            config=safe_document(
                dict(vars(self.settings))
                | {"cases_selected": cases_selected}
                | ({"plan": self.plan.as_dict()} if self.plan is not None else {})
            ),
        )

    def _runner(self, *, paused: bool = False) -> Runner:
        """The session's one runner: made when the first text is queued, closed with the session."""
        if self.runner is None:
            assert self.scorer is not None
            self.runner = Runner(
                self.scorer,
                self.rubric,
                concurrency=self.settings.concurrency,
                timeout=self.settings.timeout,
                paused=paused,
                adaptive=self.settings.adaptive,
            )
            self.scores.runner = self.runner
        return self.runner

    def stream(
        self,
        needs: Sequence[ItemNeed],
        progress: Callable[..., None] | None = None,
        *,
        draw: bool = True,
    ) -> None:
        """Queue every text these items need, case by case in item order, and return.

        The runner scores in the background while items run; an item waits for its own case
        only (``ensure_scored``). With ``draw``, each case's perturbation examples are drawn
        and queued right after its texts.
        """
        self.scores.progress = progress
        after_case = self.examples.draw_case if draw else None
        self.scores.start(self._runner(), needs, reuse=self.controls.reuse, after_case=after_case)

    def score_texts(self, requests: Sequence[ScoreRequest | ScoringJob]) -> list[JobResult]:
        """Score several texts concurrently through the session's queue; results in order.

        ``ScoreRequest(case_id, variant_key, text, fresh=True)`` re-scores a text already
        answered, stored as the next free repeat_index of (case, variant).
        """
        self._runner()
        return self.scores.score_texts(requests)

    def drain(self, *, stopped: bool) -> None:
        """At the end: wait for what is queued, or after a stop cancel what will not run."""
        self.examples.finish(stopped=stopped)
        self.scores.settle_all(stop=stopped)

    def runner_error(self) -> str | None:
        """The sentence that stopped the scoring (a scorer that cannot work, a blocked loop)."""
        fatal = self.runner.fatal if self.runner is not None else None
        return str(fatal) if fatal is not None else None

    def score_text(self, case: Case, variant: str, text: str) -> JobResult:
        """Score one extra text (a perturbation) through the run's cache, and record it."""
        return self.scores.score_text(case, variant, text)

    def _planned_calls(self, needs: Sequence[ItemNeed]) -> int:
        """Calls the selection plans before confirmation: its texts and perturbation examples."""
        examples = sum(
            self.settings.perturbation_examples for n in needs if n.kind == ItemKind.PERTURBATION
        )
        return len(self.scores.jobs_for(needs)) + examples

    def flush(self, force: bool = False) -> None:
        self.run.flush(force)

    def store_rows_of(self, case_id: str) -> None:
        """Store this case's queued rows now (with any queued before them)."""
        self.run.flush_case(case_id)

    # ---------------------------------------------------------------- pytest-xdist

    def load_all_cases(self) -> None:
        """The controller reads every valid case file (workers report the invalid ones)."""
        self.golden.load_all()

    def attach_run(
        self,
        run_id: int,
        needs: Sequence[ItemNeed],
        *,
        upcoming: Callable[[], list[str]],
        workers: int,
    ) -> None:
        """A worker writes its rows into the run the controller opened; it scores its share of
        the run (the probe and the confirmation budget too), and streams its cases as they come
        (``upcoming``: the case ids already sent to it, in order)."""
        self.run.attach(run_id)
        self.confirmer.plan(
            self._planned_calls(needs), share=1.0 / workers, fairness_items=_fairness_items(needs)
        )
        self._check_rationales_ahead(needs)
        self.worker_cases = WorkerCases(needs, upcoming)

    def ensure_scored(self, case_id: str) -> None:
        """Wait until every text of this case is scored and recorded.

        On an xdist worker, cases arrive one scope at a time: the first item of a case queues
        it, and with it every case already waiting in the worker's queue (``upcoming``), so
        each worker streams its own cases ahead of its items.
        """
        if self.worker_cases is not None:
            for pending in self.worker_cases.due(case_id):
                self.stream(pending)
        self.examples.take(through=case_id)
        self.scores.settle(case_id)

    def worker_output(self) -> WorkerOutput:
        return self.shared.output(self.ran_needs, self.warnings)

    def merge_worker_output(self, output: WorkerOutput) -> None:
        self.shared.merge(output, self.needs, self.warnings)

    def load_results_from_store(self) -> None:
        """The controller rebuilds the run's results from the rows the workers wrote.

        Workers that were stopped (Ctrl-C) send nothing back; the items their rows stand for are
        then taken from the rows themselves, so the summary still covers what was scored.
        """
        self.scores.load_from_store()
        if self.judge.judging is not None:  # the workers judged; the summary reads their verdicts
            self.judge.judging.asks = False
        if not self.needs:
            self.needs = needs_from_rows(self.scores.results, self.rubric.criterion_names)

    # ---------------------------------------------------------------- verdicts

    def verdict(self, need: ItemNeed) -> Verdict:
        """The verdict of one item that ran (counted among the items that ran). A decision,
        counterfactual or perturbation item also fails when another model served its case."""
        self.ran_needs.append(need)
        case_id, target = need.case_id, need.target
        if need.kind == ItemKind.CRITERION:
            return self.judge.criterion_verdict(case_id, target)
        if need.kind == ItemKind.DECISION:
            verdict = self.judge.decision_verdict(case_id)
        elif need.kind == ItemKind.COUNTERFACTUAL:
            verdict = self.fairness.counterfactual_verdict(case_id, target)
        else:
            verdict = self.fairness.perturbation_verdict(case_id, target)
        return self._served_checked(case_id, verdict)

    def _served_checked(self, case_id: str, verdict: Verdict) -> Verdict:
        """Fail a case's decision, counterfactual and perturbation items when the answer for
        its text came from another model than the one asked for (one server serves them all,
        so the original's answer speaks for the variants)."""
        result = self.scores.results.get((case_id, ORIGINAL, 0))
        mismatch = self.judge.served_model_mismatch(result) if result is not None else None
        return with_served_model_fault(verdict, mismatch)

    # ---------------------------------------------------------------- finish

    @property
    def has_open_run(self) -> bool:
        """A run row was opened and the run was not refused or stopped as it started."""
        return self.run_id is not None and not self.start_error

    def stop_on_scorer_failure(self) -> str | None:
        """When the scoring stopped for good (a scorer that cannot work, a blocked loop): close
        the run interrupted and give the sentence that says why; else None."""
        fatal = self.runner_error()
        if fatal is None:
            return None
        # the run ends interrupted in ``conclude``, with its summary and JUnit file
        self.stop_error = fatal
        self.stop_scoring(stopped=True)
        return fatal

    def close_interrupted(self) -> None:
        """Mark the run interrupted if the store still answers; if it does not (full, locked),
        the run stays 'running' and the next session marks it interrupted, its rows kept."""
        with contextlib.suppress(ScreenevalError):
            self.finish("interrupted")

    def stop_scoring(self, *, stopped: bool) -> None:
        """Wait for what is queued, or after a stop cancel what will not run (a store error
        here is met again, and reported, when the last rows are stored)."""
        with contextlib.suppress(ScreenevalError):
            self.drain(stopped=stopped)

    def store_last_rows(self, *, rebuild: bool) -> bool:
        """Store every queued row (``rebuild``: on the xdist controller, first read the results
        the workers stored). False when the store refused: the run then cannot close."""
        if rebuild:
            self.load_results_from_store()
        try:
            self.run.flush(force=True)
        except ScreenevalError as exc:
            self._close_error = str(exc)
            return False
        return True

    def conclude(
        self,
        *,
        interrupted: bool,
        missing: str | None,
        items: Mapping[str, object] | None = None,
    ) -> RunEnd:
        """Decide the status, compute the summary and its gates, close the run with its verdict
        in the audit chain, accept it if asked (and allowed): everything the end of a pytest
        session does with the run, in order; ``items``: the items' outcomes, recorded with the
        verdict. Store errors are kept in ``RunEnd.close_error``."""
        interrupted = interrupted or self.stop_error is not None
        status = "interrupted" if interrupted else ("partial" if missing else "complete")
        kinds = dict(Counter(need.kind for need in self.needs))
        close_error, head = self._close_error, None
        try:
            summary = self.summarize(kinds, status)
        except ScreenevalError as exc:  # the summary's own re-scoring could not be stored
            return RunEnd(None, status, missing, str(exc), None, failed=False)
        late = [c for c in self.store_clauses() if c not in (missing or "")]
        if late:
            # the summary's own re-scores (the noise probe) went to the spool: not complete
            missing = "; ".join([*([missing] if missing else []), *late])
            if status == "complete":
                status = summary.status = "partial"
        if close_error is None:
            try:
                verdict = verdict_document(summary.gates, summary.crossings, missing, items)
                self.finish(status, verdict)
                head = self._chain_head()
            except ScreenevalError as exc:
                close_error = str(exc)
        if close_error is None and self.controls.accept:
            self.accept_run(
                by=self.controls.accepted_by,
                note=self.controls.accept_note,
                force=self.controls.force_accept,
            )
            with contextlib.suppress(ScreenevalError):
                head = self._chain_head()
        # a run that is not complete never exits 0: its exit status and its status agree
        failed = self.session_failed() or status != "complete"
        return RunEnd(summary, status, missing, close_error, head, failed=failed)

    def _chain_head(self) -> ChainHead | None:
        """The store's chain head now (after the run's entry, and its acceptance's)."""
        return None if self.store is None else self.store.chain_head()

    def note_item_outcome(self, nodeid: str, outcome: str, line: str) -> None:
        """What confirmation concluded for one item, from its report."""
        self.item_outcomes.append((nodeid, outcome, line))

    def summarize(self, selected_items: Mapping[ItemKind, int], status: str) -> RunSummary:
        """Compute every table and gate of the run."""
        assert self.run_id is not None and self.scorer is not None
        if status != "interrupted" and not self.confirmer.noise().measured:
            # every run shows its scorer's noise, measured (not one stopped by Ctrl-C, which
            # sends no call more); before the tables, so that the calls, attempts and tokens
            # they count always include the probe's, whenever it ran. A run to be accepted
            # measures it even when small: later runs judge their movements against its
            # answers, and a baseline of one answer a text whose noise is unknown must be
            # taken as noisy as theirs, which no one-level movement can then beat
            self.confirmer.probe(on_demand=self.controls.accept)
        # the family of the item error rate: the whole run's fairness items (an -n controller
        # has them from its workers)
        self.confirmer.fairness_items = max(
            self.confirmer.fairness_items, _fairness_items(self.needs)
        )
        decided = None
        if status != "interrupted" and self.settings.decide_budget > 0:
            # spend the decide budget where a fairness gate is undecided, before the tables
            decided = Decider(
                self.settings, self.confirmer, self.fairness.fairness_cases, self._text_of
            )
            decided.run()
        # the probe's and the decide budget's rows: stored (or spooled) before the status
        self.run.flush(force=True)
        self.summary = summarize(
            run_id=self.run_id,
            status=status,
            identity=self.scorer.identity,
            selected_items=selected_items,
            needs=self.needs,
            cases_by_id=self.cases,
            rubric=self.rubric,
            settings=self.settings,
            scores=self.scores,
            judge=self.judge,
            fairness=self.fairness,
            baseline=self.baseline,
            warnings=self.warnings,
            duration_s=time.monotonic() - self.started,
            noise=self.confirmer.noise(),
            against_baseline=self.baseline_confirmation,
        )
        record_noise(
            self.summary,
            confirmer=self.confirmer,
            settings=self.settings,
            outcomes=self.item_outcomes,
            movements=self.summary.movement_statuses,
            decided=(decided.spent, decided.rounds) if decided is not None else (0, 0),
        )
        return self.summary

    def _text_of(self, case_id: str, key: str) -> str | None:
        """The text scored under (case, variant key): from its answer when this process has it,
        else rebuilt; None for a perturbation example only its worker knows."""
        result = self.scores.results.get((case_id, key, 0))
        if result is not None and result.job.text:
            return result.job.text
        case = self.cases.get(case_id)
        return None if case is None else variant_text(case, self.variants, key)

    def session_failed(self) -> bool:
        """A failed gate, or an acceptance that was asked for and refused."""
        failed_gates = self.summary is not None and any(
            g.failed
            or (g.status == GateStatus.INCONCLUSIVE and self.settings.inconclusive == "fail")
            for g in self.summary.gates
        )
        return failed_gates or self.acceptance_error is not None

    def accept_run(self, *, by: str, note: str, force: bool) -> None:
        """Accept this run as the baseline unless a gate failed or a crossing is unreviewed."""
        assert self.summary is not None
        try:
            acceptance = self.run.accept(by=by, note=note, force=force)
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
        if self.store is None:
            return
        try:
            self.run.flush(force=True)
        finally:
            waiting = self.rows_waiting()
            if waiting:  # chained by `screeneval db recover`, once these rows are in
                verdict = dict(verdict or {}) | {"rows_waiting": waiting}
            self.run.finish(status, self.scores.served(), verdict)

    def close(self) -> None:
        forget(self._secrets)
        self._secrets = ()
        self._stop_log_redaction()
        if hasattr(self, "examples"):  # not when the store would not open
            self.examples.close()
        if hasattr(self, "judge"):  # not when the store would not open
            self.judge.checks.close()
            if self.judge.judging is not None:
                self.judge.judging.close()
        if self.runner is not None:
            self.runner.close()
        if self.store is not None:
            self.store.close()


def _fairness_items(needs: Sequence[ItemNeed]) -> int:
    """The run's counterfactual and perturbation items: the family its item errors are
    controlled over (every -n worker collects them all, so each knows the whole run's)."""
    return sum(1 for n in needs if n.kind in (ItemKind.COUNTERFACTUAL, ItemKind.PERTURBATION))
