"""The fairness gates judged against the scorer's noise: counterfactual gap and perturbation shift.

Pure module. Each gate is a paired estimate across cases with its interval (``evidence.paired``)
next to the worst per-case difference, and a three-way verdict: FAIL when the evidence puts the
gap beyond the limit, PASS when within, INCONCLUSIVE otherwise with what would decide it. With no
measured noise every interval has zero width, so a deterministic scorer gets exactly the verdict
of comparing its worst gap with the limit.

Inputs are the rows the fairness items record per case (plain JSON-able values, so the controller
of an ``-n`` run gets them from its workers):

* counterfactual: ``{"gap": float, "observations": {value: [overall, …]}}``;
* perturbation: ``{"shift": float, "original": [overall, …], "examples": [overall, …],
  "worst": [overall, …]}`` (``worst``: every answer of the worst example, first first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_screeneval.evidence.gate_status import GateStatus
from pytest_screeneval.evidence.gates import GateResult
from pytest_screeneval.evidence.noise import NoiseEstimate
from pytest_screeneval.evidence.paired import (
    judge_limit,
    paired_estimates,
    worst_case_interval,
)

__all__ = ["counterfactual_gate", "perturbation_gate"]

Row = Mapping[str, object]


def _floats(value: object) -> list[float]:
    return [float(x) for x in value] if isinstance(value, list | tuple) else []


def _noise(noise: NoiseEstimate) -> tuple[float, float | None]:
    return noise.overall_sd, (noise.df or None)


def _gate(
    name: str, value: float, limit: float, n: int, call_status: GateStatus, detail: str, decide: str
) -> GateResult:
    if decide:
        detail = f"{detail}; to decide: {decide}"
    return GateResult(name, value, f"<= {limit:g}", n, call_status, detail)


def counterfactual_gate(
    attribute: str, rows: Mapping[str, Row], noise: NoiseEstimate, limit: float
) -> GateResult:
    sd, df = _noise(noise)
    per_case: dict[str, dict[str, Sequence[float]]] = {}
    for case_id, row in rows.items():
        observations = row.get("observations")
        if isinstance(observations, Mapping):
            per_case[case_id] = {str(v): _floats(xs) for v, xs in observations.items()}
    worst_value = max((float(str(r.get("gap", 0.0))) for r in rows.values()), default=0.0)
    estimates = paired_estimates(per_case, noise_sd=sd, df=df)
    worst = worst_case_interval(per_case, noise_sd=sd, df=df)
    call = judge_limit(estimates, limit, *(worst or (None, "")))
    where = f"; worst case {worst[1]}" if worst else ""
    return _gate(
        f"counterfactual-gap[{attribute}]",
        worst_value,
        limit,
        len(rows),
        call.status,
        call.detail + where,
        call.to_decide,
    )


def perturbation_gate(
    kind: str, rows: Mapping[str, Row], noise: NoiseEstimate, limit: float, examples: int
) -> GateResult:
    sd, df = _noise(noise)
    systematic: dict[str, dict[str, Sequence[float]]] = {}
    worst_sides: dict[str, dict[str, Sequence[float]]] = {}
    for case_id, row in rows.items():
        original = _floats(row.get("original"))
        perturbed = _floats(row.get("examples"))
        worst = _floats(row.get("worst"))
        if original and perturbed:
            systematic[case_id] = {"perturbed": perturbed, "original": original}
        if original and worst:
            worst_sides[case_id] = {"worst example": worst, "original": original}
    worst_value = max((float(str(r.get("shift", 0.0))) for r in rows.values()), default=0.0)
    estimates = paired_estimates(systematic, noise_sd=sd, df=df)
    # the worst example of a case was picked among its examples: count them in the family
    found = worst_case_interval(worst_sides, noise_sd=sd, df=df, family=max(1, examples))
    worst_interval, worst_where = found if found else (None, "")
    call = judge_limit(
        estimates,
        limit,
        worst_interval,
        worst_where,
        shown=lambda e: (
            f"shift {e.interval.estimate:.1f} ({e.high} higher), {e.interval.shown()}, n={e.cases}"
        ),
    )
    where = f"; worst case {found[1].split(' (')[0]}" if found else ""
    return _gate(
        f"perturbation-shift[{kind}]",
        worst_value,
        limit,
        len(rows),
        call.status,
        call.detail + where,
        call.to_decide,
    )
