"""The judge: an item's evidence and its verdict for a criterion or the decision.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`. It reads the scores and
the baseline, and keeps only what it computes once: the rationale checks of each answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.rationale.flags import PROTECTED_ATTRIBUTE, rationale_findings
from pytest_screeneval.evidence.rationale.protected import (
    ProtectedLexicon,
    builtin_protected_terms,
    load_protected_terms,
)
from pytest_screeneval.evidence.verdicts import (
    ConfirmationNote,
    CriterionEvidence,
    JudgeEvidence,
    Tolerances,
    Verdict,
    criterion_verdict,
    decision_verdict,
)
from pytest_screeneval.golden.model import ORIGINAL
from pytest_screeneval.session.rationale_checks import RationaleChecks
from pytest_screeneval.session.rationale_judging import JudgeAsk, in_scope

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Rubric
    from pytest_screeneval.scoring.protocol import CriterionScore
    from pytest_screeneval.scoring.results import JobResult
    from pytest_screeneval.session.baseline_confirm import BaselineConfirmation
    from pytest_screeneval.session.confirmation import Outcome
    from pytest_screeneval.session.rationale_judging import RationaleJudging
    from pytest_screeneval.session.run import Baseline
    from pytest_screeneval.session.scores import Scores
    from pytest_screeneval.settings.options import Settings

__all__ = ["Judge", "protected_terms"]


def protected_terms(settings: Settings, rootdir: Path) -> ProtectedLexicon:
    """The run's protected terms: the built-in list, with or replaced by the project's file
    (ini ``screeneval_protected_terms``, relative to the rootdir); a bad file is one sentence."""
    if not settings.protected_terms:
        return builtin_protected_terms()
    path = rootdir / settings.protected_terms
    return load_protected_terms(path, shown_as=settings.protected_terms)


class Judge:
    """Verdicts of criterion and decision items against the expected scores and the baseline."""

    def __init__(
        self,
        rubric: Rubric,
        settings: Settings,
        cases: Mapping[str, Case],
        scores: Scores,
        baseline: Baseline,
        requested_model: Callable[[], str],
        terms: ProtectedLexicon | None = None,
        confirmation: BaselineConfirmation | None = None,
    ) -> None:
        self.rubric = rubric
        self.terms = terms or builtin_protected_terms()
        self.settings = settings
        self.cases = cases
        self.scores = scores
        self.baseline = baseline
        self.requested_model = requested_model
        # confirms a movement or crossing against the noise before failing on it
        self.confirmation = confirmation
        # each answer's rationale checks, once (the item and the summary both ask), ahead of
        # the items in a worker process when the run has many
        self.checks = RationaleChecks(self.terms)
        # the optional LLM judge of the rationales (screeneval_rationale_judge), set by the session
        self.judging: RationaleJudging | None = None

    def tolerances(self) -> Tolerances:
        s = self.settings
        return Tolerances(
            s.expected_tolerance,
            s.movement_tolerance,
            s.contested_max_confidence,
            s.rationale_flags == "fail",
        )

    def served_model_mismatch(self, result: JobResult) -> str | None:
        served = result.served_model
        requested = self.requested_model()
        if served and served != requested:
            return f"the scorer asked for model {requested!r} but was served {served!r}"
        return None

    def evidence(self, case: Case, criterion: str, repeat: int = 0) -> CriterionEvidence:
        result = self.scores.results.get((case.id, ORIGINAL, repeat))
        if result is None:
            return CriterionEvidence(None, "", None, "this input was not scored", ())
        score = result.by_criterion.get(criterion)
        error = result.error_for(criterion)
        flags: tuple[str, ...] = ()
        if score is not None:
            answer = (criterion, score.score, score.rationale, tuple(score.evidence))
            flags = self.checks.flags(case.id, case.input_text, answer)
        protected: tuple[str, ...] = ()
        if score is not None and PROTECTED_ATTRIBUTE in flags:
            # rare, so worked out only then: which category and phrase the flag stands for
            findings = rationale_findings(
                case.input_text,
                criterion,
                score.score,
                score.rationale,
                tuple(score.evidence),
                protected_terms=self.terms,
            )
            protected = tuple(f.detail for f in findings if f.flag == PROTECTED_ATTRIBUTE)
        judged = self.judged(case, score, flags) if score is not None else None
        return CriterionEvidence(
            score.score if score else None,
            score.rationale if score else "",
            score.confidence if score else None,
            error,
            flags,
            self.served_model_mismatch(result),
            protected,
            judged,
        )

    def judged(
        self, case: Case, score: CriterionScore, flags: tuple[str, ...]
    ) -> JudgeEvidence | None:
        """The LLM judge's verdict of this answer, when there is a judge and it is in scope."""
        judging = self.judging
        if judging is None or not in_scope(judging.scope, flags):
            return None
        return judging.evidence(
            JudgeAsk(case.id, case.input_text, score.criterion, score.score, score.rationale)
        )

    def judge_ahead(self, results: Sequence[JobResult]) -> None:
        """Send the judge the answers just stored, ahead of their items (those in its scope)."""
        judging = self.judging
        if judging is None:
            return
        asks: list[JudgeAsk] = []
        for result in results:
            job = result.job
            if job.variant_key != ORIGINAL or job.repeat_index != 0:
                continue
            case = self.cases[job.case_id]
            for score in result.by_criterion.values():
                if not judging.wanted(case.id, score.criterion):
                    continue  # no item of this run reads it
                if judging.scope != "all":
                    answer = (score.criterion, score.score, score.rationale, tuple(score.evidence))
                    if not in_scope(
                        judging.scope, self.checks.flags(case.id, case.input_text, answer)
                    ):
                        continue
                asks.append(
                    JudgeAsk(
                        case.id, case.input_text, score.criterion, score.score, score.rationale
                    )
                )
        judging.ahead(asks)

    def criterion_verdict(self, case_id: str, criterion: str) -> Verdict:
        case = self.cases[case_id]
        evidence = self.evidence(case, criterion)
        before = self.baseline.scores.get((case_id, criterion))
        review = None
        confirmation = None
        after = evidence.score
        if before is not None and after is not None and before != after:
            review = self.baseline.review(case_id, criterion, str(before), str(after))
            tolerance = self.settings.movement_tolerance
            moved = abs(after - before) > tolerance + 1e-9
            if moved and review is None and self.baseline.info and self.confirmation:
                outcome = self.confirmation.movement(case, criterion, tolerance, before, after)
                confirmation = _note(outcome)
        return criterion_verdict(
            case,
            criterion,
            evidence,
            self.tolerances(),
            self.baseline.info,
            before,
            review,
            confirmation,
        )

    def decision_verdict(self, case_id: str) -> Verdict:
        case = self.cases[case_id]
        result = self.scores.results.get((case_id, ORIGINAL, 0))
        overall = self.scores.overall_of(result) if result else None
        names = self.rubric.criterion_names
        missing = [n for n in names if result is None or n not in result.by_criterion]
        baseline_overall = None
        if self.baseline.record is not None:
            known = {c: self.baseline.scores.get((case_id, c)) for c in names}
            before = {c: v for c, v in known.items() if v is not None}
            if len(before) == len(known):
                baseline_overall = self.rubric.overall(before)
        review = None
        confirmation = None
        if overall is not None and baseline_overall is not None:
            b, a = self.rubric.decision(baseline_overall), self.rubric.decision(overall)
            if a != b:
                review = self.baseline.review(case_id, "decision", b, a)
                if review is None and self.baseline.info and self.confirmation:
                    outcome = self.confirmation.crossing(case, baseline_overall, overall)
                    confirmation = _note(outcome)
        return decision_verdict(
            case,
            self.rubric,
            overall,
            missing,
            self.baseline.info,
            baseline_overall,
            review,
            run_id=self.scores.run.run_id,
            confirmation=confirmation,
        )


def _note(outcome: Outcome) -> ConfirmationNote:
    return ConfirmationNote(outcome.status, outcome.line, outcome.properties())
