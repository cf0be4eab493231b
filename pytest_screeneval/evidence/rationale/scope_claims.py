"""Claims of scope in plain words: "every one of his fit-outs came in on time", "all of her
trainees passed", "the whole offshore portfolio", "every concert hall in the county".

Such a claim says more than any figure: the resume must say it too, with a word of the same
reach ("all", "every", "each", "whole", "entire") before a word of what it is said of, on one
line. "The whole team" or "every week" claim no scope: only a scope noun after "whole" or
"entire", and "every ... in the county" (a region), count; so do "every one of" and "all of
her".

Not claims: a negated or hypothetical clause, a quote, a protected reference.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_screeneval.evidence.rationale.claim_context import Context
from pytest_screeneval.evidence.rationale.resume_facts import unit_stem

__all__ = ["unsupported_scope"]

_MAYBE = re.compile(r"\b(?:every|all|whole|entire)\b", re.IGNORECASE)
_PHRASE = r"((?:(?!(?:in|at|for|on|of|and|with|to)\b)[\w'-]+\s+){0,2}?[\w'-]+)"
_SCOPE_NOUNS = (
    r"(?:portfolio|area|region|estate|fleet|network|county|country|group|business|company"
    r"|organi[sz]ation|tour|catalogue|range|programme|program|site|sites|trust|district"
    r"|division|department|patch|circuit|territory|market)"
)
_SCOPE = re.compile(
    rf"\bevery\s+one\s+of\s+(?:her|his|their|the)\s+{_PHRASE}"
    rf"|\ball\s+of\s+(?:her|his|their)\s+{_PHRASE}"
    rf"|\b(?:the|her|his|their)\s+(?:whole|entire)\s+((?:[\w'-]+\s+){{0,2}}?{_SCOPE_NOUNS})\b"
    rf"|\bevery\s+{_PHRASE}\s+in\s+the\s+(?:county|country|region|city|area|district|uk|trust)\b",
    re.IGNORECASE,
)
_UNIVERSAL_IN_RESUME = re.compile(
    r"\b(?:all|every|each|whole|entire)\s+((?:[\w'-]+\s+){0,3}[\w'-]+)", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z][\w'-]{2,}")
# words of the rubric or of the rationale itself, not of the work: "every one of the criteria"
_GENERIC_WORDS = (
    "the her his their one own criteria criterion requirements boxes points skills areas aspects"
    " parts things ways"
)
_GENERIC = frozenset(unit_stem(word) for word in _GENERIC_WORDS.split())


@lru_cache(maxsize=512)
def _universal_words(resume: str) -> frozenset[str]:
    """The words a resume says "all", "every", "each", "whole" or "entire" of."""
    return frozenset(
        unit_stem(word)
        for match in _UNIVERSAL_IN_RESUME.finditer(resume)
        for word in _WORD.findall(match.group(1))
    )


def unsupported_scope(context: Context) -> list[str]:
    """One problem for each claim of scope the resume does not make."""
    text = context.text
    if not _MAYBE.search(text):
        return []
    problems: list[str] = []
    for match in _SCOPE.finditer(text):
        start, end = match.span()
        if not context.said_plainly(start, end):
            continue
        said = next(group for group in match.groups() if group is not None)
        words = {unit_stem(w) for w in _WORD.findall(said)} - _GENERIC
        if not words or words & _universal_words(context.facts.text):
            continue
        problems.append(f"a scope the resume does not claim: {match.group(0).strip()!r}")
    return problems
