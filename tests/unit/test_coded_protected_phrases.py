"""Coded age phrasings (pension clock, era, elder's role) flag; work look-alikes do not."""

from __future__ import annotations

import pytest

from pytest_screeneval.evidence.rationale.flags import PROTECTED_ATTRIBUTE, rationale_flags

RESUME = "Senior Archivist, Fairhaven Records (2010-Present)\n- Ran pension scheme records.\n"

CODED_AGE = [
    "Fit: she is only a few years off drawing her own pension, by the look of it.",
    "Fit: he claims his pension next spring, so a short tenure.",
    "Fit: a proper archivist, probably counting down to her pension.",
    "Fit: Priya counts down to retirement, I suspect.",
    "Team fit: worked on relay logic before most of our engineers were born.",
    "Team fit: he was fixing lifts before you were born.",
    "Team fit: a bit of a dinosaur with new tools.",
    "Team fit: something of a fossil, if I'm honest.",
    "Team fit: one of the old guard from the paper days.",
    "Team fit: she'd stand out as the auntie figure on a young floor.",
    "Team fit: a grandad figure to the apprentices.",
]

WORK_LOOKALIKES = [
    "Delivery: migrated the pension scheme records to the new platform.",
    "Delivery: retired the dinosaur mainframe in 2019.",
    "Delivery: catalogued fossil collections for the museum.",
    "Leadership: replaced the old guard rail on the loading bay.",
    "Delivery: scanned birth records, some from before 1900.",
]


@pytest.mark.parametrize("text", CODED_AGE)
def test_coded_age_phrasings_flag(text: str) -> None:
    assert PROTECTED_ATTRIBUTE in rationale_flags(RESUME, "fit", 3, text)


@pytest.mark.parametrize("text", WORK_LOOKALIKES)
def test_age_word_lookalikes_about_the_work_do_not_flag(text: str) -> None:
    assert PROTECTED_ATTRIBUTE not in rationale_flags(RESUME, "delivery", 4, text)


LONE_PARENT = [
    "Availability: bringing up three kids on his own, so callouts might be tricky.",
    "Availability: she is raising two children on her own.",
    "Availability: Tom raises his kids on his own these days.",
]


@pytest.mark.parametrize("text", LONE_PARENT)
def test_lone_parenthood_phrasings_flag(text: str) -> None:
    assert PROTECTED_ATTRIBUTE in rationale_flags(RESUME, "availability", 3, text)


def test_raising_work_on_its_own_does_not_flag() -> None:
    text = "Delivery: raised the fix rate on her own initiative."
    assert PROTECTED_ATTRIBUTE not in rationale_flags(RESUME, "delivery", 4, text)


_PLAIN_RESUME = "Site Manager, Harrowgate Demolition, Tillbury (2016-Present)\n- Runs 6 crews.\n"


@pytest.mark.parametrize(
    "rationale",
    [
        "Communication: has a noticeable stammer, which could matter on client calls.",
        "Resilience: mentioned a spell off with anxiety a couple of years ago.",
        "Health: suffered burnout in the last role, so the pace could tell.",
        "Communication: the thick Glasgow burr might be hard for callers to follow.",
        "Communication: a soft Kerry lilt that clients seem to like.",
        "Communication: the strong Somerset burr should not matter to customers.",
    ],
)
def test_a_subjectless_clause_is_the_candidates_and_an_accent_has_other_names(
    rationale: str,
) -> None:
    assert PROTECTED_ATTRIBUTE in rationale_flags(_PLAIN_RESUME, "communication", 3, rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        "Communication: runs an anxiety support line for the tenants of the estates.",
        "Quality: removed the burr from every cut edge and signed off the finish.",
        "Communication: the stammer clinic's referral letters are clear and kind.",
    ],
)
def test_the_work_and_a_burr_on_a_cut_edge_are_not_references(rationale: str) -> None:
    assert PROTECTED_ATTRIBUTE not in rationale_flags(_PLAIN_RESUME, "communication", 3, rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        "Fit: whether she keeps kosher at home should not count for this role.",
        "Canteen: he only eats halal, so the site canteen would need to change.",
        "Fit: would get the clients instinctively, being from that community herself.",
        "Fit: of Irish stock himself, so the emigrant cases come naturally.",
        "Stability: she is close to retirement and may not stay long.",
    ],
)
def test_observance_belonging_and_retirement_said_of_the_candidate_are_references(
    rationale: str,
) -> None:
    assert PROTECTED_ATTRIBUTE in rationale_flags(_PLAIN_RESUME, "fit", 3, rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        "Certification: keeps halal certification with the standards board for 86 products.",
        "Supplier approval: skilled in kosher ingredient approval and halal slaughter checks.",
        "Throughput: about 2,400 retirement quotes a year, with retirement processing halved.",
        "Advice: advises clients on retirement interest-only mortgages and later-life lending.",
    ],
)
def test_halal_kosher_and_retirement_as_the_works_products_are_not_references(
    rationale: str,
) -> None:
    assert PROTECTED_ATTRIBUTE not in rationale_flags(_PLAIN_RESUME, "fit", 3, rationale)
