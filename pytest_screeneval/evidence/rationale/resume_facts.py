"""What a resume offers to ground a rationale's claims: its words, numbers, terms and initials.

The grounding lexicon (``data/grounding.yaml``, whose header says the format) is read once; a
resume's facts are computed once per resume text (one resume, many criteria). The claims
themselves are checked in :mod:`pytest_screeneval.evidence.rationale.grounding`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache, lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from pytest_screeneval.evidence.rationale.quantities import quantities
from pytest_screeneval.evidence.rationale.text import casefold_text, normalise

__all__ = [
    "DOTNET",
    "NUMBER",
    "PART_WITH_SEPARATOR",
    "InputFacts",
    "Lexicon",
    "Section",
    "grounding_lexicon",
    "input_facts",
    "is_year",
    "lexicon_hits",
    "lookup_key",
    "number_key",
    "number_words",
    "spelled_out",
    "tokenize",
    "unit_stem",
    "words_after",
]

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
class Lexicon:
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
def grounding_lexicon() -> Lexicon:
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(LEXICON_FILE.read_text(encoding="utf-8"), Loader=loader)
    folded: dict[tuple[str, ...], str] = {}
    exact: dict[tuple[str, ...], str] = {}
    groups: dict[str, _Group] = {}
    for name, entry in data["groups"].items():
        groups[name] = _Group(name, frozenset(entry.get("grounded_by", ())))
        for alias in entry.get("aliases", ()):
            folded[tuple(lookup_key(t) for t in alias.split())] = name
        for alias in entry.get("exact", ()):
            exact[tuple(alias.split())] = name
    longest_from: dict[str, int] = {}
    for alias in (*folded, *(tuple(lookup_key(w) for w in k) for k in exact)):
        longest_from[alias[0]] = max(longest_from.get(alias[0], 0), len(alias))
    return Lexicon(
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
def lookup_key(token: str) -> str:
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
PART_WITH_SEPARATOR = re.compile(r"([-/])")
_LETTER_WORDS = re.compile(r"[A-Za-z]+")
DOTNET = re.compile(r"(?<![\w.])\.net\b", re.IGNORECASE)


class _Token(NamedTuple):
    # A NamedTuple, not a dataclass: a resume has hundreds of tokens, made on every new text.
    text: str
    start: int
    end: int


def tokenize(text: str) -> list[_Token]:
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
    lexicon = grounding_lexicon()
    hits: list[tuple[str, int, int, int, int]] = []
    keys = [lookup_key(t) for t in texts]
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
                    group = lexicon.exact.get((part,)) or lexicon.folded.get((lookup_key(part),))
                    if group:
                        hits.append((group, i, i, offset, offset + len(part)))
                    offset += len(part) + 1
            matched = 1
        i += matched
    return hits


def lexicon_hits(text: str, tokens: Sequence[_Token]) -> list[tuple[str, int, int]]:
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
NUMBER = re.compile(r"(?<![\w.])(?>(\d+(?:[.,]\d+)*))(?>([kmb]n?|bn|x)?)(?![\w/])", re.I)
_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PRESENT = re.compile(r"\b(?:present|current|now|today|ongoing|date)\b", re.IGNORECASE)
_COMPOUND_UNIT = re.compile(r"[- ](one|two|three|four|five|six|seven|eight|nine)\b", re.I)
_UNIT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9}  # fmt: skip


def number_key(raw: str) -> str:
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
    values: frozenset[float] = frozenset()  # every quantity's value ("5k" and "5,000": 5000)
    # the values on each line, for a claimed change ("doubled": 1,200 -> 2,400 on one line)
    line_values: tuple[tuple[float, ...], ...] = ()
    line_words: tuple[frozenset[str], ...] = ()  # the words of each of those lines
    sections: tuple[Section, ...] = ()  # each employer's lines, for facts attributed to one
    units: Mapping[float, frozenset[str]] = field(default_factory=dict)  # value -> words after
    unit_words: frozenset[str] = frozenset()  # every word that follows a number in the resume


@dataclass(frozen=True)
class Section:
    """One employer's part of a resume: its heading line and the lines under it."""

    names: frozenset[str]  # the employer's distinctive words, as written ("Northwind")
    title: frozenset[str]  # lookup keys of the job title's words ("maths", "lead")
    words: frozenset[str]  # lookup keys of every word in it
    values: frozenset[float]
    groups: frozenset[str]
    # how long the job lasted, in years, from its heading's dates ("(2019-Present)": this year
    # less 2019, give or take one); empty when the heading gives none
    lengths: frozenset[int] = frozenset()
    current: bool = False  # its dates run to the present ("(2019-Present)")


def _words_and_groups(text: str, folded: str) -> tuple[set[str], set[str]]:
    """A text's words in lookup form and the lexicon groups it names."""
    lexicon = grounding_lexicon()
    # Whole tokens ("B.Sc", "scikit-learn"), their hyphen/slash parts (as the rationale's lexicon
    # reads them) and their bare alphanumeric runs: every way a word can be looked up.
    tokens = _TOKEN.findall(text)
    pieces = set(tokens)
    for token in tokens:
        if not token.isalnum():  # the few with punctuation inside: add their parts
            pieces.update(_HYPHEN_OR_SLASH.split(token))
            pieces.update(_ALNUM_RUNS.findall(token))
    words = {lookup_key(piece) for piece in pieces}
    exact = lexicon.exact
    groups = {exact[(p,)] for p in lexicon.exact_first.intersection(pieces) if (p,) in exact}
    # Every one-word alias, then every longer alias the folded text contains: a superset of the
    # longest-match reading, so a match across a line break ("Ruby" / "on Rails") hides nothing.
    groups.update(lexicon.folded[(word,)] for word in words if (word,) in lexicon.folded)
    for first, phrase, pattern, group in lexicon.phrases:
        if first in words and phrase in folded and pattern.search(folded):
            groups.add(group)
    return words, groups


# A job's heading: "Title, Employer (2019-Present)"; the employer is what follows the first comma,
# a remark in brackets allowed ("Halloway & Crane Pianos (family-owned), Meresby (2015-Present)").
_HEADING = re.compile(
    r"^[^\S\n]*[^,\n]+,[^\S\n]+(?P<employer>[^()\n]+?(?:\([^()\n]*\)[^()\n]*?)?)"
    r"[^\S\n]*\(\s*(?:19|20)\d\d\s*-",
    re.MULTILINE,
)
_SECTION_TITLE = re.compile(r"^[^\S\n]*[A-Z][A-Z &/()-]{3,}[^\S\n]*$", re.MULTILINE)
_NAME_WORD = re.compile(r"[A-Z][\w'&.-]*")
# Words of an employer's name that do not tell employers apart.
_GENERIC_NAME_WORDS = frozenset(
    [
        "The",
        "Of",
        "And",
        "For",
        "At",
        "In",
        "Ltd",
        "LLP",
        "LLC",
        "Inc",
        "Plc",
        "PLC",
        "Co",
        "Group",
        "Trust",
        "Hospital",
        "Hospitals",
        "School",
        "University",
        "College",
        "Council",
        "County",
        "Borough",
        "Health",
        "Partners",
        "Services",
        "Software",
        "Media",
        "Bank",
        "Society",
        "Centre",
        "Center",
        "Digital",
        "Labs",
        "Lab",
        "Studio",
        "Agency",
        "Consulting",
        "Solutions",
        "Systems",
        "Technologies",
        "Technology",
        "Tech",
        "Retail",
        "Foods",
        "Engineering",
        "Interactive",
        "Mobile",
        "Travel",
        "Energy",
        "Insurance",
        "Payments",
        "Analytics",
        "Health",
        "Care",
        "Community",
        "Academy",
        "High",
        "Primary",
        "Infant",
        "IT",
        "CE",
        "Laboratory",
        "Diagnostics",
        "Search",
        "Solicitors",
        "Interiors",
        "Build",
        "Pumps",
        "Marine",
        "Games",
        "Charity",
        "Family",
        "Water",
        "Broadband",
        "Credit",
        "Union",
        "Building",
        "Chemists",
        "Pharmacy",
        "Outdoor",
        "Cosmetics",
        "Grocers",
        "Parcels",
        "Distribution",
        "Hotels",
        "Aerostructures",
        "Freight",
        "St",
        "Church",
        "Club",
        "Youth",
        "Football",
        "Association",
        "Foundation",
        "Institute",
        "Network",
    ]
)


_JOB_DATES = re.compile(
    r"\(\s*((?:19|20)\d\d)\s*[-\u2013]\s*((?:19|20)\d\d|present|current|now|date)\s*\)",
    re.IGNORECASE,
)


def _job_lengths(heading_line: str, now: int) -> frozenset[int]:
    dates = _JOB_DATES.search(heading_line)
    if dates is None:
        return frozenset()
    first, last = int(dates.group(1)), dates.group(2)
    if last.isdigit():
        return frozenset({int(last) - first})
    return frozenset(d for d in (now - first, now - first - 1) if d >= 0)


def _sections(text: str, now: int) -> tuple[Section, ...]:
    """Each employer's heading and lines, up to the next heading or section title."""
    headings = list(_HEADING.finditer(text))
    titles = [m.start() for m in _SECTION_TITLE.finditer(text)]
    sections: list[Section] = []
    for number, heading in enumerate(headings):
        start = heading.start()
        ends = [h.start() for h in headings[number + 1 :]] + [t for t in titles if t > start]
        end = min(ends, default=len(text))
        body = text[start:end]
        names = frozenset(
            word.rstrip(".")
            for word in _NAME_WORD.findall(heading.group("employer"))
            if word.rstrip(".").removesuffix("'s") not in _GENERIC_NAME_WORDS and len(word) > 2
        )
        if not names:
            continue
        words, groups = _words_and_groups(body, casefold_text(body))
        values = frozenset(q.value for q in quantities(body))
        title_text = heading.group(0).split(",", 1)[0]
        title = frozenset(lookup_key(w) for w in _ALNUM_RUNS.findall(title_text))
        heading_line = text[start : text.find("\n", start) if "\n" in text[start:] else len(text)]
        lengths = _job_lengths(heading_line, now)
        dates = _JOB_DATES.search(heading_line)
        current = dates is not None and not dates.group(2).isdigit()
        sections.append(
            Section(names, title, frozenset(words), values, frozenset(groups), lengths, current)
        )
    return tuple(sections)


@lru_cache(maxsize=512)
def input_facts(input_text: str, this_year: int | None = None) -> InputFacts:
    """Everything grounding needs to know about one resume; cached (one resume, many criteria)."""
    lexicon = grounding_lexicon()
    text = normalise(input_text)
    folded = casefold_text(text)
    words, groups = _words_and_groups(text, folded)
    number_texts = _ANY_NUMBER.findall(text)
    numbers = {number_key(raw) for raw in number_texts}
    percents = [float(v) for v in _PERCENT.findall(text)]
    differences = {number_key(f"{abs(a - b):.1f}") for a in percents for b in percents if a != b}
    numbers.update(str(value) for value in _number_word_values(words, folded))
    years = sorted({int(raw) for raw in number_texts if len(raw) == 4 and "1950" <= raw < "2050"})
    durations = {abs(a - b) for a in years for b in years if a != b}
    if years and _PRESENT.search(text):
        now = this_year or date.today().year
        durations.update(d for y in years for d in (now - y, now - y - 1) if d > 0)
    if ".net" in folded and DOTNET.search(text):
        groups.add("dotnet")
    has_certification = bool(groups & (lexicon.certification_groups | {"certification"})) or any(
        w.startswith(("certif", "licen")) for w in words
    )
    found = quantities(text)
    values = {q.value for q in found}
    # each value with the words after it ("2,400 requests per second"), for a claim's unit
    # each value with the words of its line ("a subcontractor panel of 40 firms"), so a claim's
    # unit can be looked for beside the figure
    units: dict[float, set[str]] = {}
    for line in text.splitlines():
        # a joined word is each of its parts too: "a two-year contract" counts years
        line_words = {
            unit_stem(part)
            for word in _UNIT_WORD.findall(line)
            for part in {word, *word.split("-")}
            if part
        } - _NOT_UNITS
        for quantity in quantities(line):
            units.setdefault(quantity.value, set()).update(line_words)
    figured_lines = [
        (figures, line)
        for line in text.splitlines()
        if len(figures := tuple(q.value for q in quantities(line) if not is_year(q.value))) >= 2
    ]
    line_values = tuple(figures for figures, _ in figured_lines)
    words_by_line = tuple(
        frozenset(unit_stem(w) for w in _UNIT_WORD.findall(line) if len(w) >= 4)
        for _, line in figured_lines
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
        values=frozenset(values),
        line_values=line_values,
        line_words=words_by_line,
        sections=_sections(text, this_year or date.today().year),
        units={value: frozenset(words) for value, words in units.items()},
        unit_words=frozenset(word for words in units.values() for word in words),
    )


_UNIT_WORD = re.compile(r"%|[A-Za-z][A-Za-z-]*")
_NOT_UNITS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "at",
        "on",
        "and",
        "or",
        "per",
        "from",
        "for",
        "by",
        "with",
        "over",
        "more",
        "than",
        "up",
        "down",
        "about",
        "around",
        "million",
        "thousand",
        "billion",
        "k",
        "m",
        "each",
        "every",
        "is",
        "was",
        "were",
        "are",
    ]
)


def unit_stem(word: str) -> str:
    """A word without its plural ending: "classes" and "class", "jabs" and "jab" are one; a unit's
    symbol is its name ("12 Ml/d" and "twelve megalitres a day", "t/ha" and "tonnes")."""
    if word == "Ml":
        return "megalitre"  # "ml" is a millilitre
    word = word.lower()
    if word in ("percent", "pc"):
        return "%"
    if word in _UNIT_SYMBOLS:
        return _UNIT_SYMBOLS[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


# a unit's symbol or spelling and the name it is counted by (after the plural ending is gone)
_UNIT_SYMBOLS = {
    "megaliter": "megalitre",
    "megaliters": "megalitre",
    "km": "kilometre",
    "kms": "kilometre",
    "kilometer": "kilometre",
    "kilometers": "kilometre",
    "ha": "hectare",
    "t": "tonne",
    "ton": "tonne",
    "tons": "tonne",
    "kg": "kilogram",
    "kgs": "kilogram",
    "kilo": "kilogram",
    "kilos": "kilogram",
    "mw": "megawatt",
    "kw": "kilowatt",
    "min": "minute",
    "mins": "minute",
    "yr": "year",
    "yrs": "year",
}

_NEXT_WORD = re.compile(r"[^\S\n]*(?:[-+]\s*)?(%|[a-z][a-z-]*)")


def words_after(text: str, end: int, count: int = 1) -> list[str]:
    """The unit of a number: the lower-case word right after it ("2.4k requests"), or nothing
    when a preposition, a name or punctuation comes first."""
    match = _NEXT_WORD.match(text, end)
    if match is None or match.group(1) in _NOT_UNITS:
        return []
    return [unit_stem(match.group(1))][:count]


def is_year(value: float) -> bool:
    """Whether a figure reads as a year ("(2016-2021)", "a 2012 graduate"), not a count."""
    return value.is_integer() and 1950 <= value < 2050


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


def spelled_out(facts: InputFacts, acronym: str) -> bool:
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


def number_words(text: str) -> list[tuple[int, int, int]]:
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
