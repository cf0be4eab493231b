"""Changes claimed in words ("doubled throughput", "cut handle time by a third"), checked
against two figures on one resume line about the same thing."""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_screeneval.evidence.rationale.claim_context import COMMON_WORDS, CONTENT_WORD, Context
from pytest_screeneval.evidence.rationale.resume_facts import is_year, unit_stem

__all__ = ["unsupported_changes", "unsupported_pairs"]

# --------------------------------------------------------------------------------------------
# Changes in words: "doubled throughput", "cut handle time by a third"
# --------------------------------------------------------------------------------------------

# (pattern, kind, amount): "times" a ratio after/before, "cut" a share taken off, "cut_over" a
# share at least taken off
_CHANGES = (
    (r"\bdoubl(?:e|ed|es|ing)\b|\b2x\b|\btwice\s+as\b", "times", 2.0),
    (r"\btripl(?:e|ed|es|ing)\b|\b3x\b|\bthree\s+times\b", "times", 3.0),
    (r"\bquadrupl(?:e|ed|es|ing)\b|\b4x\b|\bfour\s+times\b", "times", 4.0),
    (
        r"\bmore\s+than\s+halv(?:e|ed|es|ing)\b|\bby\s+more\s+than\s+(?:a\s+)?half\b",
        "cut_over",
        0.5,
    ),
    (r"\bhalv(?:e|ed|es|ing)\b|\bby\s+(?:a\s+)?half\b|\bin\s+half\b", "cut", 0.5),
    (r"\bby\s+(?:almost\s+|nearly\s+|roughly\s+|about\s+)?two[-\s]thirds\b", "cut", 2 / 3),
    (r"\bby\s+(?:almost\s+|nearly\s+|roughly\s+|about\s+)?three[-\s]quarters\b", "cut", 0.75),
    (r"\bby\s+(?:almost\s+|nearly\s+|roughly\s+|about\s+)?(?:a|one)[-\s]third\b", "cut", 1 / 3),
    (r"\bby\s+(?:almost\s+|nearly\s+|roughly\s+|about\s+)?(?:a|one)[-\s]quarter\b", "cut", 0.25),
)
_CHANGE = re.compile(
    "|".join(f"(?P<c{i}>{pattern})" for i, (pattern, _, _) in enumerate(_CHANGES)), re.I
)
_MAYBE_CHANGE = re.compile(
    r"doubl|tripl|quadrupl|halv|half|third|quarter|[234]x\b|twice|times", re.I
)
_SUBJECT_WORDS = 2  # content words each side of a change that say what changed
_CHANGE_SLACK = 0.1  # "cut by a third" for 9 -> 6 minutes, "doubled" for 1,200 -> 2,400


@lru_cache(maxsize=512)
def _changes_said(folded: str) -> frozenset[tuple[str, float]]:
    """The changes a (resume) text states in words."""
    said: set[tuple[str, float]] = set()
    for match in _CHANGE.finditer(folded):
        number = next(i for i in range(len(_CHANGES)) if match.group(f"c{i}"))
        said.add(_CHANGES[number][1:])
    return frozenset(said)


# "more than doubled", "well over halved": a bound, not the change itself
_AT_LEAST_BEFORE = re.compile(r"\b(?:more\s+than|over|well\s+over|at\s+least)\s+$", re.I)


def _change_holds(kind: str, amount: float, a: float, b: float, at_least: bool = False) -> bool:
    low, high = sorted((a, b))
    if low <= 0:
        return False
    if kind == "times":
        if at_least:
            return high / low >= amount * (1 - _CHANGE_SLACK)
        return abs(high / low - amount) <= _CHANGE_SLACK * amount
    share = 1 - low / high
    if kind == "cut_over" or (at_least and kind != "times"):
        return share > amount
    return abs(share - amount) <= _CHANGE_SLACK


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|per\s*cent\b|percent\b)", re.I)


@lru_cache(maxsize=512)
def _percent_lines(resume: str) -> tuple[tuple[tuple[float, ...], frozenset[str]], ...]:
    """Each resume line that gives a percentage: its percentages and its content words."""
    found = []
    for line in resume.splitlines():
        shares = tuple(float(m.group(1)) for m in _PERCENT.finditer(line))
        if shares:
            words = frozenset(unit_stem(w) for w in CONTENT_WORD.findall(line.lower()))
            found.append((shares, words - COMMON_WORDS))
    return tuple(found)


def _share_holds(kind: str, amount: float, percent: float, at_least: bool) -> bool:
    """Whether a change in words is the change a percentage states: "by a third" for 35%,
    "doubled" for 100%."""
    share = percent / 100
    if kind == "times":
        ratio = 1 + share
        if at_least:
            return ratio >= amount * (1 - _CHANGE_SLACK)
        return abs(ratio - amount) <= _CHANGE_SLACK * amount
    if kind == "cut_over" or at_least:
        return share > amount
    return abs(share - amount) <= _CHANGE_SLACK


def unsupported_changes(context: Context) -> list[str]:
    """Each change in words that no pair of figures on one resume line bears out, unless the
    resume says it in words too."""
    text, facts = context.text, context.facts
    problems: list[str] = []
    if not _MAYBE_CHANGE.search(text):
        return problems
    for match in _CHANGE.finditer(text):
        start, end = match.span()
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        number = next(i for i in range(len(_CHANGES)) if match.group(f"c{i}"))
        _, kind, amount = _CHANGES[number]
        if (kind, amount) in _changes_said(facts.folded):
            continue  # the resume says it in words itself: "cut by half" for "halved"
        # what changed: the words around the claim ("halved p95 latency") must be on the line
        # whose figures bear it out, so a doubling of throughput does not ground halved latency
        bound_match = _AT_LEAST_BEFORE.search(text, max(0, start - 16), start)
        bound = bool(bound_match)
        # the subject comes before the bound: "approvals more than doubled"
        said_from = bound_match.start() if bound_match else start
        before = [unit_stem(w) for w in CONTENT_WORD.findall(text[:said_from].lower())]
        after = [unit_stem(w) for w in CONTENT_WORD.findall(text[end:].lower())]
        subject = {*before[-_SUBJECT_WORDS:], *after[:_SUBJECT_WORDS]} - COMMON_WORDS
        if any(
            subject & words
            and any(
                _change_holds(kind, amount, a, b, bound)
                for i, a in enumerate(line)
                for b in line[i + 1 :]
            )
            for line, words in zip(facts.line_values, facts.line_words, strict=True)
        ):
            continue
        # "grew direct bookings by about a third" for "Grew direct bookings by 35%": the resume
        # gives the change itself, as a percentage on a line about the same thing
        if any(
            subject & words and any(_share_holds(kind, amount, p, bound) for p in shares)
            for shares, words in _percent_lines(facts.text)
        ):
            continue
        problems.append(f"change not in the resume's figures: {match.group(0)!r}")
    return problems


# --------------------------------------------------------------------------------------------
# A change in figures: "cut from 9 days to 3" needs 9 and 3 on one resume line
# --------------------------------------------------------------------------------------------

_FROM_TO = re.compile(
    r"\bfrom\s+[£$€]?(\d[\d,]*(?:\.\d+)?)%?(?:\s+[a-z]+){0,2}\s+(?:to|->|→)\s+[£$€]?"
    r"(\d[\d,]*(?:\.\d+)?)(?!\.?\d)",
    re.IGNORECASE,
)


def unsupported_pairs(context: Context) -> list[str]:
    """Each "from A to B" whose two figures the resume gives, but never on one line: one of
    them was changed ("cut from 9 days to 3" for 9 -> 4, where 3 counts something else)."""
    text, facts = context.text, context.facts
    problems: list[str] = []
    for match in _FROM_TO.finditer(text):
        if context.quoted.covers(*match.span()) or context.negated.covers(*match.span()):
            continue
        a, b = (float(g.replace(",", "")) for g in match.groups())
        if is_year(a) or is_year(b) or a == b:
            continue
        in_resume = [any(abs(v - x) < 1e-9 for x in facts.values) for v in (a, b)]
        if not all(in_resume):
            continue  # a figure the resume lacks is flagged as such
        if not any(
            any(abs(a - x) < 1e-9 for x in line) and any(abs(b - x) < 1e-9 for x in line)
            for line in facts.line_values
        ):
            problems.append(f"change not in the resume's figures: {match.group(0)!r}")
    return problems
