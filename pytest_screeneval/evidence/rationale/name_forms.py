"""Capitalised words of a rationale that are not claims for grounding to check word by word.

- A name spelled out where the resume gives its initials: "Member of the Institution of Civil
  Engineers" for "MICE", "Scientist Training Programme" for "STP", "Health and Care Professions
  Council" for "HCPC". The initials of the capitalised words (small joining words such as "of",
  "the", "and" left out) must spell a short form the resume writes: an acronym in capitals, a
  mixed-case one ("PGCert", "MChem") or, for a name of three words or more, a title-case one
  ("Acas"). A word may give more than its initial: each capitalised part of a hyphenated word
  ("Multi-Agency Risk Assessment Conference" for "MARAC"), the initial of the word after a
  prefix such as "post" ("Postgraduate Certificate in Education" for "PGCE"), or its first
  three letters or more ("Postgraduate Certificate" for "PGCert").
- A nationality or demonym ("Romanian", "South Asian"): it says who someone is, not a product,
  employer or credential, so it is never a grounding claim; said of the candidate it is the
  protected-attribute flag's business ("being Filipino herself"), said of the people of the
  work ("most of the pickers are Romanian") it is no claim at all. The words come from the
  protected lexicon's ``demonyms`` fragment, so the two checks agree on them.
- A law's name ("the Equality Act", "the Care Act 2014"): a field of knowledge, like the
  practices ``grounding.yaml`` lists as concepts, not a credential or a tool.
- A holiday or season of the calendar ("the New Year peak", "Bank Holiday cover"): a time of
  the work.

Pure: text in, spans out; the resume's acronyms are read once per resume text.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from pytest_screeneval.evidence.rationale.places import place_spans
from pytest_screeneval.evidence.rationale.protected import builtin_fragment

__all__ = ["not_claim_spans", "resume_acronyms"]

_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
# a short form in mixed case ("PGCert", "MChem", "NVQs") or title case ("Acas")
_SHORT_FORM = re.compile(r"\b(?:[A-Z]{1,4}[a-z]{1,5}[A-Z]?[a-z]{0,3}|[A-Z][a-z]{2,4})\b")
# A run of capitalised words, joined by spaces (or a comma) and, between them, small words or "&".
_CAPITAL_RUN = re.compile(
    r"\b[A-Z][\w'-]*(?:,?\s+(?:(?:of|the|and|for|in|on|&)\s+)*[A-Z][\w'-]*)+",
)
# "Postgraduate" gives P and G: a prefix whose remainder is a word of its own
_PREFIXES = ("post", "under", "multi", "inter", "trans", "super", "sub", "non", "co")
_MIN_PREFIX = 3  # a word may give its first letters: "Cert" of "Certificate" in "PGCert"
_CAPITAL_WORD = re.compile(r"\b[A-Z][\w'-]*")
_TITLE_WORD = re.compile(r"\b[A-Z][a-z]+(?:-[A-Z]?[a-z]+)*\b")
_LAW = re.compile(r"\b(?:[A-Z][a-z]+\s+){1,4}Act\b(?:\s+(?:19|20)\d\d\b)?")
# a holiday or season of the calendar named in capitals ("the Christmas and New Year peak", "Bank
# Holiday cover"): a time of the work, not a product, employer or credential
_OCCASION = re.compile(
    r"\b(?:(?:Lunar\s+|Chinese\s+)?New\s+Year(?:'s)?(?:\s+(?:Eve|Day))?|Boxing\s+Day"
    r"|Good\s+Friday|Easter\s+(?:Monday|Sunday|Weekend|Holidays?)|Christmas\s+(?:Eve|Day)"
    r"|Bank\s+Holidays?|Half[-\s]Term|Hogmanay|Halloween|Bonfire\s+Night|Whitsun"
    r"|Burns\s+Night|St\.?\s+(?:Patrick|David|Andrew|George)'s\s+Day)\b"
)
_LONGEST_NAME = 8  # capitalised words in a spelled-out name, at most


@lru_cache(maxsize=512)
def resume_acronyms(input_text: str) -> frozenset[str]:
    """The resume's words in capitals, two to six letters ("MICE", "STP", "EWM")."""
    return frozenset(_ACRONYM.findall(input_text))


# The resume's short forms, lower-cased, by their first letter: those a name of one or two words
# may spell (acronyms and mixed-case ones), and those a longer name may (title-case ones too).
_FormsByInitial = tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]


@lru_cache(maxsize=512)
def _short_forms(input_text: str) -> _FormsByInitial:
    mixed = {a.lower() for a in resume_acronyms(input_text)}
    title: set[str] = set()
    for word in _SHORT_FORM.findall(input_text):
        capitals = sum(c.isupper() for c in word)
        (mixed if capitals >= 2 else title).add(word.lower())
    return _by_initial(mixed), _by_initial(mixed | title)


def _by_initial(forms: set[str]) -> dict[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    for form in sorted(forms):
        grouped.setdefault(form[:1], []).append(form)
    return {initial: tuple(group) for initial, group in grouped.items()}


@lru_cache(maxsize=8192)
def _word_letters(word: str) -> tuple[str, ...]:
    """What one word may give a short form: its initial, the initials of its capitalised
    hyphen parts or of the word after a prefix, and its first three letters or more."""
    lower = word.lower().rstrip("'s")
    options = {lower[:1]}
    parts = [p for p in word.split("-") if p[:1].isupper()]
    if len(parts) > 1:
        options.add("".join(p[0] for p in parts).lower())
    for prefix in _PREFIXES:
        if lower.startswith(prefix) and len(lower) - len(prefix) >= 4:
            options.add(lower[0] + lower[len(prefix)])
    options.update(lower[:n] for n in range(_MIN_PREFIX, len(lower) + 1))
    return tuple(options)


def _spells(form: str, words: tuple[str, ...]) -> bool:
    """Whether the words, each giving one of its letter options in turn, spell ``form``."""
    if not words:
        return not form
    return any(
        form.startswith(option) and _spells(form[len(option) :], words[1:])
        for option in _word_letters(words[0])
    )


@cache
def _demonyms() -> re.Pattern[str]:
    return re.compile(rf"(?:{builtin_fragment('demonyms')})s?", re.IGNORECASE)


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


def _spelled_acronyms(text: str, forms: _FormsByInitial) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if not forms[1]:
        return spans
    for run in _CAPITAL_RUN.finditer(text):
        # only words in title case spell initials: "S7 and Allen-Bradley PLCs" is not "SAP"
        words: list[re.Match[str]] = []
        for word in [*_CAPITAL_WORD.finditer(text, run.start(), run.end()), None]:
            if word is not None and _TITLE_WORD.fullmatch(word.group(0)):
                words.append(word)
                continue
            spans.extend(_initials_spelled(words, forms))
            words = []
    return spans


def _initials_spelled(words: list[re.Match[str]], forms: _FormsByInitial) -> list[tuple[int, int]]:
    """Each stretch of the words that spells one of the resume's short forms."""
    if len(words) > _LONGEST_NAME:
        return []
    short_names, long_names = forms
    spans: list[tuple[int, int]] = []
    for first, word in enumerate(words):
        # a form spelled from this word starts with its first letter: only those are tried
        initial = word.group(0)[:1].lower()
        shorter, longer = short_names.get(initial, ()), long_names.get(initial, ())
        if not longer:
            continue
        stretch: tuple[str, ...] = ()
        for last in range(first, len(words)):
            stretch = (*stretch, words[last].group(0))
            if len(stretch) == 1 and "-" not in stretch[0]:
                continue  # one plain word is itself, not a spelled-out name
            candidates = shorter if len(stretch) < 3 else longer
            if any(_spells(form, stretch) for form in candidates):
                spans.append((word.start(), words[last].end()))
    return spans


def not_claim_spans(input_text: str, rationale: str) -> list[tuple[int, int]]:
    """Spans of the rationale whose capitalised words are no claims (see the module's doc)."""
    spans = _spelled_acronyms(rationale, _short_forms(input_text))
    spans.extend(_demonym_spans(rationale))
    spans.extend(m.span() for m in _LAW.finditer(rationale))
    spans.extend(m.span() for m in _OCCASION.finditer(rationale))
    spans.extend(place_spans(input_text, rationale))
    return spans
