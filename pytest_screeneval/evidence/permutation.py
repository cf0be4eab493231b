"""A permutation test of "one text scores more than ``limit`` above another", for jumpy noise.

Pure module, standard library only. A scorer's noise is not normal: a call can come back one
level off on every criterion at once, a jump of 20 points or more in one answer. A t interval
built on a pooled standard deviation then puts a single jump at many "standard errors" and
confirms it. A permutation test needs no law for the noise at all.

The null hypothesis is that the high text's answers are the low text's answers moved up by at
most ``limit`` (a shift model: the two texts' noise has the same shape). Under the boundary of
that null, ``high − limit`` and ``low`` are exchangeable, so every way of splitting the pooled
values into groups of the two sizes is equally likely, and the p-value of the observed
difference of means is the share of splits whose difference is at least as large:

    p = #{splits with mean(A) − mean(B) ≥ observed} / #splits      (exact, when few)
    p = (1 + #{random splits ≥ observed}) / (1 + B)                   (seeded Monte Carlo)

Any true gap below the limit only makes large differences rarer, so the test is valid (if
conservative) there too. Exact enumeration for up to ``EXACT_LIMIT`` splits; above that, ``B``
random splits from a generator seeded by the data, so the same answers give the same p-value.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

__all__ = ["EXACT_LIMIT", "shift_permutation_p", "smallest_p"]

EXACT_LIMIT = 20_000
_EPS = 1e-9


def smallest_p(n_high: int, n_low: int) -> float:
    """The smallest p-value the exact test can give with these group sizes."""
    return 1.0 / math.comb(n_high + n_low, n_high)


def shift_permutation_p(
    high: Sequence[float], low: Sequence[float], limit: float, *, draws: int = 20_000
) -> float:
    """One-sided p-value of mean(high) − mean(low) > ``limit`` (module docstring)."""
    if not high or not low:
        raise ValueError("a permutation test needs at least one value on each side")
    shifted = [x - limit for x in high]
    pooled = shifted + list(low)
    n, total = len(shifted), sum(pooled)
    size = len(pooled)

    def difference(group_sum: float) -> float:
        return group_sum / n - (total - group_sum) / (size - n)

    observed = difference(sum(shifted))
    splits = math.comb(size, n)
    if splits <= EXACT_LIMIT:
        at_least = sum(
            1
            for chosen in itertools.combinations(pooled, n)
            if difference(sum(chosen)) >= observed - _EPS
        )
        return at_least / splits
    rng = random.Random(repr((sorted(shifted), sorted(low), limit)))
    at_least = 0
    for _ in range(draws):
        at_least += difference(sum(rng.sample(pooled, n))) >= observed - _EPS
    return (1 + at_least) / (1 + draws)
