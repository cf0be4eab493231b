"""Item verdicts: why a (case, criterion) or (case, decision) item passes or fails.

Pure module. The plugin gathers plain values (the score, the baseline, a review) and asks here;
the answer carries the readable block that pytest shows for a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_screeneval.evidence.metrics import is_within
from pytest_screeneval.golden.model import Case, Rubric

__all__ = [
    "BaselineInfo",
    "ConfirmationNote",
    "CriterionEvidence",
    "JudgeEvidence",
    "ReviewInfo",
    "Tolerances",
    "Verdict",
    "criterion_verdict",
    "decision_verdict",
    "with_served_model_fault",
]

PROTECTED = "protected-attribute"
UNGROUNDED = "ungrounded"


@dataclass(frozen=True)
class BaselineInfo:
    run_id: int
    accepted_by: str
    accepted_at: str

    def describe(self) -> str:
        return f"run {self.run_id}, accepted by {self.accepted_by} on {self.accepted_at[:10]}"


@dataclass(frozen=True)
class ReviewInfo:
    reviewed_by: str
    reviewed_at: str
    note: str

    def describe(self) -> str:
        note = f': "{self.note}"' if self.note else ""
        return f"reviewed by {self.reviewed_by} on {self.reviewed_at[:10]}{note}"


@dataclass(frozen=True)
class JudgeEvidence:
    """What the optional LLM judge said of one rationale (``screeneval_rationale_judge``)."""

    judge: str  # how messages name it: "the LLM judge acme-judge-2025-01-01"
    protected: bool = False
    protected_finding: str = ""  # 'age: "late-career"', as the rules name theirs
    ungrounded: bool = False
    claim: str = ""
    error: str | None = None  # the judgement failed: no finding either way
    cached: bool = False  # reused from the store, not asked in this run
    served_model: str | None = None
    judgement_id: int | None = None  # its row in the store


@dataclass(frozen=True)
class CriterionEvidence:
    """What the run produced for one (case, criterion), repeat 0, original text."""

    score: int | None
    rationale: str
    confidence: float | None
    error: str | None
    flags: tuple[str, ...]
    served_model_mismatch: str | None = None
    # what each protected reference is: its category and phrase, as in 'age: "late-career"'
    protected_findings: tuple[str, ...] = ()
    judge: JudgeEvidence | None = None  # the LLM judge's verdict, when one is configured


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...]  # why it failed (empty when passed)
    notes: tuple[str, ...]  # warnings and reviews that let it pass
    block: str  # the readable block shown on failure
    properties: tuple[tuple[str, str], ...] = ()  # for JUnit XML: score, expected, baseline
    # the scorer did not answer as asked (an error, no usable score, the wrong model): an item
    # marked xfail still fails then, an outage is not an expected failure
    scorer_fault: bool = False


@dataclass(frozen=True)
class ConfirmationNote:
    """What re-scoring concluded about a difference with the baseline that was about to fail an
    item: only a ``confirmed`` one fails it; the others are listed, not hidden."""

    status: str  # "confirmed" | "unstable" | "unconfirmed"
    line: str  # how it was confirmed, one line
    properties: tuple[tuple[str, str], ...] = ()

    @property
    def confirmed(self) -> bool:
        return self.status == "confirmed"


def _confirmed_or_noted(
    confirmation: ConfirmationNote | None, reason: str, reasons: list[str], notes: list[str]
) -> None:
    """Fail on ``reason`` when the difference holds (or nothing was asked to confirm it)."""
    if confirmation is None or confirmation.confirmed:
        reasons.append(reason)
    else:
        notes.append(f"{confirmation.status}, not a finding: {confirmation.line}")


def _confirmed_line(confirmation: ConfirmationNote | None) -> list[str]:
    """The block's line saying how a failing difference was confirmed."""
    if confirmation is not None and confirmation.confirmed:
        return [f"  confirmed  {confirmation.line}"]
    return []


@dataclass(frozen=True)
class Tolerances:
    expected: float
    movement: float
    contested_max_confidence: float
    soft_flags_fail: bool


def _expectation_line(case: Case, criterion: str, tolerance: float) -> str:
    expectation = case.expected[criterion]
    who = f"set by {expectation.set_by} on {str(expectation.set_at)[:10]}"
    ratings = case.ratings.get(criterion)
    if not ratings:
        return f"{expectation.score} ± {tolerance:g} ({who})"
    raters = ", ".join(f"{rater} {score}" for rater, score in sorted(ratings.items()))
    if case.is_contested(criterion):
        low, high = case.rater_range(criterion)  # type: ignore[misc]
        return f"contested, raters' range {low}..{high} (raters: {raters})"
    return f"{case.expected_score(criterion):g} ± {tolerance:g}, median of raters: {raters} ({who})"


def criterion_verdict(
    case: Case,
    criterion: str,
    evidence: CriterionEvidence,
    tolerances: Tolerances,
    baseline: BaselineInfo | None,
    baseline_score: int | None,
    review: ReviewInfo | None,
    confirmation: ConfirmationNote | None = None,
) -> Verdict:
    """The criterion item's verdict; ``confirmation`` is what re-scoring concluded about an
    unreviewed movement beyond the tolerance (none: the movement is judged as it stands)."""
    reasons: list[str] = []
    notes: list[str] = []
    confirmed_lines: list[str] = []
    score = evidence.score
    if evidence.error is not None:
        reasons.append(f"scorer error: {evidence.error}")
    if evidence.served_model_mismatch:
        reasons.append(evidence.served_model_mismatch)
    if PROTECTED in evidence.flags:
        named = "; ".join(evidence.protected_findings)
        reasons.append(
            "the rationale refers to a protected attribute" + (f" ({named})" if named else "")
        )
    soft = [f for f in evidence.flags if f != PROTECTED]
    if soft:
        if tolerances.soft_flags_fail:
            reasons.append(f"rationale flags: {', '.join(soft)}")
        else:
            notes.append(f"rationale flags (warn only): {', '.join(soft)}")
    if evidence.judge is not None:
        _judge_disagreements(evidence, tolerances, reasons, notes)
    if score is not None:
        if case.is_contested(criterion):
            low, high = case.rater_range(criterion)  # type: ignore[misc]
            if not is_within(case, criterion, score, tolerances.expected):
                reasons.append(
                    f"contested item scored {score}, outside the raters' range {low}..{high}"
                )
            if (
                evidence.confidence is not None
                and evidence.confidence > tolerances.contested_max_confidence + 1e-9
            ):
                reasons.append(
                    f"confidence {evidence.confidence:.2f} on a contested item is above "
                    f"{tolerances.contested_max_confidence:.2f}"
                )
        else:
            distance = abs(score - case.expected_score(criterion))
            if distance > tolerances.expected + 1e-9:
                reasons.append(
                    f"{distance:g} from the expected score, tolerance {tolerances.expected:g}"
                )
        if baseline is not None and baseline_score is not None:
            moved = abs(score - baseline_score)
            if moved > tolerances.movement + 1e-9:
                if review is not None:
                    notes.append(f"moved {baseline_score} → {score}, {review.describe()}")
                else:
                    moved_reason = (
                        f"moved {baseline_score} → {score} against the baseline, tolerance "
                        f"{tolerances.movement:g}, not reviewed"
                    )
                    _confirmed_or_noted(confirmation, moved_reason, reasons, notes)
                    confirmed_lines = _confirmed_line(confirmation)

    lines = [f"{case.id} · {criterion}"]
    lines.append(f"  score      {score if score is not None else 'none'}")
    lines.append(f"  expected   {_expectation_line(case, criterion, tolerances.expected)}")
    if baseline is None:
        lines.append("  baseline   none accepted yet")
    else:
        before = "not scored" if baseline_score is None else str(baseline_score)
        lines.append(
            f"  baseline   {before} → {score if score is not None else 'none'}   "
            f"({baseline.describe()})"
        )
    if evidence.rationale:
        lines.append(f"  rationale  {evidence.rationale}")
    if evidence.confidence is not None:
        lines.append(f"  confidence {evidence.confidence:.2f}")
    lines.append(f"  flags      {', '.join(evidence.flags) if evidence.flags else 'none'}")
    if evidence.judge is not None:
        lines.append(f"  judge      {_judge_line(evidence.judge)}")
    lines += confirmed_lines
    for reason in reasons:
        lines.append(f"  FAILED     {reason}")
    for note in notes:
        lines.append(f"  note       {note}")
    properties = (
        ("score", "none" if score is None else str(score)),
        ("expected", f"{case.expected_score(criterion):g}"),
        ("baseline", "none" if baseline_score is None else str(baseline_score)),
        ("flags", ",".join(evidence.flags)),
        *(_judge_properties(evidence.judge) if evidence.judge is not None else ()),
        *(confirmation.properties if confirmation is not None else ()),
    )
    fault = evidence.error is not None or bool(evidence.served_model_mismatch)
    return Verdict(not reasons, tuple(reasons), tuple(notes), "\n".join(lines), properties, fault)


def _judge_disagreements(
    evidence: CriterionEvidence, tolerances: Tolerances, reasons: list[str], notes: list[str]
) -> None:
    """Where the judge and the rules disagree, one line naming both. A judge-only protected
    finding fails like a rule one; a judge-only ungrounded finding fails or warns as the rule
    flag does; a judgement that failed is said, never read as "no finding"."""
    judge = evidence.judge
    assert judge is not None
    if judge.error is not None:
        notes.append(f"rationale not judged: {judge.judge} failed ({judge.error})")
        return
    rules_protected = PROTECTED in evidence.flags
    if judge.protected and not rules_protected:
        reasons.append(
            f"{judge.judge} says the rationale refers to a protected attribute "
            f"({judge.protected_finding}); the rules did not flag it"
        )
    elif rules_protected and not judge.protected:
        named = "; ".join(evidence.protected_findings)
        notes.append(
            f"the rules flag protected-attribute{f' ({named})' if named else ''}; "
            f"{judge.judge} found no protected attribute"
        )
    rules_ungrounded = UNGROUNDED in evidence.flags
    if judge.ungrounded and not rules_ungrounded:
        line = (
            f"{judge.judge} says the rationale makes a claim the resume does not support "
            f"({judge.claim!r}); the rules did not flag it"
        )
        if tolerances.soft_flags_fail:
            reasons.append(line)
        else:
            notes.append(f"{line} (warn only)")
    elif rules_ungrounded and not judge.ungrounded:
        notes.append(
            f"the rules flag ungrounded; {judge.judge} found every claim supported by the resume"
        )


def _judge_line(judge: JudgeEvidence) -> str:
    if judge.error is not None:
        return f"{judge.judge}: error: {judge.error}"
    found = []
    if judge.protected:
        found.append(f"protected-attribute ({judge.protected_finding})")
    if judge.ungrounded:
        found.append(f"ungrounded ({judge.claim!r})")
    served = f", served {judge.served_model}" if judge.served_model else ""
    cached = ", a stored verdict" if judge.cached else ""
    return f"{judge.judge}{served}: {', '.join(found) if found else 'none'}{cached}"


def _judge_properties(judge: JudgeEvidence) -> tuple[tuple[str, str], ...]:
    if judge.error is not None:
        found = "error"
    else:
        flags = [PROTECTED] * judge.protected + [UNGROUNDED] * judge.ungrounded
        found = ",".join(flags)
    return (("judge_flags", found), ("judge_verdict", str(judge.judgement_id or "")))


def decision_verdict(
    case: Case,
    rubric: Rubric,
    overall: float | None,
    missing: Sequence[str],
    baseline: BaselineInfo | None,
    baseline_overall: float | None,
    review: ReviewInfo | None,
    run_id: int | None = None,
    confirmation: ConfirmationNote | None = None,
) -> Verdict:
    """The decision item's verdict; ``run_id`` goes into the review command it suggests;
    ``confirmation`` is what re-scoring concluded about an unreviewed crossing."""
    reasons: list[str] = []
    notes: list[str] = []
    confirmed_lines: list[str] = []
    lines = [f"{case.id} · decision (advance at {rubric.advance_at:g})"]
    if overall is None:
        reasons.append(f"no overall score: no usable score for {', '.join(missing)}")
        lines.append("  overall    none")
    else:
        lines.append(f"  overall    {overall:.1f} → {rubric.decision(overall)}")
    if baseline is None:
        lines.append("  baseline   none accepted yet")
    elif baseline_overall is None:
        lines.append(f"  baseline   not scored ({baseline.describe()})")
    else:
        lines.append(
            f"  baseline   {baseline_overall:.1f} → {rubric.decision(baseline_overall)}   "
            f"({baseline.describe()})"
        )
        if overall is not None and rubric.decision(overall) != rubric.decision(baseline_overall):
            crossing = f"{rubric.decision(baseline_overall)} → {rubric.decision(overall)}"
            if review is not None:
                notes.append(f"crossing {crossing}, {review.describe()}")
            else:
                crossed = (
                    f"the decision crossed {crossing} against the baseline; a person must review "
                    f"it (screeneval review {run_id or 'RUN'} {case.id} --by NAME --note TEXT)"
                )
                _confirmed_or_noted(confirmation, crossed, reasons, notes)
                confirmed_lines = _confirmed_line(confirmation)
    lines += confirmed_lines
    for reason in reasons:
        lines.append(f"  FAILED     {reason}")
    for note in notes:
        lines.append(f"  note       {note}")
    properties = (
        ("overall", "none" if overall is None else f"{overall:.1f}"),
        ("baseline", "none" if baseline_overall is None else f"{baseline_overall:.1f}"),
        ("decision", "none" if overall is None else rubric.decision(overall)),
        *(confirmation.properties if confirmation is not None else ()),
    )
    return Verdict(
        not reasons, tuple(reasons), tuple(notes), "\n".join(lines), properties, bool(missing)
    )


def with_served_model_fault(verdict: Verdict, mismatch: str | None) -> Verdict:
    """The verdict failed for a wrong served model: an item judged on answers
    from another model than the one asked for is no evidence about the model under test."""
    if mismatch is None:
        return verdict
    return Verdict(
        passed=False,
        reasons=(*verdict.reasons, mismatch),
        notes=verdict.notes,
        block=f"{verdict.block}\n  FAILED     {mismatch}",
        properties=verdict.properties,
        scorer_fault=True,
    )
