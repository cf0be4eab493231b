"""A session's summary: every table and gate of the run, as plain values.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`: a function of the other
parts (scores, judge, fairness, baseline), so the session holds the run's lifecycle and this
module the figures the reports print.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_screeneval.evidence.fairness_summary import PerturbationCase, gap_summary, shift_summary
from pytest_screeneval.evidence.gate_confidence import gate_confidence
from pytest_screeneval.evidence.gates import GateInputs, GateLimits, GateResult, evaluate_gates
from pytest_screeneval.evidence.metrics import (
    CriterionAgreement,
    Crossing,
    Movement,
    SelfConsistency,
    SliceAgreement,
    compared_items,
    criterion_agreement,
    crossings,
    movements,
    self_consistency,
    slice_agreement,
)
from pytest_screeneval.evidence.reliability import RaterAgreement, rater_agreement
from pytest_screeneval.evidence.served import served_backend
from pytest_screeneval.golden.model import ORIGINAL, ItemKind

if TYPE_CHECKING:
    from pytest_screeneval.evidence.noise import NoiseEstimate
    from pytest_screeneval.golden.model import Case, Rubric
    from pytest_screeneval.scoring.protocol import ScorerIdentity
    from pytest_screeneval.scoring.results import JobResult
    from pytest_screeneval.session.baseline_confirm import BaselineConfirmation
    from pytest_screeneval.session.fairness import Fairness
    from pytest_screeneval.session.judge import Judge
    from pytest_screeneval.session.run import Baseline
    from pytest_screeneval.session.scores import ItemNeed, Scores
    from pytest_screeneval.settings.options import Settings
    from pytest_screeneval.store.database import RunRecord

__all__ = ["RunSummary", "summarize"]


@dataclass
class RunSummary:
    """Everything the reports show, as plain values."""

    run_id: int
    status: str
    identity: dict[str, object]
    served_models: tuple[str, ...]
    baseline: RunRecord | None
    selection: dict[str, int]
    agreement: list[CriterionAgreement]
    slices: list[SliceAgreement]
    movements: list[Movement]
    crossings: list[Crossing]
    reviewed_crossings: dict[str, str]
    counterfactual: dict[str, dict[str, object]]
    perturbation: dict[str, dict[str, object]]
    consistency: SelfConsistency | None
    gates: list[GateResult]
    calls: dict[str, int]
    errors: int
    duration_s: float
    slice_min_n: int
    accepted: dict[str, object] | None = None
    warnings: list[str] = field(default_factory=list)
    rater_agreement: dict[str, RaterAgreement] = field(default_factory=dict)
    # the scorer's measured noise and what confirming cost (session/noise_summary.py)
    noise: dict[str, object] = field(default_factory=dict)
    confirmation: dict[str, object] = field(default_factory=dict)
    # what confirmation concluded of the unreviewed movements, by status
    movement_statuses: dict[str, int] = field(default_factory=dict)
    # the system fingerprints the provider said served the answers, and their flags
    served_backend: dict[str, object] = field(default_factory=dict)
    # how the runner's concurrency moved and how long it waited on rate limits
    pacing: dict[str, object] = field(default_factory=dict)
    # the optional LLM judge of the rationales: who, and how many verdicts asked, reused, failed
    rationale_judge: dict[str, object] = field(default_factory=dict)


def _served_inputs(results: Iterable[JobResult], requested: str) -> dict[str, Any]:
    """The served-model gate's inputs: answers served by another model than the one asked."""
    said = [r.served_model for r in results if r.served_model and not r.cached]
    wrong = sorted({m for m in said if m != requested})
    detail = (
        f"asked for {requested!r}, served {', '.join(repr(m) for m in wrong)}"
        if wrong
        else (f"every answer served by {requested!r}" if said else "")
    )
    return {
        "served_mismatches": sum(1 for m in said if m != requested),
        "served_answers": len(said),
        "served_detail": detail,
    }


def summarize(
    *,
    run_id: int,
    status: str,
    identity: ScorerIdentity,
    selected_items: Mapping[ItemKind, int],
    needs: Sequence[ItemNeed],
    cases_by_id: Mapping[str, Case],
    rubric: Rubric,
    settings: Settings,
    scores: Scores,
    judge: Judge,
    fairness: Fairness,
    baseline: Baseline,
    warnings: Sequence[str],
    duration_s: float,
    noise: NoiseEstimate | None = None,
    against_baseline: BaselineConfirmation | None = None,
) -> RunSummary:
    """Compute every table and gate of the run, the gates in one pass against ``noise`` (the
    scorer's measured noise) and what ``against_baseline`` concluded of each movement."""
    s = settings
    selected_cases = sorted({need.case_id for need in needs})
    cases = [cases_by_id[c] for c in selected_cases]
    criterion_needs = {(n.case_id, n.target) for n in needs if n.kind == ItemKind.CRITERION}
    table = {k: v for k, v in scores.table().items() if k in criterion_needs}
    baseline_table = (
        {k: v for k, v in baseline.scores.items() if k in criterion_needs}
        if baseline.record is not None
        else None
    )
    agreement = criterion_agreement(cases, rubric, table, s.expected_tolerance, baseline_table)
    slices = slice_agreement(cases, table, s.expected_tolerance)
    moved = movements(table, baseline_table) if baseline_table is not None else []
    # every unexplained movement counts, also one within the item's movement tolerance
    unreviewed_moved = [
        m
        for m in moved
        if baseline.review(m.case_id, m.criterion, str(m.before), str(m.after)) is None
    ]
    decision_ids = {n.case_id for n in needs if n.kind == ItemKind.DECISION}
    full_table = {k: v for k, v in scores.table().items() if k[0] in decision_ids}
    flips = (
        crossings(
            rubric,
            full_table,
            {k: v for k, v in baseline.scores.items() if k[0] in decision_ids},
        )
        if baseline.record is not None
        else []
    )
    reviewed_flips = {}
    for flip in flips:
        review = baseline.review(flip.case_id, "decision", flip.before, flip.after)
        if review is not None:
            reviewed_flips[flip.case_id] = review.reviewed_by
    consistency = None
    if s.repeat > 1:
        repeated: dict[tuple[str, str], list[int | None]] = defaultdict(list)
        for (case_id, variant, _repeat), result in sorted(scores.results.items()):
            if variant != ORIGINAL:
                continue
            for criterion in rubric.criterion_names:
                if (case_id, criterion) in criterion_needs:
                    score = result.by_criterion.get(criterion)
                    repeated[(case_id, criterion)].append(score.score if score else None)
        consistency = self_consistency(repeated, s.repeat)
    protected = 0
    rationale_items = 0
    for case_id, criterion in criterion_needs:
        evidence = judge.evidence(cases_by_id[case_id], criterion)
        if evidence.score is not None:
            rationale_items += 1
            # a reference the rules or the optional LLM judge found: either fails its item
            judged = evidence.judge
            protected += "protected-attribute" in evidence.flags or (
                judged is not None and judged.protected
            )
    raters = {
        criterion: rater_agreement(
            {c.id: c.ratings[criterion] for c in cases if criterion in c.ratings}
        )
        for criterion in rubric.criterion_names
    }
    fairness_cases = fairness.fairness_cases()
    gaps = gap_summary(fairness_cases.counterfactual)
    shifts = shift_summary(fairness_cases.perturbation)
    movement_statuses = crossing_statuses = None
    baseline_noise = None
    if against_baseline is not None and baseline.record is not None:
        movement_statuses = dict(against_baseline.statuses(unreviewed_moved))
        crossing_statuses = against_baseline.crossing_statuses(
            [f.case_id for f in flips if f.case_id not in reviewed_flips]
        )
        baseline_noise = baseline.noise
    gate_inputs = GateInputs(
        agreement=agreement,
        has_baseline=baseline.record is not None,
        moved=len(unreviewed_moved),
        reviewed_moves=len(moved) - len(unreviewed_moved),
        compared=compared_items(table, baseline_table) if baseline_table is not None else 0,
        slices=slices,
        slice_min_n=s.slice_min_n,
        counterfactual={a: fairness_cases.counterfactual[a] for a in gaps},
        perturbation={k: fairness_cases.perturbation[k] for k in shifts},
        noise=noise,
        baseline_noise=baseline_noise,
        movement_statuses=movement_statuses,
        crossing_statuses=crossing_statuses,
        perturbation_examples=s.perturbation_examples,
        criteria=rubric.criterion_names,
        perturbation_coverage=_search_coverage(
            {k: fairness_cases.perturbation[k] for k in shifts},
            cases_by_id,
            s.perturbation_examples,
        ),
        fairness_confidence=gate_confidence(s.decide_budget),
        consistency=consistency,
        protected_flags=protected,
        rationale_items=rationale_items,
        unreviewed_crossings=len(flips) - len(reviewed_flips),
        crossings=len(flips),
        scorer_errors=sum(
            1
            for result in scores.results.values()
            for criterion in rubric.criterion_names
            if result.error_for(criterion)
        ),
        **_served_inputs(scores.results.values(), judge.requested_model()),
    )
    limits = GateLimits(
        s.max_agreement_drop,
        s.max_moved_share,
        s.min_worst_slice,
        s.max_gap,
        s.max_perturbation_shift,
        s.max_self_disagreement,
        s.max_criterion_gap,
    )
    gates = evaluate_gates(gate_inputs, limits)
    results = list(scores.results.values())
    calls = {
        "scored": scores.calls,
        "reused": sum(1 for r in results if r.reused_from_run is not None),
        "deduplicated": sum(1 for r in results if r.cached),
        "needed_retries": sum(1 for r in results if r.attempts > 1),
        "attempts": sum(r.attempts for r in results if not r.cached),
        "prompt_tokens": sum(r.prompt_tokens for r in results if not r.cached),
        "completion_tokens": sum(r.completion_tokens for r in results if not r.cached),
    }
    errors = sum(1 for r in results for c in rubric.criterion_names if r.error_for(c))
    served = served_backend(
        ((r.job.case_id, r.system_fingerprint) for r in results if not r.cached),
        baseline.fingerprints,
        baseline.record.run_id if baseline.record is not None else None,
    )
    runner = scores.runner
    return RunSummary(
        run_id=run_id,
        status=status,
        identity=identity.as_dict(),
        served_models=tuple(sorted(scores.served())),
        baseline=baseline.record,
        selection={
            "cases": len(selected_cases),
            "of_cases": len(cases_by_id),
            **{kind.value: n for kind, n in selected_items.items()},
        },
        agreement=agreement,
        slices=slices,
        movements=moved,
        crossings=flips,
        reviewed_crossings=reviewed_flips,
        counterfactual={a: g.as_dict() for a, g in gaps.items()},
        perturbation={k: v.as_dict() for k, v in shifts.items()},
        consistency=consistency,
        gates=gates,
        calls=calls,
        errors=errors,
        duration_s=duration_s,
        slice_min_n=s.slice_min_n,
        warnings=list(warnings),
        rater_agreement=raters,
        movement_statuses=movement_statuses or {},
        served_backend=served.as_dict(),
        pacing=runner.pacing_report().as_dict() if runner is not None else {},
        rationale_judge=_judge_counts(judge),
    )


def _judge_counts(judge: Judge) -> dict[str, object]:
    judging = judge.judging
    if judging is None:
        return {}
    return {
        "judge": judging.label,
        "scope": judging.scope,
        "asked": judging.asked,
        "reused": judging.reused,
        "failed": judging.errors,
        "not_stored": judging.unstored,
        "store_error": judging.store_error,
    }


def _search_coverage(
    by_kind: Mapping[str, Sequence[PerturbationCase]],
    cases_by_id: Mapping[str, Case],
    examples: int,
) -> dict[str, tuple[int, int]]:
    """kind → (kinds of edit tried, kinds there were), summed over the cases each kind measured:
    the searches' first examples are one per kind of edit (``probes.perturb.stratified``)."""
    from pytest_screeneval.probes.perturb import coverage

    covered: dict[str, tuple[int, int]] = {}
    for kind, measured in by_kind.items():
        tried = total = 0
        for case in measured:
            if case.case_id in cases_by_id:
                t, k = coverage(kind, cases_by_id[case.case_id].input_text, examples)
                tried, total = tried + t, total + k
        covered[kind] = (tried, total)
    return covered
