"""Grounding: does a rationale claim anything the resume does not contain?

A claim is one of:

- a quoted span ("...", '...' or curly quotes): must appear in the resume (case and whitespace
  folded; an ellipsis splits it into parts that must each appear);
- a number in digits (12, 3.2, 40%, $3.2M, 3k): must appear in the resume; a number of years
  may instead be the span between two years the resume gives ("4 years" for 2015-2019, with
  "Present" read as this year, give or take one), and a number of points the difference between
  two of its percentages ("up 9 points" for 82% -> 91%). Spelled-out numbers are claims only
  as durations ("five years"): spelled-out counts ("two certifications") are usually counted
  off the resume's own lists. The score itself ("scores 4", "4/5", "a clear 4") is not a claim;
- a known technology, certification or degree (a curated lexicon with aliases, e.g. "k8s" for
  Kubernetes, "EKS" implies Kubernetes and AWS, "master's" is any master's degree, a generic
  "certification" any certification): the resume must name it or something that implies it;
- any other capitalised word in mid-sentence, acronym or CamelCase token (employers, titles,
  products, places): the resume must contain the word, or, for an acronym, words on one line
  with those initials ("SDR" for "Sales Development Representative").

Not claims: what follows a negation or hedge in its clause ("no AWS certification", "does not
mention Kubernetes", "without a degree", "would need Azure"), and what precedes an absence in
its clause ("Kubernetes and Helm are not listed"); sentence-initial words; the criterion's own
words; rubric and section words ("resume", "candidate", "score", "Skills"); names of practices
a model likes to capitalise ("Infrastructure as Code", "Agile"); words inside a
protected-attribute match (that flag already says what is wrong). ``evidence`` quotes must
each be a substring of the resume, compared the way quoted spans are.

Known blind spots, kept for precision: a product or place named as context rather than as a
claim ("the team's Slack-heavy culture") is flagged; an invented spelled-out count ("mentored
two interns") is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from pytest_screeneval.evidence.rationale.quantities import Quantity, quantities, same_value
from pytest_screeneval.evidence.rationale.resume_facts import (
    DOTNET,
    PART_WITH_SEPARATOR,
    InputFacts,
    grounding_lexicon,
    input_facts,
    lexicon_hits,
    lookup_key,
    number_key,
    spelled_out,
    tokenize,
    unit_stem,
    words_after,
)
from pytest_screeneval.evidence.rationale.text import (
    casefold_text,
    clause_spans,
    sentence_spans,
)

__all__ = ["InputFacts", "input_facts", "ungrounded_claims"]

# --------------------------------------------------------------------------------------------
# The rationale's claims
# --------------------------------------------------------------------------------------------

# "Kubernetes is not listed": an absence stated after the claim, in the same clause.
_ABSENCE_AFTER = re.compile(
    r"\b(?:not|never|n't)\s+(?:\w+\s+)?(?:listed|mentioned|shown|present|included|given|stated"
    r"|evident|found|described|documented|supported|demonstrated|visible|claimed|named|cited"
    r"|appear\w*|there|on\s+the\s+(?:resume|cv)|in\s+the\s+(?:resume|cv))\b"
    r"|\b(?:absent|missing|nowhere|unlisted|unmentioned|lacking)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:no|not|never|without|lacks?|lacking|lacked|absent|absence|missing|none|neither|nor"
    r"|nowhere|nothing|cannot|fails?\s+to|failed\s+to|unclear|unverified|unspecified"
    r"|unmentioned|omits?|omitted|would|could|might|if|unless|rather\s+than|instead\s+of"
    r"|whether)\b|n't\b",
    re.IGNORECASE,
)
# What a negation cue may govern without negating a claim: an idiom whose negated head is an
# abstract noun ("without doubt", "no question", "no stranger to", "nothing short of"), or a
# contrast ("not only ... but", "not just", "not limited to"). The claim after it stands.
_NOT_NEGATING = re.compile(
    r"\s*(?:a\s+|any\s+|the\s+|an\s+)?(?:doubt|question|wonder|surprise|stranger\s+to|slouch"
    r"|shortage\s+of|short\s+of|shortage|exception|fail|ordinary|small\s+feat|mean\s+feat"
    r"|only|just|merely|simply|limited\s+to|restricted\s+to|least|less\s+than|missing"
    r"|one\s+to|(?:event|project|task|job|challenge)\s+too\s+\w+|matter\s+what"
    r"|failed\s+(?:an?\s+)?(?:audit|deadline|inspection)s?|short\s+of\s+ideas)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"\"([^\"\n]{2,400})\"|(?<![\w])'([^'\n]{3,400}?)'(?![\w])")
_ELLIPSIS = re.compile(r"\.\.\.+|\[\.\.\.\]")
_QUOTE_TRIM = " \t\n.,;:!?\"'"
_DURATION_AFTER = re.compile(r"\s*(?:\+\s*)?[- ]?(?:years?|yrs?|decades?)\b", re.IGNORECASE)
_SCORE_BEFORE = re.compile(
    r"(?:scor\w*|rat(?:ed|ing|e)s?|level|band|grade|mark(?:ed)?|merits?|deserves?|earns?|gets?"
    r"|gives?|giving|award(?:ed|s)?)\s*(?:(?:of|at|a|an|is|as|to|:|=)\s*)*$",
    re.IGNORECASE,
)
_POINTS_AFTER = re.compile(r"\s*(?:percentage\s+)?(?:points?|pts|pp)\b", re.IGNORECASE)
# Lexicon words that are not claims in these phrases: "a high degree of ownership", "the master
# branch".
_NOT_A_CLAIM_AFTER = {
    "degree": re.compile(r"\s+of\b", re.IGNORECASE),
    "master": re.compile(
        r"\s+(?:branch|data|node|list|plan|class|record|schedule|key|copy|file|page|switch)",
        re.IGNORECASE,
    ),
}
_MASTER_VERB = re.compile(r"master$", re.IGNORECASE)
_MASTER_DEGREE_AFTER = re.compile(r"\s+(?:degree|in|programme|program)\b", re.IGNORECASE)
_NOT_A_CLAIM_BEFORE = {
    "degree": re.compile(r"\b(?:some|a|certain|what|large|great|high|lesser|varying)\s+$", re.I),
}
_OUT_OF_AFTER = re.compile(r"\s*(?:/|out\s+of\b|of\b)\s*\d", re.IGNORECASE)
_OUT_OF_BEFORE = re.compile(r"\d\s*(?:/|out\s+of|of)\s*$", re.IGNORECASE)
_A_BEFORE = re.compile(r"\b(?:an?|score:?)\s+(?:[a-z]+\s+)?$|\(\s*$", re.IGNORECASE)
_SENTENCE_OPENERS = ":;(\"'[/"


class _Mask:
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
class _Context:
    text: str
    facts: InputFacts
    negated: _Mask  # clauses (or their parts) with a negation or hedge
    quoted: _Mask  # quotes: checked whole, not word by word
    protected: _Mask  # protected-attribute matches: no word claims there
    tokens: Sequence[Any] = ()  # the rationale's tokens
    hits: Sequence[tuple[str, int, int]] = ()  # its lexicon matches: (group, start, end)


def ungrounded_claims(
    input_text: str,
    rationale: str,
    evidence: Sequence[str],
    *,
    score: int,
    criterion_words: frozenset[str],
    not_claims: Sequence[tuple[int, int]] = (),
    this_year: int | None = None,
) -> list[str]:
    """A short description of each claim in ``rationale`` that ``input_text`` does not support.

    ``rationale`` must already be normalised (``rationale_text.normalise``); ``not_claims`` are
    spans of it to leave alone (protected-attribute matches).
    """
    facts = input_facts(input_text, this_year)
    problems = [
        f"evidence not in the resume: {quote!r}" for quote in _missing_evidence(facts, evidence)
    ]
    if not rationale.strip():
        return problems
    size = len(rationale)
    negated = _Mask(size, _negated_spans(rationale))
    quotes = list(_QUOTED.finditer(rationale))
    # a protected reference's own words are not claims (its flag says what is wrong); the
    # other claims of its clause still are ("at 52 he closed 128% of quota in 2023")
    tokens = tokenize(rationale)
    context = _Context(
        rationale,
        facts,
        negated,
        _Mask(size, (m.span() for m in quotes)),
        _Mask(size, not_claims),
        tokens,
        lexicon_hits(rationale, tokens),
    )
    for match in quotes:
        if negated.covers(*match.span()):
            continue
        quote = match.group(1) if match.group(1) is not None else match.group(2)
        if not _quote_in(facts, quote):
            problems.append(f"quote not in the resume: {quote!r}")
    problems.extend(_unsupported_numbers(context, score))
    problems.extend(_unsupported_changes(context))
    problems.extend(_unsupported_terms(context, criterion_words))
    problems.extend(_misattributed(context))
    return problems


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


def _change_holds(kind: str, amount: float, a: float, b: float) -> bool:
    low, high = sorted((a, b))
    if low <= 0:
        return False
    if kind == "times":
        return abs(high / low - amount) <= _CHANGE_SLACK * amount
    share = 1 - low / high
    if kind == "cut_over":
        return share > amount
    return abs(share - amount) <= _CHANGE_SLACK


def _unsupported_changes(context: _Context) -> list[str]:
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
        before = [unit_stem(w) for w in _CONTENT_WORD.findall(text[:start].lower())]
        after = [unit_stem(w) for w in _CONTENT_WORD.findall(text[end:].lower())]
        subject = {*before[-_SUBJECT_WORDS:], *after[:_SUBJECT_WORDS]} - _COMMON_WORDS
        if any(
            subject & words
            and any(
                _change_holds(kind, amount, a, b) for i, a in enumerate(line) for b in line[i + 1 :]
            )
            for line, words in zip(facts.line_values, facts.line_words, strict=True)
        ):
            continue
        problems.append(f"change not in the resume's figures: {match.group(0)!r}")
    return problems


# --------------------------------------------------------------------------------------------
# Facts attributed to an employer: "mentored 3 graduates at Quarrystone" (it was at Fenwick)
# --------------------------------------------------------------------------------------------

# Where the stretch of text an employer's name governs ends: punctuation, a new clause, or "and"
# before a new verb ("... and owned the roadmap at Quillon": the roadmap, not what came before).
_SEGMENT_EDGE = re.compile(
    r"[,;:.!?()\n]|\s-\s|\b(?:while|which|then|but|whereas)\b|\band\s+(?=by\b|\w+ed\b)",
    re.IGNORECASE,
)
_CONTENT_WORD = re.compile(r"\b[a-z][a-z-]{3,}\b")
_COMMON_WORDS = frozenset(
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
    for start, end in sentence_spans(text):
        cuts = [start, *(m.start() for m in _SEGMENT_EDGE.finditer(text, start, end)), end]
        for a, b in pairwise(cuts):
            piece = text[a:b]
            for named in pattern.finditer(piece):
                said = lookup_key(named.group(0))
                for number, name in enumerate(names):
                    if name != said:
                        continue
                    # an "and" on either side of the name starts another item: "40 tests at
                    # Greyline and the SSO rollout at Vantor", "at Dunlow and tribunal work"
                    before = list(_AND.finditer(piece, 0, named.start()))
                    after = _AND.search(piece, named.end())
                    begin = a + before[-1].end() if before else a
                    stop = a + after.start() if after else b
                    found.append((begin, stop, number))
    return found


def _misattributed(context: _Context) -> list[str]:
    """Each employer named beside facts that the resume gives under another employer only."""
    text, facts = context.text, context.facts
    sections = facts.sections
    if len(sections) < 2:
        return []
    names: list[str] = []
    owners: list[int] = []
    for number, section in enumerate(sections):
        for name in section.names:
            names.append(lookup_key(name))
            owners.append(number)
    by_segment: dict[tuple[int, int], set[int]] = {}
    for start, end, index in _segments_naming(text, names):
        by_segment.setdefault((start, end), set()).add(owners[index])
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
                quantity.value < 2 or _NOT_A_COUNT_AFTER.match(piece, quantity.end)
            ):
                continue
            if _DURATION_AFTER.match(piece, quantity.end) or quantity.decades:
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
            lookup_key(w)
            for w in _CONTENT_WORD.findall(piece)
            if lookup_key(w) not in _COMMON_WORDS
        }
        foreign = {
            w
            for w in words
            if any(w in s.words for s in others) and not any(w in s.words for s in scope)
        }
        # another job's title given to this employer ("maths lead at Brookhill")
        titles = {w for w in foreign if w not in _TITLE_WORDS and any(w in s.title for s in others)}
        if elsewhere or len(foreign) >= 2 or titles:
            shown = ", ".join(elsewhere or sorted(foreign))
            problems.append(f"attributed to the wrong employer: {piece.strip()!r} ({shown})")
    return problems


def _negated_spans(text: str) -> list[tuple[int, int]]:
    """The stretches of text whose claims are negated or hedged.

    A negation or hedge reaches from its cue to the end of its clause ("no AWS or GCP work");
    an absence stated after the claims reaches back to the start of the clause ("Kubernetes and
    Helm are not listed"). "She is 45 and may not want..." negates nothing before "not".
    """
    spans: list[tuple[int, int]] = []
    for start, end in clause_spans(text):
        cue = _NEGATION.search(text, start, end)
        while cue:
            # "without doubt", "not only", "no stranger to": the cue negates its idiom, not
            # what follows it; the next cue in the clause may still negate the rest
            idiom = _NOT_NEGATING.match(text, cue.end())
            if idiom is None:
                spans.append((cue.start(), end))
                break
            cue = _NEGATION.search(text, idiom.end(), end)
        last_absence = None
        for last_absence in _ABSENCE_AFTER.finditer(text, start, end):  # noqa: B007
            pass
        if last_absence:
            spans.append((start, last_absence.end()))
    return spans


def _quote_in(facts: InputFacts, quote: str) -> bool:
    parts = [casefold_text(p).strip(_QUOTE_TRIM) for p in _ELLIPSIS.split(quote)]
    return all(part in facts.folded for part in parts if part)


def _missing_evidence(facts: InputFacts, evidence: Sequence[str]) -> list[str]:
    return [quote for quote in evidence if quote.strip() and not _quote_in(facts, quote)]


_APPROX_BEFORE = re.compile(
    r"(?:\b(?:about|around|roughly|approximately|approx|nearly|almost|some|circa|c|close\s+to"
    r"|just\s+under|just\s+over|an\s+estimated)|~)\.?\s*[£$€]?\s*$",
    re.IGNORECASE,
)
_AT_LEAST_BEFORE = re.compile(
    r"\b(?:over|more\s+than|at\s+least|upwards\s+of|north\s+of|in\s+excess\s+of|well\s+over"
    r"|beyond)\s*[£$€]?\s*$",
    re.IGNORECASE,
)
_AT_LEAST_AFTER = re.compile(r"\s*\+", re.IGNORECASE)
# A spelled-out number is a count only when a noun follows it ("twelve engineers"), not "four
# at Hallam", "ten of them", "two or three".
_NOT_A_COUNT_AFTER = re.compile(
    r"[\s-]*(?:of|at|as|in|on|to|and|or|for|with|times|more|less|each|a|an|the|was|were|is"
    r"|are|since|before|after|earlier|later|now|then|there|here|per|out|thirds?|quarters?"
    r"|halves|half|fifths?|tenths?|percent|cent)\b",
    re.IGNORECASE,
)
_LABEL_BEFORE = re.compile(r"(?:^|\n)[^\n]{1,40}[:=\-]\s*$")
_APPROX_TOLERANCE = 0.1  # "about 97%" for 97.1%, "roughly 1.1k" for 1,100
_CHANGE_BEFORE = re.compile(
    r"\b(?:by|down|up|fell|dropped|rose|cut|gained|saved|improved|reduced|increased|decreased"
    r"|lower|higher|faster|fewer|more)\s+(?:\w+\s+)?$",
    re.IGNORECASE,
)


def _grounded_value(
    facts: InputFacts, values: Sequence[float], text: str, start: int, end: int
) -> bool:
    """Whether the resume holds one of the values, read with the words around the number: a
    bound ("over 10,000"), an approximation ("about 97%"), and its unit ("2.4k requests" needs
    a figure of requests, not of engineers) when the resume counts that unit at all."""
    before = text[max(0, start - 24) : start]
    unit = next(iter(words_after(text, end, 1)), None)
    if unit is not None and unit not in facts.unit_words:
        unit = None  # a unit the resume never counts: the value alone decides

    if all(value.is_integer() and 1950 <= value < 2050 for value in values):
        unit = None  # a year: "a 2012 graduate" for "(2012)"

    def fits(resume_value: float) -> bool:
        return unit is None or unit in facts.units.get(resume_value, ())

    candidates = [r for r in facts.values if fits(r)]
    if _AT_LEAST_BEFORE.search(before) or _AT_LEAST_AFTER.match(text, end):
        return any(v <= r <= 3 * v for v in values for r in candidates)
    tolerance = _APPROX_TOLERANCE if _APPROX_BEFORE.search(before) else 0.0
    if any(same_value(v, r, tolerance) for v in values for r in candidates):
        return True
    # "down by seventeen days" for 48 -> 31 days: a difference of two figures on one line
    if _CHANGE_BEFORE.search(before):
        return any(
            same_value(v, abs(a - b))
            for v in values
            for line in facts.line_values
            for i, a in enumerate(line)
            for b in line[i + 1 :]
        )
    return False


def _grounded_duration(facts: InputFacts, years: float, text: str, start: int) -> bool:
    before = text[max(0, start - 24) : start]
    durations = [*facts.durations, *facts.values]
    if _AT_LEAST_BEFORE.search(before):
        return any(years <= d <= 3 * years for d in facts.durations)
    slack = max(1.0, _APPROX_TOLERANCE * years) if _APPROX_BEFORE.search(before) else 0.0
    return any(abs(d - years) <= slack + 1e-9 for d in durations)


def _unsupported_numbers(context: _Context, score: int) -> list[str]:
    """Each number the resume does not hold: digits in any spelling ("5k", "5,000", "£1.5M"),
    spelled-out counts ("twelve engineers") and durations ("over a decade")."""
    text, facts = context.text, context.facts
    problems: list[str] = []
    named = _Mask(len(text), ((a, b) for _, a, b in context.hits))
    by_span: dict[tuple[int, int], list[Quantity]] = {}
    for quantity in quantities(text):
        by_span.setdefault((quantity.start, quantity.end), []).append(quantity)
    for (start, end), found in by_span.items():
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        if named.touches(start, end):
            continue  # part of a name the lexicon knows: "Google Analytics 4", "Unreal Engine 5"
        first = found[0]
        if first.spelled and context.protected.touches(start, end):
            continue  # "thirty-something": the protected reference's own words
        values = [q.value for q in found]
        duration = first.decades or bool(_DURATION_AFTER.match(text, end))
        # "two" and "three" are usually counted off the resume's own list ("two certifications",
        # "three patents"); a larger spelled count is a figure, and so is a spelled difference
        not_a_count = first.value < 4 or bool(_NOT_A_COUNT_AFTER.match(text, end))
        if first.spelled and not duration and not_a_count and not _POINTS_AFTER.match(text, end):
            continue
        if duration:
            if _grounded_duration(facts, first.value, text, start):
                continue
        elif _POINTS_AFTER.match(text, end):
            if any(number_key(f"{v:.1f}") in facts.differences for v in values):
                continue  # "up 9 points" for 82% -> 91%
        elif _grounded_value(facts, values, text, start, end):
            continue
        before = text[max(0, start - 24) : start]
        is_score = first.value == score and not first.spelled
        if is_score and (
            _SCORE_BEFORE.search(before) or _A_BEFORE.search(before) or _LABEL_BEFORE.search(before)
        ):
            continue  # "scores 4", "a 4", "(4)", "Team leadership - 4", "data_analysis: 5"
        if _OUT_OF_AFTER.match(text, end) or _OUT_OF_BEFORE.search(before):
            continue  # the scale: "4 of 5", "4/5"
        problems.append(f"number not in the resume: {text[start:end]!r}")
    return problems


def _sentence_initial(text: str, start: int, sentence_starts: frozenset[int]) -> bool:
    if start in sentence_starts:
        return True
    i = start - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    if i < 0 or text[i] == "\n" or text[i] in _SENTENCE_OPENERS:
        return True
    # a bullet: "- Kafka" at the start of a line
    return text[i] in "-*" and (i == 0 or text[i - 1] == "\n")


def _word_in(facts: InputFacts, word: str) -> bool:
    key = lookup_key(word)
    variants = {key, key + "s", key + "es"}
    if key.endswith("s"):
        variants.add(key[:-1])
    if key.endswith("es"):
        variants.add(key[:-2])
    return bool(variants & facts.words)


def _is_acronym(word: str) -> bool:
    bare = word[:-1] if word.endswith("s") and word[:-1].isupper() else word
    return bare.isalpha() and bare.isupper() and 2 <= len(bare) <= 6


def _unsupported_terms(context: _Context, criterion_words: frozenset[str]) -> list[str]:
    text, facts = context.text, context.facts
    lexicon = grounding_lexicon()
    tokens = context.tokens
    problems: list[str] = []
    hits = context.hits
    covered = _Mask(len(text), ((start, end) for _, start, end in hits))
    for group, start, end in hits:
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        if all(lookup_key(word) in criterion_words for word in text[start:end].split()):
            continue  # "The python criterion scores 3": naming the criterion is not a claim
        master_verb = group == "master" and _MASTER_VERB.match(text[start:end])
        if master_verb and not _MASTER_DEGREE_AFTER.match(text, end):
            continue  # "master modern tooling", "a master of negotiation"
        exception = _NOT_A_CLAIM_AFTER.get(group)
        if exception is not None and exception.match(text, end):
            continue
        exception = _NOT_A_CLAIM_BEFORE.get(group)
        if exception is not None and exception.search(text[max(0, start - 24) : start]):
            continue
        if group == "certification":
            grounded = facts.has_certification
        else:
            implied_by = lexicon.groups[group].implied_by
            grounded = group in facts.groups or bool(implied_by & facts.groups)
        said = text[start:end]
        if not grounded and _is_acronym(said) and spelled_out(facts, said.rstrip("s")):
            grounded = True  # "CPA" for "cost per acquisition", "GKE" spelled out
        if not grounded:
            problems.append(f"not in the resume: {said!r}")
    if DOTNET.search(text) and "dotnet" not in facts.groups:
        match = DOTNET.search(text)
        if match and not context.negated.covers(*match.span()):
            problems.append("not in the resume: '.NET'")
    starts = frozenset(
        s + len(text[s:e]) - len(text[s:e].lstrip()) for s, e in sentence_spans(text)
    )
    for token in tokens:
        if token.text == token.text.lower():
            continue  # nothing capitalised: not a name
        if covered.touches(token.start, token.end) or context.protected.touches(
            token.start, token.end
        ):
            continue
        if context.quoted.covers(token.start, token.end):
            continue
        if context.negated.covers(token.start, token.end):
            continue
        offset = token.start
        for part in PART_WITH_SEPARATOR.split(token.text):
            part_start = offset
            offset += len(part)
            if part in ("-", "/") or len(part) < 2:
                continue
            if not (part[0].isupper() or (part[0].islower() and part[1].isupper())):
                continue  # a name is capitalised, or camel-cased ("iManage")
            initial = part_start == token.start and _sentence_initial(text, token.start, starts)
            if initial and not any(c.isupper() for c in part[1:]):
                continue  # a capital that starts a sentence; an acronym there is still a name
            key = lookup_key(part)
            if key in lexicon.never_claims or key in lexicon.concepts or key in criterion_words:
                continue
            if _word_in(facts, part):
                continue
            bare = part[:-1] if part.endswith("s") and part[:-1].isupper() else part
            if _is_acronym(part) and spelled_out(facts, bare):
                continue
            problems.append(f"not in the resume: {part!r}")
    return problems
