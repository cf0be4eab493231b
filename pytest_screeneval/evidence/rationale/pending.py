"""Credentials the resume gives as not yet held: a line that says "Working towards the CIOB
Level 5 Diploma" or "CertAVP, small animal surgery (in progress)".

A rationale that names such a credential with a hedge of its own ("working towards the CIOB
diploma", "studying for the CertAVP") says what the resume says. One that names it plainly ("holds
the CertAVP", "CIOB-qualified", "a Chartered Arboriculturist") claims a credential the resume does
not give. The credential is told by the capitalised words and short forms that only the resume's
in-progress lines hold, so a body that a held credential names too ("CIH Level 4") is left alone.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_screeneval.evidence.rationale.claim_context import Context
from pytest_screeneval.evidence.rationale.resume_facts import lookup_key
from pytest_screeneval.evidence.rationale.text import sentence_spans

__all__ = ["claimed_as_held", "pending_names"]

# a resume line that gives a credential as not yet held
_PENDING_LINE = re.compile(
    r"\b(?:working\s+towards?|in\s+progress|studying\s+(?:for|towards?)|part[- ]qualified"
    r"|part[- ]way\s+through|pursuing|enrolled\s+on|expected\s+(?:19|20)\d\d"
    r"|due\s+(?:to\s+complete\s+)?(?:in\s+)?(?:19|20)\d\d|ongoing|under\s*way)\b",
    re.IGNORECASE,
)
# a rationale's own hedge in the sentence that names the credential
_HEDGE = re.compile(
    r"\b(?:working\s+towards?|towards|in\s+progress|studying|part[- ]qualified|part[- ]way"
    r"|partway|pursuing|enrolled|training\s+for|on\s+track|nearly|almost|close\s+to|completing"
    r"|expected|due\s+to|candidate|trainee|under\s*way|ongoing|started|begun|began|partly"
    r"|partially|not\s+yet|yet\s+to|unfinished|incomplete)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9']*")
# words of such a line that tell no credential apart
_GENERIC = frozenset(
    [
        "working",
        "towards",
        "toward",
        "progress",
        "in",
        "the",
        "of",
        "and",
        "for",
        "with",
        "level",
        "diploma",
        "certificate",
        "award",
        "degree",
        "studying",
        "part",
        "qualified",
        "expected",
        "due",
        "ongoing",
        "pursuing",
        "enrolled",
        "a",
        "an",
    ]
)


@lru_cache(maxsize=512)
def pending_names(resume: str) -> frozenset[str]:
    """The lookup keys of the capitalised words and short forms that only the resume's
    in-progress lines give ("certavp", "ciob", "chartered", "arboriculturist")."""
    pending: set[str] = set()
    held: set[str] = set()
    for line in resume.splitlines():
        keys = {lookup_key(word) for word in _NAME.findall(line)}
        (pending if _PENDING_LINE.search(line) else held).update(keys)
    return frozenset(pending - held - _GENERIC)


def claimed_as_held(context: Context) -> list[str]:
    """One problem for each sentence that names an in-progress credential with no hedge."""
    names = pending_names(context.facts.text)
    if not names:
        return []
    text = context.text
    problems: list[str] = []
    for start, end in sentence_spans(text):
        if _HEDGE.search(text, start, end):
            continue
        for match in _NAME.finditer(text, start, end):
            if lookup_key(match.group(0)) not in names:
                continue
            if context.negated.covers(*match.span()) or context.protected.touches(*match.span()):
                continue
            problems.append(f"held, but the resume gives it as in progress: {match.group(0)!r}")
            break
    return problems
