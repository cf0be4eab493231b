"""Facts attributed to an employer: "mentored 3 graduates at Quarrystone" when the resume gives
them under another employer."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import pairwise

from pytest_screeneval.evidence.rationale.claim_context import COMMON_WORDS, CONTENT_WORD, Context
from pytest_screeneval.evidence.rationale.quantities import (
    DURATION_AFTER,
    NOT_A_COUNT_AFTER,
    quantities,
    same_value,
)
from pytest_screeneval.evidence.rationale.resume_facts import lookup_key
from pytest_screeneval.evidence.rationale.text import sentence_spans

__all__ = ["misattributed"]

# --------------------------------------------------------------------------------------------
# Facts attributed to an employer: "mentored 3 graduates at Quarrystone" (it was at Fenwick)
# --------------------------------------------------------------------------------------------

# Where the stretch of text an employer's name governs ends: punctuation, a new clause, or "and"
# before a new verb ("... and owned the roadmap at Quillon": the roadmap, not what came before).
# A point or comma inside a number ("0.8%", "240,000") is no edge.
_SEGMENT_EDGE = re.compile(
    # a comma before a participle that places what came before ("1,480 trials, built at
    # Orvelle") joins the two
    r"[;:!?()\n]|\.(?!\d)|,(?!\d)(?!\s+(?:all\s+|both\s+|each\s+)?(?:[a-z]+ed|built|done|won"
    r"|run|made|led|held|taught|kept|grown|drawn|written|set\s+up)\s+(?:at|for|with|in)\s)"
    r"|\s-\s|\b(?:which|then|but|whereas)\b"
    # "moved 40 services to AWS while at Linden Row": "while at" names where it all happened
    r"|\bwhile\b(?!\s+(?:[\w-]+\s+){0,4}?at\b)"
    r"|\band\s+(?=by\b|\w+ed\b)",
    re.IGNORECASE,
)


# Words of many job titles: they do not tell one job from another.
_TITLE_WORDS = frozenset(
    [
        "senior",
        "junior",
        "lead",
        "leader",
        "head",
        "chief",
        "principal",
        "staff",
        "manager",
        "management",
        "engineer",
        "engineering",
        "developer",
        "assistant",
        "associate",
        "officer",
        "director",
        "specialist",
        "analyst",
        "consultant",
        "advisor",
        "adviser",
        "agent",
        "representative",
        "executive",
        "coordinator",
        "support",
        "service",
        "customer",
        "team",
        "graduate",
        "trainee",
        "intern",
        "apprentice",
        "then",
    ]
)


_AND = re.compile(r"\band\b", re.IGNORECASE)
# a capitalised word after another word (the segment's first word may start a sentence)
_AT_EMPLOYER = re.compile(r"\b(?:at|for|with)\s+(?:the\s+)?(?-i:[A-Z])")
_PROPER = re.compile(r"(?<=\w\s)(?-i:[A-Z][a-z][\w'-]+)")
# "before joining Kestrel", "after leaving Greywater": the fact is placed in time against the
# employer, not at it ("since joining X" still places it at X)
_RELATIVE_TO = re.compile(
    r"\b(?:before|prior\s+to|ahead\s+of|after|until|till)\s+(?:(?:her|his|their)\s+)?"
    r"(?:joining|moving\s+to|move\s+to|starting\s+at|going\s+to|leaving|departure\s+from)"
    r"\s+(?:the\s+)?(?-i:[A-Z][\w&'-]*\s+){0,3}$",
    re.IGNORECASE,
)


# the candidate's current or previous job named without its employer's name ("in her current
# role", "at the previous firm"): the facts beside it are said of that job
_ROLE_NOUNS = (
    r"(?:role|post|job|position|employer|company|firm|practice|organi[sz]ation|workplace|hotel"
    r"|trust|council|service|school|library|site|works|depot|office|team)"
)
_CURRENT_ROLE = re.compile(
    r"\b(?:in|at|for|with)\s+(?:her|his|their|the|this)\s+(?:current|present|present-day)\s+"
    rf"(?:[a-z-]+\s+)?{_ROLE_NOUNS}\b",
    re.IGNORECASE,
)
_PREVIOUS_ROLE = re.compile(
    r"\b(?:in|at|for|with)\s+(?:her|his|their|the)\s+(?:previous|former|prior|last|earlier)\s+"
    rf"(?:[a-z-]+\s+)?{_ROLE_NOUNS}\b",
    re.IGNORECASE,
)


def _role_segments(text: str, current: int, previous: int | None) -> list[tuple[int, int, int]]:
    """(start, end, section number) of each stretch between punctuation that names the current
    or the previous job in words."""
    found: list[tuple[int, int, int]] = []
    if not _MAYBE_ROLE.search(text):
        return found
    for a, b, piece in _pieces(text):
        for pattern, number in ((_CURRENT_ROLE, current), (_PREVIOUS_ROLE, previous)):
            if number is None:
                continue
            for named in pattern.finditer(piece):
                found.append((*_item_around(named, piece, a, b), number))
    return found


def _pieces(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, text) of each stretch of a sentence between the punctuation that cuts it."""
    for start, end in sentence_spans(text):
        cuts = [start, *(m.start() for m in _SEGMENT_EDGE.finditer(text, start, end)), end]
        for a, b in pairwise(cuts):
            yield a, b, text[a:b]


def _item_around(named: re.Match[str], piece: str, a: int, b: int) -> tuple[int, int]:
    """Where the item naming ``named`` lies in the text: its piece (at ``a``..``b``), cut at an
    "and" on either side of the name."""
    before = list(_AND.finditer(piece, 0, named.start()))
    after = _AND.search(piece, named.end())
    return (a + before[-1].end() if before else a), (a + after.start() if after else b)


_MAYBE_ROLE = re.compile(r"\b(?:current|present|previous|former|prior|last|earlier)\b", re.I)


@lru_cache(maxsize=512)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?:'s)?(?!\w)", re.IGNORECASE)


def _segments_naming(text: str, names: Sequence[str]) -> list[tuple[int, int, int]]:
    """(start, end, section index) of each stretch between punctuation that names an employer."""
    found: list[tuple[int, int, int]] = []
    pattern = _names_pattern(tuple(names))
    if not pattern.search(text):
        return found
    for a, b, piece in _pieces(text):
        for named in pattern.finditer(piece):
            if named.group(0)[0].islower():
                continue  # "a structures team" is no mention of Pellworth Structures
            if _RELATIVE_TO.search(piece, 0, named.start()):
                continue  # "before joining Kestrel": not a fact at Kestrel
            said = lookup_key(named.group(0))
            # an "and" on either side of the name starts another item: "40 tests at Greyline
            # and the SSO rollout at Vantor", "at Dunlow and tribunal work"
            found.extend(
                (*_item_around(named, piece, a, b), number)
                for number, name in enumerate(names)
                if name == said
            )
    return found


def misattributed(context: Context) -> list[str]:
    """Each employer named beside facts that the resume gives under another employer only."""
    text, facts = context.text, context.facts
    sections = facts.sections
    if len(sections) < 2:
        return []
    names: list[str] = []
    owners: list[int] = []
    # a name word two sections share (the town both jobs were in: "Account Executive, Calder
    # Reach, Orrindale" and "Key Account Manager, Tessellate HR, Orrindale") tells no job apart
    counts: dict[str, int] = {}
    for section in sections:
        for key in {lookup_key(name) for name in section.names}:
            counts[key] = counts.get(key, 0) + 1
    for number, section in enumerate(sections):
        for name in section.names:
            key = lookup_key(name)
            if counts[key] == 1:
                names.append(key)
                owners.append(number)
    by_segment: dict[tuple[int, int], set[int]] = {}
    if names:
        for start, end, index in _segments_naming(text, names):
            by_segment.setdefault((start, end), set()).add(owners[index])
    current = [number for number, section in enumerate(sections) if section.current]
    if len(current) == 1:
        # the job listed after the current one is the previous job
        previous = current[0] + 1 if current[0] + 1 < len(sections) else None
        for start, end, number in _role_segments(text, current[0], previous):
            by_segment.setdefault((start, end), set()).add(number)
    problems: list[str] = []
    for (start, end), named in by_segment.items():
        if context.negated.touches(start, end):
            continue
        scope = [sections[n] for n in named]
        others = [s for n, s in enumerate(sections) if n not in named]
        piece = text[start:end]
        elsewhere: list[str] = []
        for quantity in quantities(piece):
            if quantity.spelled and (
                quantity.value < 2 or NOT_A_COUNT_AFTER.match(piece, quantity.end)
            ):
                continue
            if DURATION_AFTER.match(piece, quantity.end) or quantity.decades:
                continue
            value = quantity.value
            mine = any(same_value(value, v) for s in scope for v in s.values)
            theirs = any(same_value(value, v) for s in others for v in s.values)
            if theirs and not mine:
                elsewhere.append(piece[quantity.start : quantity.end])
        for group, hit_start, hit_end in context.hits:
            if hit_start < start or hit_end > end:
                continue
            if any(group in s.groups for s in others) and not any(group in s.groups for s in scope):
                elsewhere.append(group)
        words = {
            lookup_key(w) for w in CONTENT_WORD.findall(piece) if lookup_key(w) not in COMMON_WORDS
        }
        foreign = {
            w
            for w in words
            if any(w in s.words for s in others) and not any(w in s.words for s in scope)
        }
        # a name that only another job's lines give ("the Harbridge Water contract she won at
        # Calder Reach" when Harbridge Water sits under Tessellate)
        at = _AT_EMPLOYER.search(piece)
        proper = {lookup_key(w) for w in _PROPER.findall(piece, 0, at.start() if at else 0)}
        foreign |= {
            w
            for w in proper
            if any(w in s.words for s in others) and not any(w in s.words for s in scope)
        }
        # another job's title given to this employer ("maths lead at Brookhill")
        titles = {w for w in foreign if w not in _TITLE_WORDS and any(w in s.title for s in others)}
        if elsewhere or len(foreign) >= 2 or titles:
            shown = ", ".join(elsewhere or sorted(foreign))
            problems.append(f"attributed to the wrong employer: {piece.strip()!r} ({shown})")
    return problems
