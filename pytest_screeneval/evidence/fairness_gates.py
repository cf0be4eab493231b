"""The fairness gates, judged against the scorer's noise: counterfactual gap, perturbation shift.

Pure module, one builder per gate. Each gate's value is the estimate its verdict rests on
(``judge_limit``'s basis), with its interval; the worst single case is named apart, labelled as
such. Two ways to judge, by what the run knows of its scorer's noise:

* **exact** (the scorer measured no noise, or nothing is known of it): every interval has zero
  width, so the gate compares its worst case's gap with the limit, as a plain check.
* **noisy** (re-scores came back different): the paired difference of each value pair across
  cases, with simultaneous intervals from a seeded case bootstrap on each text's median answer
  (``evidence.bootstrap``): no normal law is assumed for the noise, whose jumps (a call one level
  off on every criterion) a t interval on a pooled standard deviation gets wrong. FAIL when some
  pair's interval lies beyond the limit, PASS when every pair's lies within, INCONCLUSIVE
  otherwise, with what would decide it. A single case is judged by its own item (confirmed on
  fresh answers, with the run's error controlled across items), not by the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean

from pytest_screeneval.evidence.bootstrap import bootstrap_pairs, center
from pytest_screeneval.evidence.fairness_summary import (
    CounterfactualCase,
    PerturbationCase,
    spread,
)
from pytest_screeneval.evidence.gate_result import (
    FAIL,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    PASS,
    GateResult,
)
from pytest_screeneval.evidence.noise import NoiseEstimate
from pytest_screeneval.evidence.paired import (
    GateCall,
    PairEstimate,
    judge_limit,
    paired_estimates,
    worst_case_interval,
)

__all__ = [
    "counterfactual_criterion_gate",
    "counterfactual_gate",
    "is_noisy",
    "perturbation_gate",
]

PerCase = dict[str, dict[str, list[float]]]


def is_noisy(noise: NoiseEstimate | None) -> bool:
    """Judge with noise when re-scores came back different (else every difference is exact)."""
    return noise is not None and noise.measured and not noise.deterministic


def _gate(name: str, limit: float, n: int, call: GateCall, worst: str) -> GateResult:
    detail = call.detail
    if worst and "worst single case" not in detail:
        detail = f"{detail}; worst single case {worst}"
    if call.to_decide:
        detail = f"{detail}; to decide: {call.to_decide}"
    basis = call.basis
    return GateResult(
        name,
        basis.estimate if basis is not None else None,
        f"<= {limit:g}",
        n,
        call.status,
        detail,
        (basis.low, basis.high) if basis is not None else None,
        worst,
    )


def _robust(
    per_case: PerCase,
    limit: float,
    seed: str,
    confidence: float,
    shown: Callable[[PairEstimate], str] = PairEstimate.shown,
) -> GateCall:
    pairs = bootstrap_pairs(per_case, seed=seed, confidence=confidence)
    estimates = [PairEstimate(p.high, p.low, p.cases, p.interval, p.answers) for p in pairs]
    call = judge_limit(estimates, limit, shown=shown)
    if call.to_decide:
        call = GateCall(
            call.status,
            call.basis,
            call.detail,
            f"{call.to_decide} (screeneval_decide_budget re-scores where a gate is undecided)",
        )
    return call


def counterfactual_gate(
    attribute: str,
    cases: Sequence[CounterfactualCase],
    noise: NoiseEstimate | None,
    limit: float,
    confidence: float = 0.95,
) -> GateResult:
    name = f"counterfactual-gap[{attribute}]"
    per_case: PerCase = {
        c.case_id: {v: list(xs) for v, xs in c.answers.items() if xs}
        for c in cases
        if sum(1 for xs in c.answers.values() if xs) >= 2
    }
    if not per_case:
        return GateResult(name, None, f"<= {limit:g}", 0, NOT_APPLICABLE, "no case scored twice")
    if not is_noisy(noise):
        estimates = paired_estimates(per_case, noise_sd=0.0, df=None)
        found = worst_case_interval(per_case, noise_sd=0.0, df=None)
        worst_interval, where = found if found else (None, "")
        call = judge_limit(estimates, limit, worst_interval, where)
        worst = f"{where}: {worst_interval.estimate:.1f}" if worst_interval is not None else ""
        return _gate(name, limit, len(per_case), call, worst)
    call = _robust(per_case, limit, name, confidence)
    gaps = {
        case_id: spread({v: center(xs) for v, xs in by.items()}) for case_id, by in per_case.items()
    }
    worst_id = min(gaps, key=lambda c: (-gaps[c][0], c))
    size, high, low = gaps[worst_id]
    return _gate(name, limit, len(per_case), call, f"{worst_id} ({high} vs {low}): {size:.1f}")


def counterfactual_criterion_gate(
    attribute: str,
    cases: Sequence[CounterfactualCase],
    criteria: Sequence[str],
    noise: NoiseEstimate | None,
    limit: float,
) -> GateResult:
    """The largest per-criterion gap across the attribute's values, in levels.

    A bias can trade one criterion for another (one level less on ``cloud``, one more on
    ``leadership``) and leave the overall score, and so the overall gap, untouched; a recruiter
    reads the per-criterion scores, so the trade reaches a person. Each criterion gets the
    overall gap's rules on its own levels (exact paired differences for a scorer that measured
    no noise; for a noisy one, each text's median level and the seeded case bootstrap); the
    intervals are corrected over the criteria as well as the value pairs (Bonferroni), and the
    gate takes the criterion whose verdict is the most severe (FAIL, then INCONCLUSIVE, then
    PASS; the largest estimate among equals). The detail names it.
    """
    name = f"counterfactual-criterion-gap[{attribute}]"
    confidence = 1 - 0.05 / max(1, len(criteria))
    calls: list[tuple[str, GateCall, str, int]] = []
    for criterion in criteria:
        per_case = {
            case.case_id: {v: [float(x) for x in xs] for v, xs in answers.items()}
            for case in cases
            if len(answers := case.criterion_answers(criterion)) >= 2
        }
        if not per_case:
            continue

        def shown(e: PairEstimate) -> str:
            return (
                f"{e.high} vs {e.low}: mean gap {e.interval.estimate:.2f} levels, "
                f"{e.interval.shown()}, n={e.cases}"
            )

        if is_noisy(noise):
            # the overall gap's robust path: each text's median level, a seeded case bootstrap
            call = _robust(per_case, limit, f"{name}:{criterion}", confidence, shown)
            calls.append((criterion, call, "", len(per_case)))
            continue
        estimates = paired_estimates(per_case, noise_sd=0.0, df=None, confidence=confidence)
        found = worst_case_interval(per_case, noise_sd=0.0, df=None, confidence=confidence)
        worst_interval, where = found if found else (None, "")
        call = judge_limit(estimates, limit, worst_interval, where, shown=shown)
        worst = f"{where}: {worst_interval.estimate:g} levels" if worst_interval else ""
        calls.append((criterion, call, worst, len(per_case)))
    if not calls:
        return GateResult(name, None, f"<= {limit:g}", 0, NOT_APPLICABLE, "no case scored twice")
    severity = {FAIL: 0, INCONCLUSIVE: 1, PASS: 2}

    def rank(entry: tuple[str, GateCall, str, int]) -> tuple[int, float, str]:
        criterion, call, _worst, _n = entry
        estimate = call.basis.estimate if call.basis is not None else 0.0
        return severity.get(call.status, 3), -estimate, criterion

    criterion, call, worst, n = min(calls, key=rank)
    detail = f"{criterion}: {call.detail}"
    if worst and "worst" not in call.detail:
        detail += f"; worst single case {worst}"
    call = GateCall(call.status, call.basis, detail, call.to_decide)
    return _gate(name, limit, n, call, f"{criterion} {worst}" if worst else "")


def perturbation_gate(
    kind: str,
    cases: Sequence[PerturbationCase],
    noise: NoiseEstimate | None,
    limit: float,
    examples: int,
    confidence: float = 0.95,
) -> GateResult:
    name = f"perturbation-shift[{kind}]"
    measured = [c for c in cases if c.original and c.shifts()]
    if not measured:
        return GateResult(name, None, f"<= {limit:g}", 0, NOT_APPLICABLE, "no case measured")

    def shown(e: PairEstimate) -> str:
        return (
            f"shift {e.interval.estimate:.1f} ({e.high} higher), {e.interval.shown()}, n={e.cases}"
        )

    if not is_noisy(noise):
        systematic: PerCase = {}
        worst_sides: PerCase = {}
        for case in measured:
            firsts = [xs[0] for xs in case.examples.values() if xs]
            systematic[case.case_id] = {"perturbed": firsts, "original": list(case.original)}
            _shift, key = case.worst()
            worst_sides[case.case_id] = {
                "worst example": list(case.examples[key]),
                "original": list(case.original),
            }
        estimates = paired_estimates(systematic, noise_sd=0.0, df=None)
        # the worst example of a case was picked among its examples: count them in the family
        found = worst_case_interval(worst_sides, noise_sd=0.0, df=None, family=max(1, examples))
        worst_interval, where = found if found else (None, "")
        where = where.split(" (")[0]
        call = judge_limit(estimates, limit, worst_interval, where, shown=shown)
        worst = f"{where}: {worst_interval.estimate:.1f}" if worst_interval is not None else ""
        return _gate(name, limit, len(systematic), call, worst)
    centered: PerCase = {
        case.case_id: {
            "perturbed": [fmean(center(xs) for xs in case.examples.values() if xs)],
            "original": list(case.original),
        }
        for case in measured
    }
    call = _robust(centered, limit, name, confidence, shown)
    shifts = {
        case.case_id: max(
            abs(center(xs) - center(case.original)) for xs in case.examples.values() if xs
        )
        for case in measured
    }
    worst_id = min(shifts, key=lambda c: (-shifts[c], c))
    return _gate(name, limit, len(measured), call, f"{worst_id}: {shifts[worst_id]:.1f}")
