"""Session gates: each a name, a value, a limit, an n and a verdict.

Pure module. A gate with nothing to measure (no baseline yet, no repeats, no counterfactuals
selected) says so with status ``N/A`` instead of passing silently; so does a gate whose n is 0
whatever its value (``0 of 0 items differ`` is no evidence of anything), and a gate whose n was
shrunk by scorer errors says how many were left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_screeneval.evidence.gate_status import GateStatus
from pytest_screeneval.evidence.metrics import CriterionAgreement, SelfConsistency, SliceAgreement

__all__ = ["GateInputs", "GateLimits", "GateResult", "evaluate_gates"]

PASS, FAIL, NOT_APPLICABLE = GateStatus.PASS, GateStatus.FAIL, GateStatus.NOT_APPLICABLE


@dataclass(frozen=True)
class GateResult:
    name: str
    value: float | None
    limit: str  # e.g. "<= 5", ">= 80"
    n: int
    status: GateStatus
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status == FAIL

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "value": self.value,
            "limit": self.limit,
            "n": self.n,
            "status": self.status,
            "detail": self.detail,
        }


def _nothing_measured(name: str, limit: str, n: int, detail: str) -> GateResult | None:
    """N/A for a gate with n = 0: a value over nothing passes nothing."""
    if n > 0:
        return None
    return GateResult(name, None, limit, 0, NOT_APPLICABLE, detail or "n = 0: nothing to measure")


def _at_most(
    name: str,
    value: float | None,
    limit: float,
    n: int,
    detail: str = "",
    *,
    counts_events: bool = False,
) -> GateResult:
    # a gate whose n counts events (crossings) rather than measurements passes with none
    if not counts_events and (empty := _nothing_measured(name, f"<= {limit:g}", n, detail)):
        return empty
    if value is None:
        return GateResult(name, None, f"<= {limit:g}", n, NOT_APPLICABLE, detail)
    return GateResult(
        name, value, f"<= {limit:g}", n, PASS if value <= limit + 1e-9 else FAIL, detail
    )


def _at_least(name: str, value: float | None, limit: float, n: int, detail: str = "") -> GateResult:
    if (empty := _nothing_measured(name, f">= {limit:g}", n, detail)) is not None:
        return empty
    if value is None:
        return GateResult(name, None, f">= {limit:g}", n, NOT_APPLICABLE, detail)
    return GateResult(
        name, value, f">= {limit:g}", n, PASS if value >= limit - 1e-9 else FAIL, detail
    )


@dataclass(frozen=True)
class GateInputs:
    """Everything the gates read, already computed by the metrics."""

    agreement: Sequence[CriterionAgreement]
    has_baseline: bool
    moved: int
    compared: int
    slices: Sequence[SliceAgreement]
    slice_min_n: int
    counterfactual_worst: Mapping[
        str, tuple[float, float, int, str]
    ]  # attr -> (worst, mean, n, where)
    perturbation_worst: Mapping[str, tuple[float, int, str]]  # kind -> (worst shift, n, where)
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


@dataclass(frozen=True)
class GateLimits:
    max_agreement_drop: float
    max_moved_share: float
    min_worst_slice: float
    max_gap: float
    max_perturbation_shift: float
    max_self_disagreement: float


def evaluate_gates(inputs: GateInputs, limits: GateLimits) -> list[GateResult]:
    gates = _evaluate(inputs, limits)
    if not inputs.scorer_errors:
        return gates
    shrunk = f"{inputs.scorer_errors} scorer error(s) left out of its n"
    return [
        GateResult(
            g.name, g.value, g.limit, g.n, g.status, f"{g.detail}; {shrunk}" if g.detail else shrunk
        )
        for g in gates
    ]


def _evaluate(inputs: GateInputs, limits: GateLimits) -> list[GateResult]:
    gates: list[GateResult] = []
    for row in sorted(inputs.agreement, key=lambda r: r.criterion):
        drop = None if row.change is None else max(0.0, -row.change)
        detail = (
            "no baseline to compare with"
            if not inputs.has_baseline
            else f"exact {row.exact_pct:.1f}% vs baseline {row.baseline_exact_pct or 0:.1f}%"
        )
        gates.append(
            _at_most(
                f"agreement-drop[{row.criterion}]",
                drop,
                limits.max_agreement_drop,
                row.cases,
                detail,
            )
        )

    share = (
        100.0 * inputs.moved / inputs.compared if inputs.has_baseline and inputs.compared else None
    )
    gates.append(
        _at_most(
            "moved-share",
            share,
            limits.max_moved_share,
            inputs.compared,
            f"{inputs.moved} of {inputs.compared} items moved unreviewed"
            + (f" ({inputs.reviewed_moves} reviewed, not counted)" if inputs.reviewed_moves else "")
            if share is not None
            else "no baseline to compare with",
        )
    )

    gated = [s for s in inputs.slices if s.cases >= inputs.slice_min_n]
    small = len(inputs.slices) - len(gated)
    if gated:
        worst = min(gated, key=lambda s: (s.pct, s.slice))
        detail = (
            f"{worst.slice}: {worst.within}/{worst.items} items, {worst.cases} cases, "
            f"95% CI {worst.ci_low:.1f}–{worst.ci_high:.1f}"
            + (f"; {small} slice(s) under n={inputs.slice_min_n} shown, not gated" if small else "")
        )
        gates.append(
            _at_least("worst-slice", worst.pct, limits.min_worst_slice, worst.cases, detail)
        )
    else:
        gates.append(
            _at_least(
                "worst-slice",
                None,
                limits.min_worst_slice,
                0,
                f"no slice has n >= {inputs.slice_min_n} cases",
            )
        )

    for attribute, (worst_gap, mean_gap, n, where) in sorted(inputs.counterfactual_worst.items()):
        gates.append(
            _at_most(
                f"counterfactual-gap[{attribute}]",
                worst_gap,
                limits.max_gap,
                n,
                f"mean {mean_gap:.1f}; worst {where}",
            )
        )
    for kind, (shift, n, where) in sorted(inputs.perturbation_worst.items()):
        gates.append(
            _at_most(f"perturbation-shift[{kind}]", shift, limits.max_perturbation_shift, n, where)
        )

    if inputs.consistency is None:
        gates.append(
            _at_most(
                "self-disagreement",
                None,
                limits.max_self_disagreement,
                0,
                "run with --screeneval-repeat 2 or more to measure",
            )
        )
    else:
        c = inputs.consistency
        gates.append(
            _at_most(
                "self-disagreement",
                c.pct,
                limits.max_self_disagreement,
                c.items,
                f"{c.disagreeing} of {c.items} items differ across {c.repeats} repeats",
            )
        )

    gates.append(
        _at_most(
            "protected-attribute-flags", float(inputs.protected_flags), 0, inputs.rationale_items
        )
    )
    # a run scored by another model than the one asked for is evidence about that other model
    gates.append(
        _at_most(
            "served-model",
            float(inputs.served_mismatches),
            0,
            inputs.served_answers,
            inputs.served_detail or "the scorer named no served model",
        )
    )
    gates.append(
        _at_most(
            "unreviewed-crossings",
            float(inputs.unreviewed_crossings) if inputs.has_baseline else None,
            0,
            inputs.crossings,
            f"{inputs.crossings} crossing(s) in all"
            if inputs.has_baseline
            else "no baseline to compare with",
            counts_events=True,
        )
    )
    return gates
