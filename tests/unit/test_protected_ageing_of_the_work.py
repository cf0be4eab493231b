"""'Ageing' said of the work's things or of a body of its people, through a list of describing
words, is not the candidate's age; said of the candidate or of a person it still flags."""

import pytest

from pytest_screeneval.evidence.rationale.protected import find_protected


@pytest.mark.parametrize(
    "text",
    [
        "Planning: comfortable with ageing, asbestos-riddled buildings from the sixties.",
        "Estates: kept ageing, leaking boilers running for a decade.",
        "Scale: an ageing membership, with 6,500 deferred members.",
        "Growth: revived an ageing client base at the branch.",
    ],
)
def test_ageing_of_the_work_does_not_flag(text: str) -> None:
    assert find_protected(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "She is an ageing, tired engineer.",
        "He is ageing, and slow on the tools.",
        "Supervised ageing lorry drivers.",
    ],
)
def test_ageing_of_a_person_still_flags(text: str) -> None:
    assert [m.category for m in find_protected(text)] == ["age"]
