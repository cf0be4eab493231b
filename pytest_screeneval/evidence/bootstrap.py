"""Simultaneous intervals for paired differences across cases, by a seeded case bootstrap.

Pure module, standard library only. The fairness gates ask, for every pair of an attribute's
values (a, b), how large the systematic difference D_ab = mean over cases of (cₐ,ᵢ − c_b,ᵢ) is,
where c is a text's **center**: the median of its answers (the mean of two, the answer itself
when there is one). The median shrugs off a jump (a call one level off on every criterion) that
a mean of three answers would carry a third of.

The interval needs no law for the noise: the cases are resampled with replacement (``draws``
times, from a generator seeded by the gate's name, so a run is reproducible), each replicate's
pair differences scaled by their standard error, and the ``confidence`` quantile q of the
largest scaled deviation over all pairs (max-T) makes every pair's interval d̄ ± q·SE hold at
once:

    Tᵇ = max over pairs |d̄ᵇ − d̄| / SE,   q = quantile(Tᵇ, confidence),   d̄ ± q · SE

(SE = sd(dᵢ)/√n of the observed cases). The max over pairs accounts for their correlation
(pairs share values), so it is narrower than Bonferroni; the bootstrap takes the tails of a
jumpy dᵢ (most cases 0, a few ±25) from the data, not from a normal law. Each replicate keeps
the observed SE rather than its own: with jumps on a few cases only, a replicate that misses
them all has an SE of 0, and a studentized replicate would be infinite. With fewer than
``MIN_CASES`` cases a bootstrap says little about
its own tails, so q is then Student's t quantile, Bonferroni-corrected over the pairs.
Resampling cases treats the spread of gaps between cases as uncertainty too: the intervals are
about the scorer on cases like these, so they are conservative about these cases themselves.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, median

from pytest_screeneval.evidence.intervals import Interval, two_sided_quantile

__all__ = ["MIN_CASES", "BootstrapPair", "bootstrap_pairs", "center"]

MIN_CASES = 10
DRAWS = 1000


def center(answers: Sequence[float]) -> float:
    """A text's center: the median of its answers."""
    if not answers:
        raise ValueError("a center needs at least one answer")
    return float(median(answers))


@dataclass(frozen=True)
class BootstrapPair:
    """One pair's systematic difference, oriented so the estimate is ≥ 0."""

    high: str
    low: str
    cases: int
    interval: Interval
    answers: float  # mean answers per text of the pair


def _sd(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = fmean(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def bootstrap_pairs(
    per_case: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    seed: str,
    confidence: float = 0.95,
    draws: int = DRAWS,
) -> list[BootstrapPair]:
    """Every value pair's difference of centers with simultaneous intervals, largest first.

    ``per_case``: case → value → that variant's answers (overall points).
    """
    centers = {
        case: {v: center(xs) for v, xs in by_value.items() if xs}
        for case, by_value in sorted(per_case.items())
    }
    counts = {
        case: {v: len(xs) for v, xs in by_value.items() if xs}
        for case, by_value in per_case.items()
    }
    values = sorted({v for by_value in centers.values() for v in by_value})
    cases = [c for c in centers if len(centers[c]) >= 2]
    pairs: list[tuple[str, str, list[int], list[float]]] = []
    for a, b in itertools.combinations(values, 2):
        index = [i for i, c in enumerate(cases) if a in centers[c] and b in centers[c]]
        if index:
            diffs = [centers[cases[i]][a] - centers[cases[i]][b] for i in index]
            pairs.append((a, b, index, diffs))
    if not pairs:
        return []
    stats = [(fmean(d), _sd(d) / math.sqrt(len(d))) for _a, _b, _i, d in pairs]
    q = _quantile(cases, pairs, stats, seed, confidence, draws)
    found: list[BootstrapPair] = []
    for (a, b, index, _diffs), (mean, se) in zip(pairs, stats, strict=True):
        high, low = (a, b) if mean >= 0 else (b, a)
        size = abs(mean)
        half = q * se
        answers = fmean(counts[cases[i]][v] for i in index for v in (a, b))
        found.append(
            BootstrapPair(
                high, low, len(index), Interval(size, size - half, size + half, confidence), answers
            )
        )
    found.sort(key=lambda p: (-p.interval.estimate, p.high, p.low))
    return found


def _quantile(
    cases: Sequence[str],
    pairs: Sequence[tuple[str, str, list[int], list[float]]],
    stats: Sequence[tuple[float, float]],
    seed: str,
    confidence: float,
    draws: int,
) -> float:
    smallest = min(len(d) for _a, _b, _i, d in pairs)
    if smallest < MIN_CASES:
        df = max(1, smallest - 1)
        return two_sided_quantile(confidence, df, len(pairs))
    if all(se <= 0 for _m, se in stats):
        return 0.0
    rng = random.Random(f"bootstrap:{seed}")
    n = len(cases)
    maxima: list[float] = []
    for _ in range(draws):
        weights = [0] * n
        for i in rng.choices(range(n), k=n):
            weights[i] += 1
        largest = 0.0
        for (_a, _b, index, diffs), (mean, se) in zip(pairs, stats, strict=True):
            if se <= 0:
                continue
            w = [weights[i] for i in index]
            total = sum(w)
            if not total:
                continue
            m = sum(wi * d for wi, d in zip(w, diffs, strict=True)) / total
            largest = max(largest, abs(m - mean) / se)
        maxima.append(largest)
    maxima.sort()
    rank = min(len(maxima) - 1, math.ceil(confidence * (len(maxima) + 1)) - 1)
    return maxima[rank]
