"""How far the human raters agree: Krippendorff's alpha, and the rater summary for a golden set.

Where recruiters disagree, the model should not be confident either (contested items);
the golden set's ratings are only evidence if the raters agree well enough, and the audit report
says how well. Alpha is computed with the coincidence-matrix method of Krippendorff (2011),
"Computing Krippendorff's Alpha-Reliability" (https://repository.upenn.edu/asc_papers/43):
any number of raters, missing ratings allowed, nominal, ordinal or interval metric.

Pure module: no pytest, no third-party code.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

__all__ = [
    "Level",
    "RaterAgreement",
    "ReliabilityData",
    "krippendorff_alpha",
    "rater_agreement",
]

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval")

Unit = Mapping[str, float | None] | Sequence[float | None]
# Units in any order: a sequence of units, or unit id → unit. A unit is rater → value (a missing
# rater is simply absent, or None) or a sequence of values with None (or NaN) where missing.
ReliabilityData = Iterable[Unit] | Mapping[str, Unit]


def _pairable_units(data: ReliabilityData) -> list[list[float]]:
    """Each unit's values, missing ones dropped; only units with two or more values pair up."""
    units = data.values() if isinstance(data, Mapping) else data
    result: list[list[float]] = []
    for unit in units:
        raw = unit.values() if isinstance(unit, Mapping) else unit
        values = [float(v) for v in raw if v is not None and not math.isnan(v)]
        if len(values) >= 2:
            result.append(values)
    return result


def _coincidences(units: list[list[float]]) -> dict[tuple[float, float], float]:
    """o_ck: every ordered pair of values from different raters in a unit, each unit weighted
    by 1 / (m_u - 1) so a unit contributes exactly its m_u pairable values."""
    matrix: dict[tuple[float, float], float] = defaultdict(float)
    for values in units:
        weight = 1.0 / (len(values) - 1)
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k
                if pairs:
                    matrix[(c, k)] += pairs * weight
    return matrix


def _ordinal_delta(marginals: Mapping[float, float]) -> dict[tuple[float, float], float]:
    """Krippendorff's ordinal δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k) / 2)²: the distance is
    how many pairable values lie between c and k, not how far apart the numbers are."""
    ranked = sorted(marginals)
    cumulative = list(accumulate(marginals[v] for v in ranked))
    delta: dict[tuple[float, float], float] = {}
    for i, c in enumerate(ranked):
        for j in range(i, len(ranked)):
            k = ranked[j]
            between = cumulative[j] - (cumulative[i - 1] if i else 0.0)
            delta[(c, k)] = delta[(k, c)] = (between - (marginals[c] + marginals[k]) / 2) ** 2
    return delta


def krippendorff_alpha(data: ReliabilityData, level: Level) -> float | None:
    """Krippendorff's alpha for reliability data (units × raters, missing values allowed).

    ``None`` when alpha is undefined: fewer than two pairable values (no unit rated twice), or
    no variation at all among them (expected disagreement 0, alpha would be 0/0).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    matrix = _coincidences(_pairable_units(data))
    marginals: dict[float, float] = defaultdict(float)
    for (c, _k), count in matrix.items():
        marginals[c] += count
    n = sum(marginals.values())
    if n < 2:
        return None
    if level == "nominal":

        def delta(c: float, k: float) -> float:
            return 0.0 if c == k else 1.0

    elif level == "interval":

        def delta(c: float, k: float) -> float:
            return (c - k) ** 2

    else:
        table = _ordinal_delta(marginals)

        def delta(c: float, k: float) -> float:
            return table[(c, k)]

    observed = sum(count * delta(c, k) for (c, k), count in matrix.items())
    expected = sum(
        n_c * n_k * delta(c, k) for c, n_c in marginals.items() for k, n_k in marginals.items()
    )
    if expected == 0:
        return None
    # α = 1 − D_o / D_e with D_o = observed / n and D_e = expected / (n (n − 1)).
    return 1.0 - (n - 1) * observed / expected


@dataclass(frozen=True)
class RaterAgreement:
    """How far the raters of a golden set agree.

    ``n_units``: units rated by two or more raters (the ones alpha rests on); ``n_pairable``:
    the ratings in those units; ``exact_pairwise_share``: of all pairs of raters rating the
    same unit, the share that gave the same score (None without any pair).
    """

    alpha_ordinal: float | None
    alpha_interval: float | None
    n_units: int
    n_pairable: int
    exact_pairwise_share: float | None


def rater_agreement(ratings_by_case: Mapping[str, Mapping[str, int]]) -> RaterAgreement:
    """Alpha (ordinal and interval) and the exact pairwise agreement of case → rater → score.

    A unit is whatever the caller keys it by: a case for one criterion, or (case, criterion)
    joined into one key when all criteria are pooled.
    """
    units = _pairable_units(ratings_by_case)
    same = total = 0
    for values in units:
        counts = Counter(values)
        same += sum(c * (c - 1) // 2 for c in counts.values())
        total += len(values) * (len(values) - 1) // 2
    return RaterAgreement(
        alpha_ordinal=krippendorff_alpha(ratings_by_case, "ordinal"),
        alpha_interval=krippendorff_alpha(ratings_by_case, "interval"),
        n_units=len(units),
        n_pairable=sum(len(values) for values in units),
        exact_pairwise_share=same / total if total else None,
    )
