"""Credentials the resume gives as in progress (evidence/rationale/pending.py)."""

from __future__ import annotations

import pytest

from pytest_screeneval.evidence.rationale.flags import UNGROUNDED, rationale_flags
from pytest_screeneval.evidence.rationale.pending import pending_names

_RESUME = (
    "Estates Officer, Larchmoor Housing, Derby (2016-Present)\n"
    "- Runs planned works for 3,000 homes.\n"
    "QUALIFICATIONS\n"
    "- RICS Level 4 Certificate in Building Surveying\n"
    "- Working towards the Chartered Association of Building Engineers (CABE) Diploma\n"
    "- NEBOSH General Certificate (in progress)\n"
)


def test_the_names_only_in_progress_lines_give_are_pending() -> None:
    names = pending_names(_RESUME)
    assert {"cabe", "chartered", "association", "nebosh"} <= names
    assert "rics" not in names and "level" not in names and "working" not in names


@pytest.mark.parametrize(
    ("rationale", "grounded"),
    [
        ("Qualifications: RICS Level 4, and working towards the CABE Diploma.", True),
        ("Qualifications: studying for NEBOSH alongside the RICS certificate.", True),
        ("Qualifications: NEBOSH is nearly done; RICS Level 4 held.", True),
        ("Qualifications: no NEBOSH yet, but RICS Level 4 is relevant.", True),
        ("Qualifications: holds the NEBOSH General Certificate and RICS Level 4.", False),
        ("Qualifications: CABE-qualified, with the RICS Level 4 too.", False),
        ("Qualifications: a Chartered building engineer with RICS Level 4.", False),
    ],
)
def test_a_pending_credential_said_as_held_is_a_claim(rationale: str, grounded: bool) -> None:
    flags = rationale_flags(_RESUME, "qualifications", 4, rationale)
    assert (UNGROUNDED not in flags) is grounded, flags
