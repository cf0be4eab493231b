"""Counts of a resume's own lists said in words ("four qualifications" for a QUALIFICATIONS
heading with four lines under it, "three certifications").

A heading is a line in capitals; its list is the bullet lines (or plain lines) under it up to the
next heading. A count said just before a noun naming the heading ("four qualifications", "three
site qualifications") is grounded when that list has that many lines. Pure; cached per resume.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["counts_a_list"]

_HEADING = re.compile(r"^[A-Z][A-Z &/,'-]{3,}$")
# the noun after the count, at most two words later: "four (teaching) qualifications"
_NOUN_AFTER = re.compile(r"(?:\s+[a-z]+\b){1,3}")


@lru_cache(maxsize=256)
def _list_sizes(input_text: str) -> dict[str, int]:
    """Heading word (lower case, without a plural s) -> how many lines its list has."""
    sizes: dict[str, int] = {}
    heading: list[str] = []
    for raw in input_text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _HEADING.match(line):
            heading = [_stem(word) for word in re.findall(r"[a-z]+", line.lower())]
            for word in heading:
                sizes[word] = 0
            continue
        for word in heading:
            sizes[word] += 1
    return sizes


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def counts_a_list(input_text: str, value: float, text: str, end: int) -> bool:
    """Whether the count ``value`` ending at ``text[end]`` counts a list of the resume."""
    match = _NOUN_AFTER.match(text, end)
    if match is None or not float(value).is_integer():
        return False
    sizes = _list_sizes(input_text)
    return any(sizes.get(_stem(word)) == int(value) for word in match.group(0).split())
