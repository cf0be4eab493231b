"""The pure figures behind the summary: overall score, Wilson interval, agreement, movement."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from plugin_project import RUBRIC, make_case

from pytest_screeneval.evidence.metrics import (
    criterion_agreement,
    crossings,
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
