"""Capitalised words of a rationale that are not claims for grounding to check word by word.

- A name spelled out where the resume gives its initials: "Member of the Institution of Civil
  Engineers" for "MICE", "Scientist Training Programme" for "STP", "Health and Care Professions
  Council" for "HCPC". The initials of the capitalised words (small joining words such as "of",
  "the", "and" left out) must spell an acronym the resume writes in capitals.
- A nationality or demonym ("Romanian", "South Asian"): it says who someone is, not a product,
  employer or credential, so it is never a grounding claim; said of the candidate it is the
  protected-attribute flag's business ("being Filipino herself"), said of the people of the
  work ("most of the pickers are Romanian") it is no claim at all. The words come from the
  protected lexicon's ``demonyms`` fragment, so the two checks agree on them.
- A law's name ("the Equality Act", "the Care Act 2014"): a field of knowledge, like the
  practices ``grounding.yaml`` lists as concepts, not a credential or a tool.

Pure: text in, spans out; the resume's acronyms are read once per resume text.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import yaml

from pytest_screeneval.evidence.rationale.protected import BUILTIN_FILE

__all__ = ["not_claim_spans", "resume_acronyms"]

_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
# A run of capitalised words, joined by spaces and, between them, small words or "&".
_CAPITAL_RUN = re.compile(
    r"\b[A-Z][\w'-]*(?:\s+(?:(?:of|the|and|for|in|on|&)\s+)*[A-Z][\w'-]*)+",
)
_CAPITAL_WORD = re.compile(r"\b[A-Z][\w'-]*")
_TITLE_WORD = re.compile(r"\b[A-Z][a-z]+(?:-[A-Z]?[a-z]+)*\b")
_LAW = re.compile(r"\b(?:[A-Z][a-z]+\s+){1,4}Act\b(?:\s+(?:19|20)\d\d\b)?")
_LONGEST_NAME = 8  # capitalised words in a spelled-out name, at most


@lru_cache(maxsize=512)
def resume_acronyms(input_text: str) -> frozenset[str]:
    """The resume's words in capitals, two to six letters ("MICE", "STP", "EWM")."""
    return frozenset(_ACRONYM.findall(input_text))


@cache
def _demonyms() -> re.Pattern[str]:
    data = yaml.safe_load(BUILTIN_FILE.read_text(encoding="utf-8"))
    fragment = data["fragments"]["demonyms"]
    words = "".join(fragment) if isinstance(fragment, list) else str(fragment)
    return re.compile(rf"(?:{words})s?", re.IGNORECASE)


@lru_cache(maxsize=8192)
def _is_demonym(words: str) -> bool:
    # one word (or two) at a time, cached: the whole alternation run over every rationale
    # would cost more than the rest of the grounding check
    return _demonyms().fullmatch(words) is not None


def _demonym_spans(text: str) -> list[tuple[int, int]]:
    """Capitalised nationality words ("Polish", "South Asian"); "polish the reports" is a verb."""
    spans: list[tuple[int, int]] = []
    previous: re.Match[str] | None = None
    for word in _TITLE_WORD.finditer(text):
        pair = previous is not None and text[previous.end() : word.start()] == " "
        if pair and previous is not None and _is_demonym(f"{previous.group(0)} {word.group(0)}"):
            spans.append((previous.start(), word.end()))
        elif _is_demonym(word.group(0)):
            spans.append(word.span())
        previous = word
    return spans


def _spelled_acronyms(text: str, acronyms: frozenset[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if not acronyms:
        return spans
    for run in _CAPITAL_RUN.finditer(text):
        # only words in title case spell initials: "S7 and Allen-Bradley PLCs" is not "SAP"
        words: list[re.Match[str]] = []
        for word in [*_CAPITAL_WORD.finditer(text, run.start(), run.end()), None]:
            if word is not None and _TITLE_WORD.fullmatch(word.group(0)):
                words.append(word)
                continue
            spans.extend(_initials_spelled(words, acronyms))
            words = []
    return spans


def _initials_spelled(
    words: list[re.Match[str]], acronyms: frozenset[str]
) -> list[tuple[int, int]]:
    """Each stretch of the words whose initials spell one of the acronyms."""
    if len(words) > _LONGEST_NAME:
        return []
    return [
        (words[first].start(), words[last].end())
        for first in range(len(words) - 1)
        for last in range(first + 1, len(words))
        if "".join(w.group(0)[0] for w in words[first : last + 1]) in acronyms
    ]


def not_claim_spans(input_text: str, rationale: str) -> list[tuple[int, int]]:
    """Spans of the rationale whose capitalised words are no claims (see the module's doc)."""
    spans = _spelled_acronyms(rationale, resume_acronyms(input_text))
    spans.extend(_demonym_spans(rationale))
    spans.extend(m.span() for m in _LAW.finditer(rationale))
    return spans
