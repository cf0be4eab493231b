"""Durations a rationale gives ("nine years", "over a decade", "a quarter of a century"): one the
resume states as such ("4 years as team leader") or spans with its dates, and, when the duration
is said of one job ("over a decade as lead chaplain at Wendmoor", "nine years at Brightwell"),
that job's dates alone."""

from __future__ import annotations

import re

from pytest_screeneval.evidence.rationale.quantities import (
    APPROX_BEFORE,
    APPROX_TOLERANCE,
    AT_LEAST_BEFORE,
    same_value,
)
from pytest_screeneval.evidence.rationale.resume_facts import InputFacts, lookup_key

__all__ = ["grounded_duration"]

_YEAR_WORDS = frozenset(("year", "yr", "decade"))

# what a duration is said of, right after it and in its own clause: "as lead chaplain at
# Wendmoor", "at Brightwell" ("nine years of QA, four at Bramble" says the nine of no one job)
_DURATION_CLAUSE_END = re.compile(r"[,.;:()\n]|\s(?:and|but|since|from|before|after)\s", re.I)
_DURATION_REACH = 4  # words between the duration and its "as" or "at"
_AS_TITLE = re.compile(r"\bas\s+(?:an?\s+|the\s+)?((?:[\w-]+\s*){1,4})", re.IGNORECASE)
_AT_NAME = re.compile(r"\b(?:at|with|for)\s+((?:[A-Z][\w'&.-]*\s*){1,4})")


def _job_lengths(facts: InputFacts, text: str, end: int) -> frozenset[int] | None:
    """The length of the one job a duration is said of ("over a decade as lead chaplain at
    Wendmoor", "nine years at Brightwell"), from its heading's dates; None when it names no job
    or no one job."""
    stretch = text[end : end + 80]
    edge = _DURATION_CLAUSE_END.search(stretch)
    stretch = stretch[: edge.start()] if edge else stretch
    words = [word.lower() for word in stretch.split()]
    first = next((i for i, word in enumerate(words) if word in ("as", "at")), None)
    if first is None or first > _DURATION_REACH:
        return None
    best: list[tuple[int, frozenset[int]]] = []
    for section in facts.sections:
        if not section.lengths:
            continue
        at = any(set(m.group(1).split()) & section.names for m in _AT_NAME.finditer(stretch))
        title = section.title - _GENERIC_TITLE
        as_title = bool(title) and any(
            title <= {lookup_key(w) for w in m.group(1).split()}
            for m in _AS_TITLE.finditer(stretch)
        )
        if at or as_title:
            best.append((int(at) + int(as_title), section.lengths))
    if not best:
        return None
    top = max(score for score, _ in best)
    named = [lengths for score, lengths in best if score == top]
    return named[0] if len(named) == 1 else None


_GENERIC_TITLE = frozenset(("senior", "junior", "lead", "head", "chief", "principal", "deputy"))


def grounded_duration(facts: InputFacts, years: float, text: str, start: int, end: int) -> bool:
    """Whether a duration the rationale gives (``years``, at ``start``-``end``) is one the resume
    states or spans with its dates: of the one job it is said of, if it names one."""
    before = text[max(0, start - 24) : start]
    # "5 years" stated as such, on a line that counts years ("Level 6" is no span)
    stated = (v for v in facts.values if _YEAR_WORDS & facts.units.get(v, frozenset()))
    if any(same_value(years, v) for v in stated):
        return True
    job = _job_lengths(facts, text, end)
    if job is not None:
        # said of one job: that job's dates decide ("over a decade as lead chaplain at Wendmoor")
        return _fits_a_span(job, years, before)
    return _fits_a_span(facts.durations, years, before)


def _fits_a_span(spans: frozenset[int], years: float, before: str) -> bool:
    """Whether a duration, read with its bound or approximation, is one of the spans."""
    if AT_LEAST_BEFORE.search(before):
        return any(years <= d <= 3 * years for d in spans)
    # the slack of "almost twenty years" is read against spans of the resume's dates only: any
    # other figure near twenty (18%, 19 sites) says nothing about a career's length
    slack = max(1.0, APPROX_TOLERANCE * years) if APPROX_BEFORE.search(before) else 0.0
    return any(abs(d - years) <= slack + 1e-9 for d in spans)
