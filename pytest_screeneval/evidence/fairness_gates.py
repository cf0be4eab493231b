"""The fairness gates, judged against the scorer's noise: counterfactual gap, perturbation shift.

Pure module, one builder per gate. Each gate is a paired estimate across cases with its interval
(``evidence.paired``) next to the worst single case, and a three-way verdict: FAIL when the
evidence puts the gap beyond the limit, PASS when within, INCONCLUSIVE otherwise with what would
decide it. The gate's value is the estimate its verdict rests on (``judge_limit``'s basis); the
worst single case is named apart. With no measured noise every interval has zero width, so a
deterministic scorer gets exactly the verdict, and the value, of comparing its worst gap with
the limit.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_screeneval.evidence.fairness_summary import CounterfactualCase, PerturbationCase
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
    judge_limit,
    paired_estimates,
    worst_case_interval,
)

__all__ = ["counterfactual_criterion_gate", "counterfactual_gate", "perturbation_gate"]


def _noise(noise: NoiseEstimate | None) -> tuple[float, float | None]:
    if noise is None:
        return 0.0, None
    return noise.overall_sd, (noise.df or None)


def _gate(name: str, limit: float, n: int, call: GateCall, worst: str) -> GateResult:
    detail = call.detail
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


def counterfactual_gate(
    attribute: str,
    cases: Sequence[CounterfactualCase],
    noise: NoiseEstimate | None,
    limit: float,
) -> GateResult:
    name = f"counterfactual-gap[{attribute}]"
    per_case = {c.case_id: {v: list(xs) for v, xs in c.answers.items()} for c in cases}
    per_case = {c: by for c, by in per_case.items() if sum(1 for xs in by.values() if xs) >= 2}
    if not per_case:
        return GateResult(name, None, f"<= {limit:g}", 0, NOT_APPLICABLE, "no case scored twice")
    sd, df = _noise(noise)
    estimates = paired_estimates(per_case, noise_sd=sd, df=df)
    found = worst_case_interval(per_case, noise_sd=sd, df=df)
    worst_interval, where = found if found else (None, "")
    call = judge_limit(estimates, limit, worst_interval, where)
    worst = f"{where}: {worst_interval.estimate:.1f}" if worst_interval is not None else ""
    if worst and "worst single case" not in call.detail:
        call = GateCall(
            call.status, call.basis, f"{call.detail}; worst single case {worst}", call.to_decide
        )
    return _gate(name, limit, len(per_case), call, worst)


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
    overall gap's paired, noise-aware rules on its own levels, with that criterion's measured
    noise; the intervals are corrected over the criteria as well as the value pairs
    (Bonferroni), and the gate takes the criterion whose verdict is the most severe (FAIL, then
    INCONCLUSIVE, then PASS; the largest estimate among equals). The detail names it.
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
        sd, df = _criterion_noise(noise, criterion)
        estimates = paired_estimates(per_case, noise_sd=sd, df=df, confidence=confidence)
        found = worst_case_interval(per_case, noise_sd=sd, df=df, confidence=confidence)
        worst_interval, where = found if found else (None, "")
        call = judge_limit(
            estimates,
            limit,
            worst_interval,
            where,
            shown=lambda e: (
                f"{e.high} vs {e.low}: mean gap {e.interval.estimate:.2f} levels, "
                f"{e.interval.shown()}, n={e.cases}"
            ),
        )
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


def _criterion_noise(noise: NoiseEstimate | None, criterion: str) -> tuple[float, float | None]:
    if noise is None:
        return 0.0, None
    for measured in noise.criteria:
        if measured.criterion == criterion:
            return measured.sd, (measured.df or noise.df or None)
    return 0.0, None


def perturbation_gate(
    kind: str,
    cases: Sequence[PerturbationCase],
    noise: NoiseEstimate | None,
    limit: float,
    examples: int,
) -> GateResult:
    name = f"perturbation-shift[{kind}]"
    systematic: dict[str, dict[str, list[float]]] = {}
    worst_sides: dict[str, dict[str, list[float]]] = {}
    for case in cases:
        if not case.original or not case.shifts():
            continue
        firsts = [xs[0] for xs in case.examples.values() if xs]
        systematic[case.case_id] = {"perturbed": firsts, "original": list(case.original)}
        _shift, key = case.worst()
        worst_sides[case.case_id] = {
            "worst example": list(case.examples[key]),
            "original": list(case.original),
        }
    if not systematic:
        return GateResult(name, None, f"<= {limit:g}", 0, NOT_APPLICABLE, "no case measured")
    sd, df = _noise(noise)
    estimates = paired_estimates(systematic, noise_sd=sd, df=df)
    # the worst example of a case was picked among its examples: count them in the family
    found = worst_case_interval(worst_sides, noise_sd=sd, df=df, family=max(1, examples))
    worst_interval, where = found if found else (None, "")
    where = where.split(" (")[0]
    call = judge_limit(
        estimates,
        limit,
        worst_interval,
        where,
        shown=lambda e: (
            f"shift {e.interval.estimate:.1f} ({e.high} higher), {e.interval.shown()}, n={e.cases}"
        ),
    )
    worst = f"{where}: {worst_interval.estimate:.1f}" if worst_interval is not None else ""
    if worst and "worst single case" not in call.detail:
        call = GateCall(
            call.status, call.basis, f"{call.detail}; worst single case {worst}", call.to_decide
        )
    return _gate(name, limit, len(systematic), call, worst)
