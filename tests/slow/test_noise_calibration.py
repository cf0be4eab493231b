"""The error rates of the robust statistics behind confirmation and the fairness gates, on
seeded jumpy noise: thousands of trials each (their exact values are tests/unit/
test_noise_stats.py)."""

from __future__ import annotations

import random

from pytest_screeneval.evidence.bootstrap import bootstrap_pairs
from pytest_screeneval.evidence.permutation import shift_permutation_p


def test_a_jumpy_unbiased_pair_is_rejected_at_most_at_the_level() -> None:
    """Same text twice, 10% of answers one level off on every criterion (±25 points): the test
    at 5% rejects "more than 3 points apart" in at most 5% of 2,000 seeded trials."""
    rng = random.Random(2026)

    def answer() -> float:
        return 60.0 + (rng.choice((-25.0, 25.0)) if rng.random() < 0.1 else 0.0)

    rejected = sum(
        shift_permutation_p([answer() for _ in range(6)], [answer() for _ in range(6)], 3.0) <= 0.05
        for _ in range(2000)
    )
    assert rejected / 2000 <= 0.05


def test_bootstrap_intervals_cover_every_pair_at_once_on_jumpy_noise() -> None:
    """30 cases, 3 values with no true gap, each answer jumping ±25 with probability 0.1: the
    simultaneous 95% intervals all contain 0 in at least 90% of 200 seeded runs, and the run is
    the same every time (seeded by the gate's name)."""
    rng = random.Random(11)

    def answer() -> float:
        return 60.0 + (rng.choice((-25.0, 25.0)) if rng.random() < 0.1 else 0.0)

    covered = 0
    for trial in range(200):
        per_case = {f"c{i}": {v: [answer()] for v in "ABC"} for i in range(30)}
        pairs = bootstrap_pairs(per_case, seed=f"trial{trial}", draws=400)
        covered += all(p.interval.low <= 1e-9 for p in pairs)
        if trial == 0:
            assert pairs == bootstrap_pairs(per_case, seed="trial0", draws=400)
    assert covered >= 180
