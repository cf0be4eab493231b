"""What every grounding check reads: the rationale, the resume's facts and which spans of the
rationale are negated, quoted or protected (one :class:`Context` per call)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_screeneval.evidence.rationale.resume_facts import InputFacts

__all__ = ["COMMON_WORDS", "CONTENT_WORD", "Context", "Mask"]

CONTENT_WORD = re.compile(r"\b[a-z][a-z-]{3,}\b")
COMMON_WORDS = frozenset(
    [
        "with",
        "from",
        "that",
        "this",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "have",
        "been",
        "were",
        "into",
        "over",
        "under",
        "about",
        "after",
        "before",
        "also",
        "across",
        "each",
        "every",
        "team",
        "teams",
        "work",
        "worked",
        "working",
        "role",
        "roles",
        "years",
        "year",
        "month",
        "months",
        "week",
        "weeks",
        "time",
        "times",
        "lead",
        "leads",
        "led",
        "leading",
        "built",
        "build",
        "builds",
        "ran",
        "runs",
        "running",
        "managed",
        "manages",
        "manage",
        "managing",
        "made",
        "make",
        "makes",
        "more",
        "most",
        "less",
        "very",
        "well",
        "good",
        "strong",
        "solid",
        "shows",
        "show",
        "shown",
        "plus",
        "both",
        "other",
        "which",
        "while",
        "where",
        "when",
        "what",
        "ship",
        "shipped",
        "company",
        "firm",
        "current",
        "previous",
        "earlier",
        "later",
        "first",
        "last",
        "based",
        "used",
        "uses",
        "using",
        "new",
        "old",
    ]
)


class Mask:
    """Which characters of a text lie in a set of spans; O(1)-ish queries in C."""

    __slots__ = ("_bytes",)

    def __init__(self, length: int, spans: Iterable[tuple[int, int]]) -> None:
        self._bytes = bytearray(length)
        for start, end in spans:
            self._bytes[start:end] = b"\x01" * (end - start)

    def covers(self, start: int, end: int) -> bool:
        return end > start and self._bytes.find(0, start, end) == -1

    def touches(self, start: int, end: int) -> bool:
        return self._bytes.find(1, start, end) != -1


@dataclass(frozen=True)
class Context:
    """One rationale being checked against one resume."""

    text: str
    facts: InputFacts
    negated: Mask  # clauses (or their parts) with a negation or hedge
    quoted: Mask  # quotes: checked whole, not word by word
    protected: Mask  # protected-attribute matches: no word claims there
    tokens: Sequence[Any] = ()  # the rationale's tokens
    hits: Sequence[tuple[str, int, int]] = ()  # its lexicon matches: (group, start, end)

    def said_plainly(self, start: int, end: int) -> bool:
        """Whether no negation or hedge, quote or protected reference touches the span: what a
        check of one kind of claim asks before it reads the span as a claim."""
        return not (
            self.negated.touches(start, end)
            or self.quoted.touches(start, end)
            or self.protected.touches(start, end)
        )
