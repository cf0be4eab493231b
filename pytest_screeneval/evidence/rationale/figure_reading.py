"""How a figure of a rationale reads against the resume's figures, beyond its value and unit.

- A describing word before a people noun ("fourteen reception staff", "nine nursing staff")
  names the staff the resume counts under a word of the same root ("14 receptionists", "9 dental
  nurses"); the same word of a line that counts no people ("design" of "design review rework")
  does not.
- A figure the resume gives only as a percentage ("cut rework from 28% to 9%") grounds no count
  of things ("9 design engineers").
- "point" right after a number may name a thing counted ("forty point machines"), not a change
  in points ("up 9 points").

Pure: text in, answers out; the resume's percentages are read once per resume text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_screeneval.evidence.rationale.quantities import quantities

__all__ = ["POINT_NOUN", "STAFF_FORM", "percent_only", "same_root"]

# a people noun after a describing word: "reception staff", "library team", "nursing staff"
STAFF_FORM = re.compile(
    r"\s+([a-z][a-z-]{3,})\s+(?:staff|team|teams|workers|employees|personnel)\b", re.IGNORECASE
)
_ROOT = 4  # letters two words must share to be one root ("reception", "receptionist")
_PERSON_ENDING = ("ist", "er", "or", "ian", "ant", "ent", "se")

# "point" naming a thing ("point machines", "point duty"), not a change in points ("a 9 point
# rise")
POINT_NOUN = re.compile(
    r"[-\s]+point\s+(?!(?:increase|rise|drop|fall|gain|improvement|jump|swing|lift|cut|reduction"
    r"|change|lead|margin|difference|shift)\b)[a-z]",
    re.IGNORECASE,
)
_PERCENT_AFTER = re.compile(r"\s*(?:%|per\s*cent\b|percent\b)", re.IGNORECASE)


def same_root(said: str, resume_word: str) -> bool:
    """Whether a describing word and a resume's word for people share a root ("nursing",
    "nurse"; "reception", "receptionist"); the same word ("design" of "design review") is no
    people noun."""
    said = said.lower()
    return (
        len(resume_word) >= _ROOT
        and said[:_ROOT] == resume_word[:_ROOT]
        and said != resume_word
        and resume_word.endswith(_PERSON_ENDING)
    )


@lru_cache(maxsize=512)
def percent_only(resume: str) -> frozenset[float]:
    """The figures a resume gives only as percentages ("cut rework from 28% to 9%")."""
    shares: set[float] = set()
    counts: set[float] = set()
    for quantity in quantities(resume):
        (shares if _PERCENT_AFTER.match(resume, quantity.end) else counts).add(quantity.value)
    return frozenset(shares - counts)
