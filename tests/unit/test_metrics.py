"""The pure figures behind the summary: overall score, Wilson interval, agreement, movement."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.plugin_project import CASES, RUBRIC, make_case

from pytest_screeneval.evidence.metrics import (
    clustered_interval,
    criterion_agreement,
    crossings,
    effective_items,
    movements,
    self_consistency,
    slice_agreement,
    wilson_interval,
)
from pytest_screeneval.golden.model import Criterion, Rubric, Scale


def test_overall_score_is_the_weighted_place_on_the_scale() -> None:
    rubric = Rubric(
        "r",
        "1",
        Scale(1, 5),
        58.0,
        (Criterion("a", "", 6.0), Criterion("b", "", 4.0), Criterion("c", "", 15.0)),
    )
    assert rubric.overall({"a": 5, "b": 5, "c": 5}) == 100.0
    assert rubric.overall({"a": 1, "b": 1, "c": 1}) == 0.0
    # weights adding up to 25: one level on a criterion moves the score by its weight
    assert rubric.overall({"a": 4, "b": 5, "c": 5}) == 94.0
    assert rubric.overall({"a": 5, "b": 4, "c": 5}) == 96.0
    assert rubric.decision(58.0) == "advance" and rubric.decision(57.9) == "hold"


def test_wilson_interval_matches_the_textbook_values() -> None:
    # 8 of 10 at 95%: Wilson gives 0.490..0.943 (Newcombe 1998, method 3)
    low, high = wilson_interval(8, 10)
    assert math.isclose(low, 49.0, abs_tol=0.1) and math.isclose(high, 94.3, abs_tol=0.1)
    assert wilson_interval(0, 0) == (0.0, 100.0)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and math.isclose(high, 16.1, abs_tol=0.1)


@given(st.integers(0, 200), st.integers(1, 200))
def test_wilson_interval_holds_the_observed_share(successes: int, n: int) -> None:
    successes = min(successes, n)
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= 100 * successes / n <= high <= 100.0


def test_agreement_counts_contested_items_apart_and_sorts_worst_first() -> None:
    contested = make_case("al-001", ratings={"communication": {"x": 2, "y": 4, "z": 3}})
    plain = make_case("al-002")  # expected skills 3, experience 3, communication 4
    scores = {
        ("al-001", "skills"): 4,
        ("al-001", "experience"): 3,
        ("al-001", "communication"): 4,
        ("al-002", "skills"): 1,
        ("al-002", "experience"): 3,
        ("al-002", "communication"): 4,
    }
    ordered = criterion_agreement([contested, plain], RUBRIC, scores, 1.0)
    rows = {r.criterion: r for r in ordered}
    assert ordered[0].criterion == "skills"  # worst exact agreement first
    assert (rows["skills"].cases, rows["skills"].exact, rows["skills"].within) == (2, 1, 1)
    assert rows["skills"].mae == 1.0
    assert (rows["communication"].cases, rows["communication"].contested) == (1, 1)
    assert rows["communication"].contested_within_range == 1
    by_slice = {s.slice: s for s in slice_agreement([contested, plain], scores, 1.0)}
    assert (by_slice["alpha"].items, by_slice["alpha"].within) == (6, 5)


def test_movements_and_crossings_against_a_baseline() -> None:
    before = {
        ("c1", "skills"): 5,
        ("c1", "experience"): 5,
        ("c1", "communication"): 5,
        ("c2", "skills"): 3,
        ("c2", "experience"): 3,
        ("c2", "communication"): 3,
    }
    after = dict(before) | {("c1", "skills"): 3, ("c2", "experience"): 2}
    moved = movements(after, before)
    assert [(m.case_id, m.criterion, m.delta) for m in moved] == [
        ("c1", "skills", -2),
        ("c2", "experience", -1),
    ]
    flips = crossings(RUBRIC, after, before)  # advance at 50: c2 drops from 50.0 to 41.7
    assert [(c.case_id, c.before, c.after) for c in flips] == [("c2", "advance", "hold")]


def test_self_consistency_counts_items_whose_repeats_differ() -> None:
    result = self_consistency({("c1", "a"): [3, 3], ("c1", "b"): [3, 4], ("c2", "a"): [2, None]}, 2)
    assert (result.items, result.disagreeing) == (2, 1)
    assert result.examples == (("c1", "b", (3, 4)),)


# --------------------------------------------------------------------------------------------
# Intervals over items that share a case: the case is the unit of uncertainty
# --------------------------------------------------------------------------------------------


def wilson_by_roots(p: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """The Wilson bounds as the roots of (p - q)^2 = z^2 q (1 - q) / n, solved numerically
    (bisection): an independent route to the closed form the module uses."""

    def gap(q: float) -> float:
        return (p - q) ** 2 - z * z * q * (1 - q) / n

    def root(low: float, high: float) -> float:
        for _ in range(200):
            mid = (low + high) / 2
            if (gap(low) > 0) == (gap(mid) > 0):
                low = mid
            else:
                high = mid
        return (low + high) / 2

    lower = 0.0 if p == 0 else root(0.0, p)
    upper = 1.0 if p == 1 else root(p, 1.0)
    return 100 * lower, 100 * upper


def test_a_slice_of_seven_cases_all_missed_counts_seven_not_thirty_five() -> None:
    per_case = [(0, 5)] * 7
    assert effective_items(per_case) == 7
    low, high = clustered_interval(per_case)
    assert low == 0.0
    assert high == pytest.approx(35.43, abs=0.01)  # Wilson at 0 of 7 cases
    assert wilson_interval(0, 35)[1] == pytest.approx(9.89, abs=0.01)  # what items alone say


def test_clustered_interval_matches_an_independent_computation() -> None:
    per_case = [(5, 5), (5, 5), (0, 5), (5, 5), (0, 5), (4, 5), (3, 5)]
    hits = [float(h) for h, _ in per_case]
    items = [float(m) for _, m in per_case]
    n = sum(items)
    p = sum(hits) / n
    k = len(per_case)
    # the sandwich variance of a ratio estimator, its square expanded into three sums
    hh = sum(h * h for h in hits)
    hm = sum(h * m for h, m in zip(hits, items, strict=True))
    mm = sum(m * m for m in items)
    variance = k / (k - 1) * (hh - 2 * p * hm + p * p * mm) / n**2
    n_eff = p * (1 - p) / variance
    assert 7 < n_eff < 35
    assert effective_items(per_case) == pytest.approx(n_eff, rel=1e-9)
    expected = wilson_by_roots(p, n_eff)
    assert clustered_interval(per_case) == pytest.approx(expected, abs=1e-6)
    # three times wider than the items-as-independent interval would claim? at least wider
    naive = wilson_interval(int(sum(hits)), int(n))
    clustered = clustered_interval(per_case)
    assert clustered[1] - clustered[0] > 1.5 * (naive[1] - naive[0])


def test_items_spread_evenly_over_cases_keep_their_count() -> None:
    # every case 3 of 5: no case is more alike than chance says, so nothing is lost
    per_case = [(3, 5)] * 10
    assert effective_items(per_case) == 50
    assert clustered_interval(per_case) == pytest.approx(wilson_interval(30, 50), abs=1e-9)


def test_slice_agreement_interval_is_clustered_by_case() -> None:
    cases = [make_case(case_id) for case_id in CASES]  # seven cases, all in slice "synthetic"
    scores = {
        (case.id, criterion): 5 if expectation.score <= 2 else 1  # every item far off
        for case in cases
        for criterion, expectation in case.expected.items()
    }
    (row,) = [r for r in slice_agreement(cases, scores, 0.0) if r.slice == "synthetic"]
    assert (row.cases, row.items, row.within) == (7, 21, 0)
    assert row.ci_high == pytest.approx(wilson_interval(0, 7)[1])
