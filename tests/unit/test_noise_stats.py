"""The robust statistics behind confirmation and the fairness gates, against reference values
computed independently here (enumeration by subset sums, hand counts), and their error rates
on seeded jumpy noise."""

from __future__ import annotations

import math
import random
from collections import Counter
from statistics import fmean

import pytest

from pytest_screeneval.evidence.bootstrap import MIN_CASES, bootstrap_pairs, center
from pytest_screeneval.evidence.intervals import two_sided_quantile
from pytest_screeneval.evidence.permutation import shift_permutation_p, smallest_p


def _exact_p_by_subset_sums(high: list[int], low: list[int], limit: int) -> float:
    """Reference: count the splits by the sum of the first group (integer data, exact DP)."""
    pooled = [x - limit for x in high] + low
    n = len(high)
    # ways[k][s]: subsets of size k with sum s
    ways: list[Counter[int]] = [Counter() for _ in range(n + 1)]
    ways[0][0] = 1
    for value in pooled:
        for k in range(n, 0, -1):
            for s, count in list(ways[k - 1].items()):
                ways[k][s + value] += count
    observed = sum(x - limit for x in high)
    at_least = sum(count for s, count in ways[n].items() if s >= observed)
    return at_least / math.comb(len(pooled), n)


def test_permutation_p_by_hand() -> None:
    # only the observed split reaches mean(A) − mean(B) = 7 among the C(6, 3) = 20 splits
    assert shift_permutation_p([10, 10, 10], [0, 0, 0], 3.0) == pytest.approx(1 / 20)
    assert smallest_p(3, 3) == pytest.approx(1 / 20)
    # pooled 5, 3, 0, 1: the six splits give 3.5, 0.5, 1.5, −1.5, −0.5, −3.5
    assert shift_permutation_p([5, 3], [0, 1], 0.0) == pytest.approx(1 / 6)
    # a gap at the limit is no evidence at all: every split ties or beats it half the time
    assert shift_permutation_p([3, 3, 3], [0, 0, 0], 3.0) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_permutation_p_matches_the_subset_sum_count(seed: int) -> None:
    rng = random.Random(seed)
    high = [rng.choice((50, 50, 50, 75, 25)) + 6 for _ in range(5)]
    low = [rng.choice((50, 50, 50, 75, 25)) for _ in range(4)]
    assert shift_permutation_p(high, low, 3.0) == pytest.approx(
        _exact_p_by_subset_sums(high, low, 3)
    )


def test_the_monte_carlo_p_is_seeded_and_close_to_the_exact_count() -> None:
    rng = random.Random(7)
    high = [rng.choice((50, 50, 50, 50, 75, 25)) + 8 for _ in range(10)]
    low = [rng.choice((50, 50, 50, 50, 75, 25)) for _ in range(10)]  # C(20, 10) = 184,756 splits
    exact = _exact_p_by_subset_sums(high, low, 3)
    first = shift_permutation_p(high, low, 3.0)
    assert first == shift_permutation_p(high, low, 3.0)
    assert abs(first - exact) < 0.01


def test_center_is_the_median() -> None:
    assert center([50.0, 75.0, 50.0]) == 50.0
    assert center([50.0, 75.0]) == 62.5
    with pytest.raises(ValueError):
        center([])


def test_bootstrap_without_spread_is_exact() -> None:
    per_case = {f"c{i}": {"A": [54.0], "B": [50.0]} for i in range(20)}
    [pair] = bootstrap_pairs(per_case, seed="name")
    assert (pair.high, pair.low, pair.cases) == ("A", "B", 20)
    assert (pair.interval.estimate, pair.interval.low, pair.interval.high) == (4.0, 4.0, 4.0)


def test_few_cases_fall_back_to_bonferroni_t_on_the_case_spread() -> None:
    diffs = [4.0, 0.0, 2.0, 6.0]
    per_case = {f"c{i}": {"A": [50.0 + d], "B": [50.0]} for i, d in enumerate(diffs)}
    assert len(per_case) < MIN_CASES
    [pair] = bootstrap_pairs(per_case, seed="x")
    mean = fmean(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 3)
    half = two_sided_quantile(0.95, 3, 1) * sd / 2
    assert pair.interval.low == pytest.approx(mean - half)
    assert pair.interval.high == pytest.approx(mean + half)


def test_bootstrap_quantile_is_at_most_bonferroni_and_at_least_one_pair() -> None:
    """The max-T quantile over 28 correlated pairs lies between the single-pair normal
    quantile and the Bonferroni one (a reference from the normal law, not from the code)."""
    rng = random.Random(5)
    per_case = {f"c{i}": {v: [60.0 + rng.gauss(0, 5)] for v in "ABCDEFGH"} for i in range(60)}
    pairs = bootstrap_pairs(per_case, seed="name", draws=1000)
    assert len(pairs) == math.comb(8, 2)
    ratios = []
    for p in pairs:
        sd_diffs = [per_case[c][p.high][0] - per_case[c][p.low][0] for c in sorted(per_case)]
        mean = fmean(sd_diffs)
        se = math.sqrt(sum((d - mean) ** 2 for d in sd_diffs) / 59) / math.sqrt(60)
        ratios.append(p.interval.half_width / se)
    q = fmean(ratios)
    assert all(r == pytest.approx(q) for r in ratios)
    assert 1.96 < q < two_sided_quantile(0.95, None, 28)
