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
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from pytest_screeneval.evidence.rationale.attribution import misattributed
from pytest_screeneval.evidence.rationale.changes import unsupported_changes, unsupported_pairs
from pytest_screeneval.evidence.rationale.claim_context import Context, Mask
from pytest_screeneval.evidence.rationale.credential_words import unsupported_credentials
from pytest_screeneval.evidence.rationale.durations import grounded_duration
from pytest_screeneval.evidence.rationale.figure_reading import (
    PEOPLE_IN_GENERAL,
    PERCENT_AFTER,
    POINT_NOUN,
    level_grounded,
    percent_only,
    sentence_words,
    staff_form_grounded,
    total_grounded,
    total_said_as_rate,
    understood_duration,
)
from pytest_screeneval.evidence.rationale.list_counts import counts_a_list
from pytest_screeneval.evidence.rationale.name_forms import not_claim_spans
from pytest_screeneval.evidence.rationale.pending import claimed_as_held
from pytest_screeneval.evidence.rationale.quantities import (
    APPROX_BEFORE,
    APPROX_TOLERANCE,
    AT_LEAST_BEFORE,
    DURATION_AFTER,
    NOT_A_COUNT_AFTER,
    Quantity,
    quantities,
    same_value,
)
from pytest_screeneval.evidence.rationale.resume_facts import (
    DOTNET,
    PART_WITH_SEPARATOR,
    InputFacts,
    grounding_lexicon,
    input_facts,
    is_year,
    lexicon_hits,
    lookup_key,
    number_key,
    spelled_out,
    tokenize,
    words_after,
)
from pytest_screeneval.evidence.rationale.scope_claims import unsupported_scope
from pytest_screeneval.evidence.rationale.spoken_languages import unsupported_languages
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
    r"|whether|expect(?:s|ed|ing)?(?=\s+(?:an?|her|him|them|the|to|that|further|more|another)\b)"
    r"|hop(?:e|es|ed|ing)\s+(?:for|to|that)|anticipat\w+)\b|n't\b",
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
_MODAL_PREDICATE = re.compile(
    r"\b(?:would|could|might)\s+(?:be|make|mean|suit)\s+(?:an?\s+|the\s+)?(?:\w+\s+)?"
    r"(?:next\s+step|stretch|step\s+up|natural|ambitious|optimistic|big\s+ask|challenge)\b",
    re.IGNORECASE,
)
# "registered for fifteen", "chartered for eight": a duration with its unit left off
_REGISTERED_FOR = re.compile(
    r"\b(?:registered|chartered|qualified|licen[cs]ed|certified|accredited|practi[cs]ing)\s+"
    r"(?:[\w-]+\s+){0,3}?for\s+(?:over\s+|about\s+|nearly\s+|almost\s+)?$",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"\"([^\"\n]{2,400})\"|(?<![\w])'([^'\n]{3,400}?)'(?![\w])")
_ELLIPSIS = re.compile(r"\.\.\.+|\[\.\.\.\]")
_QUOTE_TRIM = " \t\n.,;:!?\"'"
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
    # "to a degree", "a high degree": an extent; "a degree in surveying" is a claim
    "degree": re.compile(
        r"\b(?:to\s+(?:a|what)|some|certain|large|great|high|lesser|varying)\s+$", re.I
    ),
}
_OUT_OF_AFTER = re.compile(r"\s*(?:/|out\s+of\b|of\b)\s*\d", re.IGNORECASE)
_OUT_OF_BEFORE = re.compile(r"\d\s*(?:/|out\s+of|of)\s*$", re.IGNORECASE)
_A_BEFORE = re.compile(r"\b(?:an?|score:?)\s+(?:[a-z]+\s+)?$|\(\s*$", re.IGNORECASE)
_SENTENCE_OPENERS = ":;(\"'[/"


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
    negated = Mask(size, _negated_spans(rationale))
    quotes = list(_QUOTED.finditer(rationale))
    # a protected reference's own words are not claims (its flag says what is wrong); the
    # other claims of its clause still are ("at 52 he closed 128% of quota in 2023")
    tokens = tokenize(rationale)
    # nor are a name spelled out for the resume's acronym, a nationality or a law's name
    other_forms = not_claim_spans(input_text, rationale)
    context = Context(
        rationale,
        facts,
        negated,
        Mask(size, (m.span() for m in quotes)),
        Mask(size, [*not_claims, *other_forms]),
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
    problems.extend(unsupported_changes(context))
    problems.extend(unsupported_pairs(context))
    problems.extend(_unsupported_terms(context, criterion_words))
    problems.extend(misattributed(context))
    problems.extend(claimed_as_held(context))  # a credential the resume has in progress
    problems.extend(unsupported_credentials(context))  # one described in plain words
    problems.extend(unsupported_languages(context))  # "fluent in Italian"
    problems.extend(unsupported_scope(context))  # "every concert hall in the county"
    return problems


def _negated_spans(text: str) -> list[tuple[int, int]]:
    """The stretches of text whose claims are negated or hedged.

    A negation or hedge reaches from its cue to the end of its clause ("no AWS or GCP work");
    an absence stated after the claims reaches back to the start of the clause ("Kubernetes and
    Helm are not listed"). "She is 45 and may not want..." negates nothing before "not".
    """
    spans: list[tuple[int, int]] = []
    for start, end in clause_spans(text):
        if _MODAL_PREDICATE.search(text, start, end):
            # "a Band 8a post would be the next step": the clause's subject is hypothetical
            spans.append((start, end))
            continue
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


_AT_LEAST_AFTER = re.compile(r"\s*\+", re.IGNORECASE)
# "Team leadership - 4", "data_analysis: 5"; the dash of a range ("Levels 1-4") is no label's
_LABEL_BEFORE = re.compile(r"(?:^|\n)[^\n]{1,40}(?:[:=]|(?<!\d)-)\s*$")
_SHARE_POINTS = 3.0
# a total given with its parts: "thirteen staff, eleven teachers and two technicians"
_PARTS_REACH = 80
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
    unit = said_unit = next(iter(words_after(text, end, 1)), None)
    if staff_form_grounded(facts.units, values, text, end):
        return True  # "fourteen reception staff" for "14 receptionists": the staff form
    if total_grounded(facts.text, values, text, end):
        return True  # "fifteen staff" for "9 climbers and 6 ground staff" on one resume line
    if unit is not None and (unit not in facts.unit_words or unit in PEOPLE_IN_GENERAL):
        # a unit the resume never counts, or one that counts any people ("nine staff" for
        # "9 nurses and support workers"): the value alone decides
        unit = None

    if all(is_year(value) for value in values):
        unit = None  # a year: "a 2012 graduate" for "(2012)"

    def fits(resume_value: float) -> bool:
        return unit is None or unit in facts.units.get(resume_value, ())

    candidates = [r for r in facts.values if fits(r)]
    if said_unit is not None and said_unit != "%":
        # "9 design engineers" is no "9%": a figure the resume gives only as a percentage
        # grounds no count of things
        shares = percent_only(facts.text)
        candidates = [r for r in candidates if r not in shares]
    if AT_LEAST_BEFORE.search(before) or _AT_LEAST_AFTER.match(text, end):
        # a year is no count: "over 2,000 approaches" is not borne out by "(2016-2021)"
        counts = [r for r in candidates if not is_year(r)]
        return any(v <= r <= 3 * v for v in values for r in counts)
    # "a couple of dozen" is itself an approximation
    approximate = APPROX_BEFORE.search(before) or text[start:end].lower().startswith("a couple")
    tolerance = APPROX_TOLERANCE if approximate else 0.0
    if any(same_value(v, r, tolerance) for v in values for r in candidates):
        return True
    # "down by seventeen days" for 48 -> 31 days: a difference of two figures on one line;
    # "cut by about 40%" for 110 -> 64 days: the share of the larger one it takes off
    if _CHANGE_BEFORE.search(before):
        percent = bool(PERCENT_AFTER.match(text, end))
        points = _SHARE_POINTS if tolerance else 1.0  # "about 40%" for 110 -> 64 (41.8%)
        # the two figures are of the thing that changed: a line sharing a word with the
        # sentence ("grew direct bookings by about 60%" is no "cut check-in from 7 to 3")
        said = sentence_words(text, start)
        return any(
            same_value(v, abs(a - b))
            or (percent and abs(v - 100 * abs(a - b) / max(a, b)) <= points)
            for v in values
            for line, words in zip(facts.line_values, facts.line_words, strict=True)
            if not said or said & words
            for i, a in enumerate(line)
            for b in line[i + 1 :]
        )
    return False


def _unsupported_numbers(context: Context, score: int) -> list[str]:
    """Each number the resume does not hold: digits in any spelling ("5k", "5,000", "£1.5M"),
    spelled-out counts ("twelve engineers") and durations ("over a decade")."""
    text, facts = context.text, context.facts
    problems: list[str] = []
    named = Mask(len(text), ((a, b) for _, a, b in context.hits))
    by_span: dict[tuple[int, int], list[Quantity]] = {}
    for quantity in quantities(text):
        by_span.setdefault((quantity.start, quantity.end), []).append(quantity)
    proportions = _grounded_proportions(facts, text, by_span)
    totals = _totals_with_parts(text, by_span)
    for (start, end), found in by_span.items():
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        if (start, end) in proportions:
            continue  # "three in four appeals won" for 31 of 40
        if (start, end) in totals:
            continue  # "five people, three apprentices and two improvers": its parts are checked
        if named.touches(start, end):
            continue  # part of a name the lexicon knows: "Google Analytics 4", "Unreal Engine 5"
        first = found[0]
        if first.spelled and context.protected.touches(start, end):
            continue  # "thirty-something": the protected reference's own words
        values = [q.value for q in found]
        duration = first.decades or bool(DURATION_AFTER.match(text, end))
        duration = duration or bool(_REGISTERED_FOR.search(text, max(0, start - 48), start))
        # "sixteen years in water treatment, nine running the works": the unit is understood
        duration = duration or understood_duration(text, start, end)
        # "two" and "three" are usually counted off the resume's own list ("two certifications",
        # "three patents"); a larger spelled count is a figure, and so is a spelled difference
        not_a_count = first.value < 4 or bool(NOT_A_COUNT_AFTER.match(text, end))
        if first.spelled and not duration and not_a_count and not _POINTS_AFTER.match(text, end):
            continue
        level = level_grounded(facts.text, text, start, values)
        if level is not None:
            if level:
                continue  # "Level 3" for the resume's "Levels 1-3"
        elif duration:
            if grounded_duration(facts, first.value, text, start, end):
                continue
        elif _POINTS_AFTER.match(text, end):
            if any(number_key(f"{v:.1f}") in facts.differences for v in values):
                continue  # "up 9 points" for 82% -> 91%
            if POINT_NOUN.match(text, end) and _grounded_value(facts, values, text, start, end):
                continue  # "forty point machines": a count of a thing named "point ..."
        elif _grounded_value(facts, values, text, start, end) and not total_said_as_rate(
            facts.text, values, text, end
        ):
            continue
        before = text[max(0, start - 24) : start]
        is_score = first.value == score and not first.spelled
        if is_score and (
            _SCORE_BEFORE.search(before) or _A_BEFORE.search(before) or _LABEL_BEFORE.search(before)
        ):
            continue  # "scores 4", "a 4", "(4)", "Team leadership - 4", "data_analysis: 5"
        if _OUT_OF_AFTER.match(text, end) or _OUT_OF_BEFORE.search(before):
            continue  # the scale: "4 of 5", "4/5"
        if counts_a_list(facts.text, first.value, text, end):
            continue  # "four qualifications" for the four lines under QUALIFICATIONS
        if total_said_as_rate(facts.text, values, text, end):
            problems.append(f"a total in the resume said as a rate: {text[start:end]!r}")
            continue
        problems.append(f"number not in the resume: {text[start:end]!r}")
    return problems


def _totals_with_parts(
    text: str, by_span: Mapping[tuple[int, int], Sequence[Quantity]]
) -> set[tuple[int, int]]:
    """The spans of numbers that the next two or more numbers of their sentence add up to, said
    within a short reach ("leads 13 staff: 11 teachers and 2 technicians"); the parts are claims
    of their own."""
    spans = sorted(by_span)
    found: set[tuple[int, int]] = set()
    for i, (start, end) in enumerate(spans):
        total = by_span[(start, end)][0].value
        running = 0.0
        for count, part in enumerate(spans[i + 1 :], start=1):
            if part[0] - end > _PARTS_REACH or "." in text[end : part[0]]:
                break
            running += by_span[part][0].value
            if count >= 2 and same_value(total, running):
                found.add((start, end))
                break
            if running > total:
                break
    return found


_PROPORTION_BETWEEN = re.compile(r"\s+(?:in|out\s+of)\s+(?:every\s+)?$", re.IGNORECASE)
_PROPORTION_SLACK = 0.05  # "roughly three in four" for 31 of 40 (0.775)


def _grounded_proportions(
    facts: InputFacts, text: str, by_span: Mapping[tuple[int, int], Sequence[Quantity]]
) -> set[tuple[int, int]]:
    """The spans of the two numbers of each proportion ("three in four", "one out of every
    five") that a pair of the resume's figures on one line gives (31 of 40), closely, or within
    a few points after an approximation ("roughly", "about")."""
    spans = sorted(by_span)
    found: set[tuple[int, int]] = set()
    shares: list[float] | None = None  # the resume's, made once and only when needed
    for first, second in pairwise(spans):
        if not _PROPORTION_BETWEEN.search(text[first[1] : second[0]]):
            continue
        part, whole = by_span[first][0].value, by_span[second][0].value
        if not 0 < part <= whole:
            continue
        ratio = part / whole
        hedged = APPROX_BEFORE.search(text[max(0, first[0] - 24) : first[0]])
        slack = _PROPORTION_SLACK if hedged else 0.01
        if shares is None:
            shares = [a / b for line in facts.line_values for a in line for b in line if 0 < a < b]
            # "seven in ten" for 71%: a share the resume gives in per cent
            shares.extend(p / 100 for p in _percentages(facts.text))
        if any(abs(r - ratio) <= slack for r in shares):
            found.update((first, second))
    return found


@lru_cache(maxsize=512)
def _percentages(resume: str) -> tuple[float, ...]:
    return tuple(float(m.group(1)) for m in _PERCENT.finditer(resume) if float(m.group(1)) <= 100)


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|per\s*cent\b)", re.IGNORECASE)


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


def _graded(facts: InputFacts, acronym: str) -> bool:
    """Whether the resume gives a grade of membership of the body: MICE (Member of the ICE),
    FCMI (Fellow of the CMI), AMIMechE."""
    key = lookup_key(acronym)
    return any(grade + key in facts.words for grade in ("m", "f", "a", "am"))


_NAME_BEFORE = re.compile(r"\b[A-Z][\w/-]*")
_CREDENTIAL_REACH = 4  # words before "certificate" that may name its credential


def _of_a_named_credential(facts: InputFacts, text: str, start: int) -> bool:
    """Whether a name the resume gives stands within a few words before ``start``."""
    words = text[max(0, start - 80) : start].split()[-_CREDENTIAL_REACH:]
    return any(_word_in(facts, name) for name in _NAME_BEFORE.findall(" ".join(words)))


def _is_acronym(word: str) -> bool:
    bare = word[:-1] if word.endswith("s") and word[:-1].isupper() else word
    return bare.isalpha() and bare.isupper() and 2 <= len(bare) <= 6


def _unsupported_terms(context: Context, criterion_words: frozenset[str]) -> list[str]:
    text, facts = context.text, context.facts
    lexicon = grounding_lexicon()
    tokens = context.tokens
    problems: list[str] = []
    hits = context.hits
    covered = Mask(len(text), ((start, end) for _, start, end in hits))
    for group, start, end in hits:
        if context.quoted.covers(start, end) or context.negated.covers(start, end):
            continue
        if context.protected.covers(start, end):
            continue  # part of a name spelled out for the resume's short form, or the like
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
            # "the SMSTS certificate", "the Lantra tree inspection certificate": the word of a
            # credential the resume names, not a credential of its own
            grounded = facts.has_certification or _of_a_named_credential(facts, text, start)
        else:
            implied_by = lexicon.groups[group].implied_by
            grounded = group in facts.groups or bool(implied_by & facts.groups)
        said = text[start:end]
        # two letters are the initials of too many word pairs ("Managed a" is no "MA")
        short = len(said.rstrip("s")) < 3
        if (
            not grounded
            and not short
            and _is_acronym(said)
            and spelled_out(facts, said.rstrip("s"))
        ):
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
            if _is_acronym(bare) and len(bare) >= 3 and _graded(facts, bare):
                continue  # "chartered with the ICE" for "MICE", "the CMI" for "FCMI"
            problems.append(f"not in the resume: {part!r}")
    return problems
