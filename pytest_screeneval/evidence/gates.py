"""Session gates: each a name, a value, a limit, an n and a verdict, built in one pass.

Pure module. ``evaluate_gates`` calls one builder per gate, noise-aware from the start: the
gates against the baseline (``evidence.baseline_gates``) and the fairness gates
(``evidence.fairness_gates``) get the scorer's measured noise with their inputs. A gate with
nothing to measure (no baseline yet, no repeats, no counterfactuals selected) says so with status
``N/A`` instead of passing silently; so does a gate whose n is 0 whatever its value (``0 of 0
items differ`` is no evidence of anything), and a gate whose n was shrunk by scorer errors says
how many were left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_screeneval.evidence.baseline_gates import (
    agreement_drop_gate,
    crossings_gate,
    moved_share_gate,
    noise_differences,
)
from pytest_screeneval.evidence.fairness_gates import (
    counterfactual_criterion_gate,
    counterfactual_gate,
    perturbation_gate,
)
from pytest_screeneval.evidence.fairness_summary import CounterfactualCase, PerturbationCase
from pytest_screeneval.evidence.gate_result import (
    FAIL,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    PASS,
    GateResult,
    GateStatus,
    at_least,
    at_most,
)
from pytest_screeneval.evidence.metrics import CriterionAgreement, SelfConsistency, SliceAgreement
from pytest_screeneval.evidence.noise import NoiseEstimate

__all__ = [
    "FAIL",
    "INCONCLUSIVE",
    "NOT_APPLICABLE",
    "PASS",
    "GateInputs",
    "GateLimits",
    "GateResult",
    "GateStatus",
    "evaluate_gates",
]


@dataclass(frozen=True)
class GateInputs:
    """Everything the gates read, already computed by the metrics."""

    agreement: Sequence[CriterionAgreement]
    has_baseline: bool
    moved: int
    compared: int
    slices: Sequence[SliceAgreement]
    slice_min_n: int
    counterfactual: Mapping[str, Sequence[CounterfactualCase]]
    perturbation: Mapping[str, Sequence[PerturbationCase]]
    consistency: SelfConsistency | None
    protected_flags: int
    rationale_items: int
    unreviewed_crossings: int
    crossings: int
    reviewed_moves: int = 0
    # score rows with a scorer error: left out of every gate's n, which the detail then says
    scorer_errors: int = 0
    # scorer answers whose served model is not the model asked for, of the answers that said
    served_mismatches: int = 0
    served_answers: int = 0
    served_detail: str = ""
    # the scorer's measured noise (None: judge every difference as exact), the baseline's own
    noise: NoiseEstimate | None = None
    baseline_noise: NoiseEstimate | None = None
    # what confirmation concluded of each unreviewed movement / crossing (None: not confirmed)
    movement_statuses: Mapping[str, int] | None = None
    crossing_statuses: Sequence[str] | None = None
    perturbation_examples: int = 1
    # the rubric's criteria, in order (the per-criterion counterfactual gate goes through each)
    criteria: Sequence[str] = ()
    # kind → (kinds of edit the searches tried, kinds there were), summed over the cases
    perturbation_coverage: Mapping[str, tuple[int, int]] | None = None
    # the confidence of the fairness gates' intervals (below 95% when looks are corrected)
    fairness_confidence: float = 0.95


@dataclass(frozen=True)
class GateLimits:
    max_agreement_drop: float
    max_moved_share: float
    min_worst_slice: float
    max_gap: float
    max_perturbation_shift: float
    max_self_disagreement: float
    max_criterion_gap: float = 0.5


def evaluate_gates(inputs: GateInputs, limits: GateLimits) -> list[GateResult]:
    gates = _evaluate(inputs, limits)
    if not inputs.scorer_errors:
        return gates
    shrunk = f"{inputs.scorer_errors} scorer error(s) left out of its n"
    return [g.with_detail(shrunk) for g in gates]


def worst_slice_gate(slices: Sequence[SliceAgreement], min_n: int, limit: float) -> GateResult:
    gated = [s for s in slices if s.cases >= min_n]
    small = len(slices) - len(gated)
    if not gated:
        return at_least("worst-slice", None, limit, 0, f"no slice has n >= {min_n} cases")
    worst = min(gated, key=lambda s: (s.pct, s.slice))
    detail = (
        f"{worst.slice}: {worst.within}/{worst.items} items, {worst.cases} cases, "
        f"95% CI {worst.ci_low:.1f}–{worst.ci_high:.1f}"
        + (f"; {small} slice(s) under n={min_n} shown, not gated" if small else "")
    )
    return at_least("worst-slice", worst.pct, limit, worst.cases, detail)


def self_disagreement_gate(consistency: SelfConsistency | None, limit: float) -> GateResult:
    if consistency is None:
        return at_most(
            "self-disagreement", None, limit, 0, "run with --screeneval-repeat 2 or more to measure"
        )
    c = consistency
    return at_most(
        "self-disagreement",
        c.pct,
        limit,
        c.items,
        f"{c.disagreeing} of {c.items} items differ across {c.repeats} repeats",
    )


def _evaluate(inputs: GateInputs, limits: GateLimits) -> list[GateResult]:
    gates: list[GateResult] = [
        agreement_drop_gate(
            row,
            limits.max_agreement_drop,
            has_baseline=inputs.has_baseline,
            noise=inputs.noise,
            baseline_noise=inputs.baseline_noise,
        )
        for row in sorted(inputs.agreement, key=lambda r: r.criterion)
    ]
    gates.append(
        moved_share_gate(
            inputs.moved,
            inputs.compared,
            limits.max_moved_share,
            has_baseline=inputs.has_baseline,
            reviewed=inputs.reviewed_moves,
            statuses=inputs.movement_statuses,
            noise_share=(
                noise_differences(inputs.noise, inputs.baseline_noise)
                if inputs.noise is not None
                else 0.0
            ),
        )
    )
    gates.append(worst_slice_gate(inputs.slices, inputs.slice_min_n, limits.min_worst_slice))
    for attribute, cases in sorted(inputs.counterfactual.items()):
        gates.append(
            counterfactual_gate(
                attribute, cases, inputs.noise, limits.max_gap, inputs.fairness_confidence
            )
        )
        if inputs.criteria:
            gates.append(
                counterfactual_criterion_gate(
                    attribute, cases, inputs.criteria, inputs.noise, limits.max_criterion_gap
                )
            )
    for kind, shifted in sorted(inputs.perturbation.items()):
        gate = perturbation_gate(
            kind,
            shifted,
            inputs.noise,
            limits.max_perturbation_shift,
            inputs.perturbation_examples,
            inputs.fairness_confidence,
        )
        covered = (inputs.perturbation_coverage or {}).get(kind)
        if covered is not None:
            tried, kinds = covered
            gate = gate.with_detail(f"search tried {tried} of {kinds} kinds of edit over its cases")
        gates.append(gate)
    gates.append(self_disagreement_gate(inputs.consistency, limits.max_self_disagreement))
    gates.append(
        at_most(
            "protected-attribute-flags", float(inputs.protected_flags), 0, inputs.rationale_items
        )
    )
    # a run scored by another model than the one asked for is evidence about that other model
    gates.append(
        at_most(
            "served-model",
            float(inputs.served_mismatches),
            0,
            inputs.served_answers,
            inputs.served_detail or "the scorer named no served model",
        )
    )
    gates.append(
        crossings_gate(
            inputs.unreviewed_crossings,
            inputs.crossings,
            has_baseline=inputs.has_baseline,
            statuses=inputs.crossing_statuses,
        )
    )
    return gates
