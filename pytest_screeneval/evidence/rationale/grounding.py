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

from pytest_screeneval.evidence.rationale.resume_facts import (
    DOTNET,
    NUMBER,
    PART_WITH_SEPARATOR,
    InputFacts,
    grounding_lexicon,
    input_facts,
    lexicon_hits,
    lookup_key,
    number_key,
    number_words,
    spelled_out,
    tokenize,
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
    for m in NUMBER.finditer(text):
        values = {number_key(m.group(1))}
        if (m.group(2) or "").lower() == "k":
            values.add(number_key(str(round(float(m.group(1).replace(",", "")) * 1000))))
        candidates.append((values, m.start(1), m.end(1)))
    for count, start, end in number_words(text):
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
    tokens = tokenize(text)
    problems: list[str] = []
    hits = lexicon_hits(text, tokens)
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
        if not grounded:
            problems.append(f"not in the resume: {text[start:end]!r}")
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
            if part in ("-", "/") or not part or not part[0].isupper():
                continue
            if part_start == token.start and _sentence_initial(text, token.start, starts):
                continue
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
