"""A life stage said of the work's people through a participle ("members approaching
retirement") is about them, not the candidate; said of the candidate it still flags."""

import pytest

from pytest_screeneval.evidence.rationale.protected import find_protected


@pytest.mark.parametrize(
    "text",
    [
        "Member service: used to explaining the options to members approaching retirement.",
        "Advice: coached clients nearing retirement on drawdown.",
        "Planning: ran workshops for staff-scheme pensioners reaching retirement age.",
    ],
)
def test_group_approaching_a_life_stage_does_not_flag(text: str) -> None:
    assert find_protected(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "She is approaching retirement, so may not stay long.",
        "Nearing retirement, he may want fewer hours.",
    ],
)
def test_candidate_approaching_a_life_stage_still_flags(text: str) -> None:
    assert [m.category for m in find_protected(text)] == ["age"]
