"""Paired estimates across cases and the three-way gate verdict PASS / FAIL / INCONCLUSIVE.

Pure module. A counterfactual gate asks whether the scorer separates an attribute's values
systematically. For each pair of values (a, b) and each case that has both, the paired difference
is dᵢ = x̄ₐ,ᵢ − x̄_b,ᵢ (means over that case's answers). The estimate is the mean over the n cases,

    d̄ = Σ dᵢ / n,   SE = s · √(Σᵢ (1/nₐ,ᵢ + 1/n_b,ᵢ)) / n,   d̄ ± t(1 − α/(2·m), df) · SE

where s is the measured noise SD (df degrees of freedom) and m the number of value pairs compared
(Bonferroni). The interval says how sure the run is of the gap *on these cases* given the
scorer's noise: the golden set is fixed, the answers are what varies. A deterministic scorer gets
a zero-width interval, so its gates keep the verdicts of a plain comparison with the limit.

``judge_limit`` then calls a gate: FAIL when some estimate (or the worst per-case difference,
confirmed across the whole family of cases) lies beyond the limit; PASS when the evidence puts
every estimate within it (or the worst per-case difference's upper bound is within it);
otherwise INCONCLUSIVE, with how many more cases or re-scores would shrink the interval enough.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from pytest_screeneval.evidence.gate_result import FAIL, INCONCLUSIVE, PASS, GateStatus
from pytest_screeneval.evidence.intervals import Interval, difference_interval, two_sided_quantile

__all__ = [
    "FAIL",
    "INCONCLUSIVE",
    "PASS",
    "GateCall",
    "PairEstimate",
    "judge_limit",
    "paired_estimates",
    "worst_case_interval",
]

_EPS = 1e-9


@dataclass(frozen=True)
class PairEstimate:
    """The systematic difference between two values, oriented so that the estimate is ≥ 0."""

    high: str
    low: str
    cases: int
    interval: Interval
    observations: float  # mean answers per value per case

    def shown(self) -> str:
        return (
            f"{self.high} vs {self.low}: mean gap {self.interval.estimate:.1f}, "
            f"{self.interval.shown()}, n={self.cases}"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "values": [self.high, self.low],
            "cases": self.cases,
            "mean": self.interval.estimate,
            "ci_low": self.interval.low,
            "ci_high": self.interval.high,
            "confidence": self.interval.confidence,
        }


def paired_estimates(
    per_case: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    noise_sd: float,
    df: float | None,
    confidence: float = 0.95,
) -> list[PairEstimate]:
    """Every value pair's paired estimate across the cases that have both values, largest first.

    ``per_case``: case → value → overall scores of that case's variant (first answer first).
    """
    values = sorted({v for by_value in per_case.values() for v, xs in by_value.items() if xs})
    pairs = list(itertools.combinations(values, 2))
    estimates: list[PairEstimate] = []
    for a, b in pairs:
        differences: list[float] = []
        variance_terms = 0.0
        answers = 0
        for by_value in per_case.values():
            xs, ys = by_value.get(a, ()), by_value.get(b, ())
            if not xs or not ys:
                continue
            differences.append(fmean(xs) - fmean(ys))
            variance_terms += 1.0 / len(xs) + 1.0 / len(ys)
            answers += len(xs) + len(ys)
        n = len(differences)
        if not n:
            continue
        mean = fmean(differences)
        half = 0.0
        if noise_sd > 0:
            standard_error = noise_sd * math.sqrt(variance_terms) / n
            half = two_sided_quantile(confidence, df, len(pairs)) * standard_error
        high, low = (a, b) if mean >= 0 else (b, a)
        size = abs(mean)
        estimates.append(
            PairEstimate(
                high,
                low,
                n,
                Interval(size, size - half, size + half, confidence),
                answers / (2 * n),
            )
        )
    estimates.sort(key=lambda e: (-e.interval.estimate, e.high, e.low))
    return estimates


def worst_case_interval(
    per_case: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    noise_sd: float,
    df: float | None,
    confidence: float = 0.95,
    family: int = 1,
) -> tuple[Interval, str] | None:
    """The largest per-case gap with an interval valid for all cases and value pairs at once.

    Each case's gap is its largest |x̄ₐ − x̄_b|; with simultaneous intervals (Bonferroni over every
    case and pair), the largest true gap lies between the largest lower and the largest upper
    bound. Returns that interval and the case where the observed gap is largest. ``family``
    multiplies the comparisons when each case's sides were picked among several (the worst of a
    case's perturbation examples).
    """
    comparisons = max(1, family) * sum(
        math.comb(sum(1 for xs in by_value.values() if xs), 2) for by_value in per_case.values()
    )
    if not comparisons:
        return None
    lows: list[float] = []
    highs: list[float] = []
    worst = (-1.0, "")
    for case_id, by_value in sorted(per_case.items()):
        values = sorted(v for v, xs in by_value.items() if xs)
        for a, b in itertools.combinations(values, 2):
            interval = difference_interval(
                by_value[a], by_value[b], noise_sd, df, confidence, comparisons
            )
            lows.append(interval.magnitude_low)
            highs.append(interval.magnitude_high)
            size = abs(interval.estimate)
            if size > worst[0]:
                high, low = (a, b) if interval.estimate >= 0 else (b, a)
                worst = (size, f"{case_id} ({high} vs {low})")
    return Interval(worst[0], max(lows), max(highs), confidence), worst[1]


@dataclass(frozen=True)
class GateCall:
    status: GateStatus
    basis: Interval | None  # the estimate the verdict rests on, with its interval
    detail: str
    to_decide: str = ""  # for INCONCLUSIVE: what would decide it


def _needed(estimate: PairEstimate, limit: float) -> str:
    distance = abs(estimate.interval.estimate - limit)
    half = estimate.interval.half_width
    if distance <= _EPS:
        return (
            f"{estimate.high} vs {estimate.low} sits on the limit: more data narrows the "
            "interval but cannot move it off the limit"
        )
    factor = (half / distance) ** 2
    cases = math.ceil(estimate.cases * factor)
    repeats = math.ceil(estimate.observations * factor)
    return (
        f"{estimate.high} vs {estimate.low} needs about {factor:.1f}× the evidence: "
        f"{cases} cases, or {repeats} answers of each variant per case"
    )


def judge_limit(
    estimates: Sequence[PairEstimate],
    limit: float,
    worst_case: Interval | None = None,
    worst_case_where: str = "",
    shown: Callable[[PairEstimate], str] = PairEstimate.shown,
) -> GateCall:
    """Three-way verdict of "the gap is at most ``limit``" (see the module docstring).

    The call's ``basis`` is the estimate the verdict rests on: for a FAIL the one whose interval
    lies farthest beyond the limit, for a PASS the worst case when its whole interval is within
    the limit (else the largest systematic estimate), for an INCONCLUSIVE the undecided
    systematic estimate. So a PASS never rests on a value beyond its limit, nor a FAIL on one
    within it; and with no noise (zero-width intervals) the basis is the worst case, as a plain
    comparison of the worst gap with the limit.
    """
    systematic = shown(estimates[0]) if estimates else "no value pair measured"
    beyond = [e for e in estimates if e.interval.low > limit + _EPS]
    worst_beyond = worst_case is not None and worst_case.low > limit + _EPS
    if beyond or worst_beyond:
        strongest = max(beyond, key=lambda e: e.interval.low, default=None)
        if (
            worst_case is not None
            and worst_beyond
            and (strongest is None or worst_case.low >= strongest.interval.low - _EPS)
        ):
            return GateCall(
                FAIL,
                worst_case,
                f"worst single case {worst_case_where}: gap {worst_case.estimate:.1f}, "
                f"{worst_case.shown()} (all cases at once); {systematic}",
            )
        assert strongest is not None
        return GateCall(FAIL, strongest.interval, f"systematic {shown(strongest)}")
    if worst_case is not None and worst_case.high <= limit + _EPS:
        return GateCall(PASS, worst_case, systematic)
    if estimates and all(e.interval.high <= limit + _EPS for e in estimates):
        largest = max(estimates, key=lambda e: (e.interval.high, e.interval.estimate))
        return GateCall(PASS, largest.interval, systematic)
    undecided = [e for e in estimates if e.interval.high > limit + _EPS]
    if not undecided:
        return GateCall(
            INCONCLUSIVE, None, systematic, "nothing measured yet: select cases with variants"
        )
    return GateCall(
        INCONCLUSIVE,
        undecided[0].interval,
        f"systematic {shown(undecided[0])}",
        _needed(undecided[0], limit),
    )
