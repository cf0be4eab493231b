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
from datetime import date
from functools import cache, lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from pytest_screeneval.evidence.rationale.text import (
    casefold_text,
    clause_spans,
    normalise,
    sentence_spans,
)

__all__ = ["InputFacts", "input_facts", "ungrounded_claims"]

# --------------------------------------------------------------------------------------------
# The lexicon: data/grounding.yaml (its header says the format), read once
# --------------------------------------------------------------------------------------------

LEXICON_FILE = Path(__file__).resolve().parent / "data" / "grounding.yaml"

_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "dozen": 12,
}  # fmt: skip


@dataclass(frozen=True)
class _Group:
    name: str
    implied_by: frozenset[str]


@dataclass(frozen=True)
class _Lexicon:
    folded: dict[tuple[str, ...], str]  # an alias's words in lookup form -> its group
    exact: dict[tuple[str, ...], str]  # a case-exact alias's words -> its group
    groups: dict[str, _Group]
    longest_from: dict[str, int]  # for each possible first word, the longest alias it starts
    exact_first: frozenset[str]
    # aliases of several words, as (first word, text, word-bounded pattern, group), for
    # whole-resume lookups
    phrases: tuple[tuple[str, str, re.Pattern[str], str], ...]
    certification_groups: frozenset[str]  # a generic "certification" claim is grounded by any
    never_claims: frozenset[str]  # words that are never claims even when capitalised
    concepts: frozenset[str]  # practices and fields, not checked word by word


@cache
def _lexicon() -> _Lexicon:
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(LEXICON_FILE.read_text(encoding="utf-8"), Loader=loader)
    folded: dict[tuple[str, ...], str] = {}
    exact: dict[tuple[str, ...], str] = {}
    groups: dict[str, _Group] = {}
    for name, entry in data["groups"].items():
        groups[name] = _Group(name, frozenset(entry.get("grounded_by", ())))
        for alias in entry.get("aliases", ()):
            folded[tuple(_key(t) for t in alias.split())] = name
        for alias in entry.get("exact", ()):
            exact[tuple(alias.split())] = name
    longest_from: dict[str, int] = {}
    for alias in (*folded, *(tuple(_key(w) for w in k) for k in exact)):
        longest_from[alias[0]] = max(longest_from.get(alias[0], 0), len(alias))
    return _Lexicon(
        folded=folded,
        exact=exact,
        groups=groups,
        longest_from=longest_from,
        exact_first=frozenset(k[0] for k in exact),
        phrases=tuple(
            (k[0], " ".join(k), re.compile(rf"(?<!\w){re.escape(' '.join(k))}(?!\w)"), group)
            for k, group in folded.items()
            if len(k) > 1
        ),
        certification_groups=frozenset(data["certification_groups"].split()),
        never_claims=frozenset(data["never_claims"].split()),
        concepts=frozenset(data["concepts"].split()),
    )


@lru_cache(maxsize=16384)
def _key(token: str) -> str:
    """The lookup form of a token: lower case, no trailing dot or possessive."""
    token = token.lower().rstrip(".")
    if token.endswith("'s"):
        token = token[:-2]
    return token


_HYPHEN_OR_SLASH = re.compile(r"[-/]")

# A token: letters/digits joined by . - / ' (so "Node.js", "CI/CD", "scikit-learn", "B.Sc",
# "master's"), with a trailing "++", "#" or "+" (C++, C#, Security+).
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.\-/'][A-Za-z0-9]+)*(?:\+\+|#|\+)?")
_ALNUM_RUNS = re.compile(r"[A-Za-z0-9]+")
_PERCENT = re.compile(r"(?<![\d.])(?>(\d+(?:\.\d+)?))\s*%")
_PART_WITH_SEPARATOR = re.compile(r"([-/])")
_LETTER_WORDS = re.compile(r"[A-Za-z]+")
_DOTNET = re.compile(r"(?<![\w.])\.net\b", re.IGNORECASE)


class _Token(NamedTuple):
    # A NamedTuple, not a dataclass: a resume has hundreds of tokens, made on every new text.
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.group(0), *m.span()) for m in _TOKEN.finditer(text)]


def _lexicon_matches(
    texts: Sequence[str], joined: Sequence[bool]
) -> list[tuple[str, int, int, int, int]]:
    """Each longest lexicon match in a token sequence: (group, first, last, lo, hi).

    Tokens ``first``..``last`` (inclusive) match; ``lo``/``hi`` are character offsets inside a
    single token when only a hyphen or slash part of it matches ("Kubernetes" in
    "Kubernetes-based"), else ``0`` and ``-1``. ``joined[i]`` says whether only spaces separate
    token ``i`` from the next: a match of several words never spans punctuation ("SQL, Server").
    """
    lexicon = _lexicon()
    hits: list[tuple[str, int, int, int, int]] = []
    keys = [_key(t) for t in texts]
    count = len(texts)
    i = 0
    while i < count:
        matched = 0
        reach = min(lexicon.longest_from.get(keys[i], 0), count - i)
        for step in range(1, reach):
            if not joined[i + step - 1]:
                reach = step
                break
        for n in range(reach, 0, -1):
            group = lexicon.folded.get(tuple(keys[i : i + n]))
            if group is None and texts[i].rstrip(".") in lexicon.exact_first:
                group = lexicon.exact.get(tuple(t.rstrip(".") for t in texts[i : i + n]))
            if group:
                hits.append((group, i, i + n - 1, 0, -1))
                matched = n
                break
        if not matched:
            text = texts[i]
            if "-" in text or "/" in text:
                offset = 0
                for part in _HYPHEN_OR_SLASH.split(text):
                    group = lexicon.exact.get((part,)) or lexicon.folded.get((_key(part),))
                    if group:
                        hits.append((group, i, i, offset, offset + len(part)))
                    offset += len(part) + 1
            matched = 1
        i += matched
    return hits


def _lexicon_hits(text: str, tokens: Sequence[_Token]) -> list[tuple[str, int, int]]:
    """(group, start, end) character spans of the lexicon matches among a text's tokens."""
    joined = [
        text[a.end : b.start].isspace() and not a.text.lower().endswith("'s")
        for a, b in pairwise(tokens)
    ]
    hits = []
    for group, first, last, lo, hi in _lexicon_matches([t.text for t in tokens], joined):
        if hi < 0:
            hits.append((group, tokens[first].start, tokens[last].end))
        else:
            hits.append((group, tokens[first].start + lo, tokens[first].start + hi))
    return hits


# --------------------------------------------------------------------------------------------
# What the resume contains (computed once per resume text)
# --------------------------------------------------------------------------------------------

# Atomic groups: "3.2M/yr" must not backtrack into a claim of "3".
_NUMBER = re.compile(r"(?<![\w.])(?>(\d+(?:[.,]\d+)*))(?>([kmb]n?|bn|x)?)(?![\w/])", re.I)
_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PRESENT = re.compile(r"\b(?:present|current|now|today|ongoing|date)\b", re.IGNORECASE)
_COMPOUND_UNIT = re.compile(r"[- ](one|two|three|four|five|six|seven|eight|nine)\b", re.I)
_UNIT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9}  # fmt: skip


def _number_key(raw: str) -> str:
    """One spelling per number: thousands commas dropped, trailing zero decimals dropped."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        raw = raw.replace(",", "")
    raw = raw.replace(",", ".")
    if "." in raw:
        raw = raw.rstrip("0").rstrip(".")
    return raw.lstrip("0") or "0"


@dataclass(frozen=True)
class InputFacts:
    """What a resume text offers to ground claims: its words, numbers, terms and initials."""

    folded: str
    words: frozenset[str]
    numbers: frozenset[str]
    durations: frozenset[int]
    differences: frozenset[str]
    groups: frozenset[str]
    has_certification: bool
    text: str  # normalised, for the rarely needed lookups (acronym initials)


@lru_cache(maxsize=512)
def input_facts(input_text: str, this_year: int | None = None) -> InputFacts:
    """Everything grounding needs to know about one resume; cached (one resume, many criteria)."""
    lexicon = _lexicon()
    text = normalise(input_text)
    folded = casefold_text(text)
    # Whole tokens ("B.Sc", "scikit-learn"), their hyphen/slash parts (as the rationale's lexicon
    # reads them) and their bare alphanumeric runs: every way a word can be looked up.
    tokens = _TOKEN.findall(text)
    pieces = set(tokens)
    for token in tokens:
        if not token.isalnum():  # the few with punctuation inside: add their parts
            pieces.update(_HYPHEN_OR_SLASH.split(token))
            pieces.update(_ALNUM_RUNS.findall(token))
    words = {_key(piece) for piece in pieces}
    exact = lexicon.exact
    groups = {exact[(p,)] for p in lexicon.exact_first.intersection(pieces) if (p,) in exact}
    # Every one-word alias, then every longer alias the folded text contains: a superset of the
    # longest-match reading, so a match across a line break ("Ruby" / "on Rails") hides nothing.
    groups.update(lexicon.folded[(word,)] for word in words if (word,) in lexicon.folded)
    for first, phrase, pattern, group in lexicon.phrases:
        if first in words and phrase in folded and pattern.search(folded):
            groups.add(group)
    number_texts = _ANY_NUMBER.findall(text)
    numbers = {_number_key(raw) for raw in number_texts}
    percents = [float(v) for v in _PERCENT.findall(text)]
    differences = {_number_key(f"{abs(a - b):.1f}") for a in percents for b in percents if a != b}
    numbers.update(str(value) for value in _number_word_values(words, folded))
    years = sorted({int(raw) for raw in number_texts if len(raw) == 4 and "1950" <= raw < "2050"})
    durations = {abs(a - b) for a in years for b in years if a != b}
    if years and _PRESENT.search(text):
        now = this_year or date.today().year
        durations.update(d for y in years for d in (now - y, now - y - 1) if d > 0)
    if ".net" in folded and _DOTNET.search(text):
        groups.add("dotnet")
    has_certification = bool(groups & (lexicon.certification_groups | {"certification"})) or any(
        w.startswith(("certif", "licen")) for w in words
    )
    return InputFacts(
        folded=folded,
        words=frozenset(words),
        numbers=frozenset(numbers),
        durations=frozenset(durations),
        differences=frozenset(differences),
        groups=frozenset(groups),
        has_certification=has_certification,
        text=text,
    )


_JOINING_WORDS = frozenset({"of", "and", "the", "for", "in", "on", "to", "a", "an"})
_WORD_OR_LINE_BREAK = re.compile(r"[A-Za-z]+|\n")


@lru_cache(maxsize=512)
def _initials(text: str) -> tuple[str, str]:
    """The word initials of a text, lines kept apart by "|": all words, and without joining
    words. An acronym is spelled out in the text when it is a run of either ("sdr" for "Sales
    Development Representative", "pmp" for "Project Management Professional")."""
    every: list[str] = []
    content: list[str] = []
    for word in _WORD_OR_LINE_BREAK.findall(text):
        if word == "\n":
            every.append("|")
            content.append("|")
            continue
        initial = word[0].lower()
        every.append(initial)
        if word.lower() not in _JOINING_WORDS:
            content.append(initial)
    return "".join(every), "".join(content)


def _spelled_out(facts: InputFacts, acronym: str) -> bool:
    every, content = _initials(facts.text)
    letters = acronym.lower()
    return letters in content or letters in every


_TENS = frozenset(word for word, value in _NUMBER_WORDS.items() if 20 <= value < 100)
_NUMBER_WORD_PATTERNS = {word: re.compile(rf"\b{word}\b") for word in _TENS}


def _number_word_values(words: set[str], folded: str) -> set[int]:
    """The spelled-out numbers among a resume's words (a fast path for whole resumes)."""
    values = {_NUMBER_WORDS[word] for word in words & _NUMBER_WORDS.keys()}
    for tens in words & _TENS:  # "twenty-five", "thirty two"
        for match in _NUMBER_WORD_PATTERNS[tens].finditer(folded):
            unit = _COMPOUND_UNIT.match(folded, match.end())
            if unit:
                values.add(_NUMBER_WORDS[tens] + _UNIT_WORDS[unit.group(1).lower()])
    return values


def _number_words(text: str) -> list[tuple[int, int, int]]:
    """(value, start, end) of each spelled-out number ("five", "twenty-five", "a dozen")."""
    found: list[tuple[int, int, int]] = []
    for word in _LETTER_WORDS.finditer(text):
        value = _NUMBER_WORDS.get(word.group(0).lower())
        if value is None:
            continue
        end = word.end()
        if value >= 20 and value < 100:
            unit = _COMPOUND_UNIT.match(text, end)
            if unit:
                value += _UNIT_WORDS[unit.group(1).lower()]
                end = unit.end()
        found.append((value, word.start(), end))
    return found


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
    context = _Context(
        rationale,
        facts,
        negated,
        _Mask(size, (m.span() for m in quotes)),
        _Mask(size, not_claims),
    )
    for match in quotes:
        if negated.covers(*match.span()):
            continue
        quote = match.group(1) if match.group(1) is not None else match.group(2)
        if not _quote_in(facts, quote):
            problems.append(f"quote not in the resume: {quote!r}")
    problems.extend(_unsupported_numbers(context, score))
    problems.extend(_unsupported_terms(context, criterion_words))
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
        if cue:
            spans.append((cue.start(), end))
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


def _unsupported_numbers(context: _Context, score: int) -> list[str]:
    text, facts = context.text, context.facts
    problems: list[str] = []
    candidates: list[tuple[set[str], int, int]] = []
    for m in _NUMBER.finditer(text):
        values = {_number_key(m.group(1))}
        if (m.group(2) or "").lower() == "k":
            values.add(_number_key(str(round(float(m.group(1).replace(",", "")) * 1000))))
        candidates.append((values, m.start(1), m.end(1)))
    for count, start, end in _number_words(text):
        # A spelled-out count ("two certifications") is usually counted from the resume's own
        # list; only a spelled-out duration ("five years") is a figure the resume must support.
        if _DURATION_AFTER.match(text, end):
            candidates.append(({str(count)}, start, end))
    for values, start, end in candidates:
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        if values & facts.numbers:
            continue
        value = next(iter(values))
        if _DURATION_AFTER.match(text, end) and value.isdigit() and int(value) in facts.durations:
            continue
        if _POINTS_AFTER.match(text, end) and value in facts.differences:
            continue  # "up 9 points" for 82% -> 91%
        before = text[max(0, start - 24) : start]
        if _SCORE_BEFORE.search(before) or _OUT_OF_AFTER.match(text, end):
            continue  # the score or the scale: "scores 4", "4 of 5", "4/5"
        if _OUT_OF_BEFORE.search(before):
            continue
        if value == str(score) and _A_BEFORE.search(before):
            continue  # "a 4", "(4)"
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
    key = _key(word)
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
    lexicon = _lexicon()
    tokens = _tokens(text)
    problems: list[str] = []
    hits = _lexicon_hits(text, tokens)
    covered = _Mask(len(text), ((start, end) for _, start, end in hits))
    for group, start, end in hits:
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        if all(_key(word) in criterion_words for word in text[start:end].split()):
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
        if not grounded:
            problems.append(f"not in the resume: {text[start:end]!r}")
    if _DOTNET.search(text) and "dotnet" not in facts.groups:
        match = _DOTNET.search(text)
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
        for part in _PART_WITH_SEPARATOR.split(token.text):
            part_start = offset
            offset += len(part)
            if part in ("-", "/") or not part or not part[0].isupper():
                continue
            if part_start == token.start and _sentence_initial(text, token.start, starts):
                continue
            key = _key(part)
            if key in lexicon.never_claims or key in lexicon.concepts or key in criterion_words:
                continue
            if _word_in(facts, part):
                continue
            bare = part[:-1] if part.endswith("s") and part[:-1].isupper() else part
            if _is_acronym(part) and _spelled_out(facts, bare):
                continue
            problems.append(f"not in the resume: {part!r}")
    return problems
