"""Protected-attribute terms in a rationale: a curated lexicon, matched on words, never substrings.

The lexicon is data: ``data/protected_terms.yaml`` (its header says the format), loaded and
compiled once. A project adds terms for its jurisdiction and language with the ini option
``screeneval_protected_terms = path.yaml`` (a file of the same shape, added to the built-in terms,
or replacing them with ``replace: true``); :func:`load_protected_terms` reads it and the caller
passes the result to :func:`find_protected`.

A rationale must not refer to the candidate's age, graduation year, marital or family status,
pregnancy, disability, national origin or nationality, race or ethnicity, religion, sex, gender or
sexual orientation, or accent (such a flag always fails the item). Each term is a word-bounded
pattern with the contexts that make it innocent: "race condition", "white paper", "Black Friday",
"single sign-on", "native apps", "ageing infrastructure", "children aged 11-14".

Rules that cover whole families of look-alikes (the first in ``work_context.about_a_group``):

- A term that modifies, denotes or is said of a group of people of the work ("older people",
  "Muslim carers", "many of her clients are autistic") or is the object of the work ("visits to
  the gurdwara") is about the work, unless the candidate is named through it ("and so is she").
- A protected word followed, within three words, by a product or audience noun ("marriage-
  counselling app", "the Southeast Asian market") is the domain of the work, not an attribute.
- A term said of a thing of the work named right before it, a version number allowed ("TLS 1.0
  disabled", "the old Jenkins jobs retired"), is about that thing.
- Demonyms ("Nigerian", "Polish", "Asian") count only in a person context ("is Nigerian", "a
  Nigerian national", "Polish background"), so languages ("speaks Polish") and markets do not.

Decisions a reader may not expect, kept on purpose: the candidate's place of worship ("St.
Brendan's Church") is flagged even when the resume lists it (the rationale relies on it); a career
break with no reason given is not (a gap is not an attribute; "parental leave" is); "fluent
Spanish" is not, "native Spanish speaker" is; a negated mention is still a mention.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.rationale.work_context import about_a_group, work_context

__all__ = [
    "ProtectedLexicon",
    "ProtectedMatch",
    "builtin_fragment",
    "builtin_protected_terms",
    "find_protected",
    "load_protected_terms",
]

BUILTIN_FILE = Path(__file__).resolve().parent / "data" / "protected_terms.yaml"
_BEFORE_WINDOW = 48  # how far back ``unless_before`` looks, in characters
_PEOPLE_WINDOW = 80  # how far back the people of the work, described, may stand
_RELATION = re.compile(
    r"(?:her|his|their)\s+(?:own\s+)?(?:wife|husband|girlfriend|boyfriend|partner|spouse|fianc\w*)"
    r"(?:\s+(?-i:[A-Z])[\w-]+)?",  # a first name may follow: "her partner Joanne"
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_GATE_WORD = re.compile(r"[a-z0-9]{2,}")
_WORDS = re.compile(r"[a-z0-9]+")
_TERM_KEYS = frozenset(
    {"category", "gate", "pattern", "unless_before", "unless_after", "about", "phrase"}
)
_PHRASE_KEYS = frozenset({"phrase", "about", "unless_before", "unless_after"})
_FILE_KEYS = frozenset({"replace", "categories", "fragments", "terms", "phrases"})
_ABOUT = ("candidate",)  # what a phrase's ``about`` may say
_PERSON_WINDOW = 72  # how far an ``about: candidate`` phrase looks, each side, for its person
_PERSON = re.compile(
    r"\b(?:she|he|they|her|his|their|him|them|hers|herself|himself|themselves|candidate"
    r"|candidate's|applicant|applicants|someone|somebody|person|people|folks?|lads?|guys?"
    r"|wom[ae]n|m[ae]n)\b",
    re.IGNORECASE,
)
# A clause with no subject that opens on a verb of having, being or telling ("Communication: has
# a noticeable stammer", "mentioned a spell off with anxiety"): in a rationale its subject is
# the candidate, as if "she" or "he" stood there
_CANDIDATE_VERB_OPENING = re.compile(
    r"^\s*(?:[\w' -]{1,40}:\s*)?(?:has|had|is|was|suffers|suffered|mentions|mentioned|says|said"
    r"|discloses|disclosed|admits|admitted)\b",
    re.IGNORECASE,
)
_THEIR_BEFORE = re.compile(r"\btheir\s+(?:\w+\s+)?$", re.IGNORECASE)
_CLAUSE_EDGE = re.compile(r"[.;!?\n]|\s-\s|,\s+(?:but|so|and|which)\b")
_LINE = "__line__"  # where the loader notes the line a mapping starts on


@dataclass(frozen=True)
class ProtectedMatch:
    """One protected-attribute reference: its category, the words matched and where."""

    category: str
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class _Term:
    category: str
    pattern: re.Pattern[str]
    unless_before: re.Pattern[str] | None
    unless_after: re.Pattern[str] | None
    about_candidate: bool = False  # counts only with a person beside it, in its clause


@dataclass(frozen=True, eq=False)
class ProtectedLexicon:
    """The compiled terms, their gate words, and the work-domain rule; build it with
    :func:`builtin_protected_terms` or :func:`load_protected_terms`."""

    terms: tuple[_Term, ...]
    # the terms each gate prefix lets through (a term is tried when a word starts with one)
    gates: Mapping[str, tuple[int, ...]]
    ungated: tuple[int, ...]  # terms tried on every text
    domain_after: re.Pattern[str]
    source: str  # which files it came from, for messages
    # the words before a term that make it about the people or things of the work
    domain_before: re.Pattern[str] | None = None
    # "... of the legacy codebase" after a term: it is about the work
    work_after: re.Pattern[str] | None = None
    longest_gate: int = 0  # the longest gate prefix, in letters
    # people of the work that a later "their" may point back at
    antecedent: re.Pattern[str] | None = None
    # a thing of the work right before a term that is said of it: "TLS 1.0 disabled", "the old
    # Jenkins jobs retired"
    thing_before: re.Pattern[str] | None = None
    # the terms each word lets through, filled as words are met (words repeat across texts)
    word_terms: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class _Source:
    """One lexicon file as written: categories, fragments and terms (each term with its line)."""

    where: str
    replace: bool
    categories: dict[str, str]
    fragments: dict[str, str]
    terms: tuple[dict[str, object], ...]


# --------------------------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------------------------


def find_protected(
    text: str,
    *,
    gated: bool = True,
    lexicon: ProtectedLexicon | None = None,
    innocent: list[tuple[int, int]] | None = None,
) -> list[ProtectedMatch]:
    """Every protected-attribute reference in a (normalised) text, in order of position.

    ``lexicon`` defaults to the built-in terms. ``gated=False`` tries every term regardless of
    its gate words: the same answer, slower; the tests use it to check the gates. ``innocent``,
    when given, receives the spans of the terms found but about the work ("many of her clients
    live with PTSD"): their words are no claims about the resume either.
    """
    lexicon = lexicon or builtin_protected_terms()
    numbers = _candidate_terms(lexicon, text) if gated else range(len(lexicon.terms))
    found: dict[tuple[int, int], ProtectedMatch] = {}
    for number in numbers:
        term = lexicon.terms[number]
        for match in term.pattern.finditer(text):
            start, end = match.span()
            if (start, end) in found:
                continue
            if _innocent(lexicon, term, text, start, end):
                if innocent is not None:
                    innocent.append((start, end))
                continue
            found[(start, end)] = ProtectedMatch(term.category, match.group(0), start, end)
    # one finding per phrase: a match inside a longer one of its category ("age" in "at his
    # age") is the same reference; one of another category ("accent" in "foreign accent") is not
    ordered = sorted(found.values(), key=lambda m: (m.start, -m.end))
    reach: dict[str, int] = {}
    kept: list[ProtectedMatch] = []
    for found_match in ordered:
        if found_match.end <= reach.get(found_match.category, -1):
            continue
        reach[found_match.category] = found_match.end
        kept.append(found_match)
    return kept


def _innocent(lexicon: ProtectedLexicon, term: _Term, text: str, start: int, end: int) -> bool:
    """Whether what stands on either side of a match makes it about the work, not the person."""
    if (group := about_a_group(text, start, end)) is not None:  # the people of the work
        return group
    window = text[max(0, start - _BEFORE_WINDOW) : start]
    people_window = text[max(0, start - _PEOPLE_WINDOW) : start]
    before = term.unless_before
    if before is not None and before.search(window):
        return True
    if term.unless_after is not None and term.unless_after.match(text, end):
        return True
    if lexicon.domain_before is not None and lexicon.domain_before.search(people_window):
        return True
    # "her wife", "his husband": a person, never a modifier of a thing of the work ("she and
    # her wife run ...")
    relation = _RELATION.fullmatch(text, start, end) is not None
    if not relation and lexicon.work_after is not None and lexicon.work_after.match(text, end):
        return True
    if lexicon.thing_before is not None and lexicon.thing_before.search(window):
        return True
    if not relation and _names_the_work(lexicon.domain_after.match(text, end)):
        return True
    their = text[start:end].lower().startswith("their ") or _THEIR_BEFORE.search(window)
    if their and _their_is_others(lexicon, text, start):
        return True
    return term.about_candidate and not _beside_a_person(text, start, end)


def _names_the_work(domain: re.Match[str] | None) -> bool:
    """Whether the words after a term end in a noun of the work it describes: its describing
    words may be a list ("asylum, family reunion and visa appeals"), but a comma with no "and" or
    "or" after it starts another clause ("his back injury, night shifts may be hard")."""
    if domain is None:
        return False
    words = domain.group(0)
    return "," not in words or _LIST_JOIN.search(words) is not None


_LIST_JOIN = re.compile(r"\b(?:and|or)\b", re.IGNORECASE)


def _their_is_others(lexicon: ProtectedLexicon, text: str, start: int) -> bool:
    """Whether "their" at ``start`` points back at people of the work named earlier in its
    sentence ("she keeps parents informed about their children's progress")."""
    if lexicon.antecedent is None:
        return False
    left = text[max(0, start - _PERSON_WINDOW) : start]
    edges = list(re.finditer(r"[.;!?\n]", left))
    if edges:
        left = left[edges[-1].end() :]
    return bool(lexicon.antecedent.search(left))


def _beside_a_person(text: str, start: int, end: int) -> bool:
    """Whether a person (a pronoun, "the candidate", "people") stands in the same clause as the
    match, on either side of it, within a few words."""
    left = text[max(0, start - _PERSON_WINDOW) : start]
    edges = list(_CLAUSE_EDGE.finditer(left))
    if edges:
        left = left[edges[-1].end() :]
    right = text[end : end + _PERSON_WINDOW]
    edge = _CLAUSE_EDGE.search(right)
    if edge:
        right = right[: edge.start()]
    return bool(
        _PERSON.search(left) or _PERSON.search(right) or _CANDIDATE_VERB_OPENING.match(left)
    )


def _candidate_terms(lexicon: ProtectedLexicon, text: str) -> list[int]:
    """Indexes of the terms whose gate words occur in the text, in lexicon order."""
    chosen: set[int] = set(lexicon.ungated)
    known = lexicon.word_terms
    for word in set(_WORDS.findall(text.lower())):
        numbers = known.get(word)
        if numbers is None:
            if len(known) >= _MAX_KNOWN_WORDS:
                known.clear()  # a bound on memory over a long run of varied texts
            numbers = known[word] = _word_terms(lexicon, word)
        chosen.update(numbers)
    return sorted(chosen)


_MAX_KNOWN_WORDS = 100_000


def _word_terms(lexicon: ProtectedLexicon, word: str) -> tuple[int, ...]:
    """The terms a word lets through: those with a gate prefix the word starts with."""
    gates, through = lexicon.gates, set[int]()
    for size in range(2, min(len(word), lexicon.longest_gate) + 1):
        through.update(gates.get(word[:size], ()))
    return tuple(through)


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


@cache
def builtin_protected_terms() -> ProtectedLexicon:
    """The terms shipped with the plugin, compiled once."""
    builtin = _builtin_source()
    return _compile(builtin, builtin.terms, builtin.categories, builtin.fragments)


def load_protected_terms(path: Path, shown_as: str | None = None) -> ProtectedLexicon:
    """The built-in terms plus a user's file (or the file's alone when it says ``replace: true``).

    Every problem with the file is one :class:`ScreenevalError` sentence naming it (``shown_as``,
    else the path) and, where it can, the line.
    """
    builtin = _builtin_source()
    extra = _read(path, shown_as or str(path))
    for kind, ours, theirs in (
        ("category", builtin.categories, extra.categories),
        ("fragment", builtin.fragments, extra.fragments),
    ):
        for name in theirs:
            if name in ours:
                raise _refused(extra.where, None, f"the {kind} {name!r} is already built in")
    terms = extra.terms if extra.replace else (*builtin.terms, *extra.terms)
    return _compile(
        extra,
        terms,
        {**builtin.categories, **extra.categories},
        {**builtin.fragments, **extra.fragments},
    )


@cache
def _builtin_source() -> _Source:
    return _read(BUILTIN_FILE, "the built-in protected terms")


def builtin_fragment(name: str) -> str:
    """A named piece of pattern of the built-in terms ("demonyms"), as the terms read it."""
    return _builtin_source().fragments[name]


# libyaml's parser when PyYAML has it (a seventh of the time); the constructor is the safe one
# either way. (mypy checks against the C loader's class; the fallback has the same interface.)
if TYPE_CHECKING:
    from yaml import CSafeLoader as _SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoader):
    """Notes on each mapping the line it starts on, so a message can point at a term."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping[_LINE] = node.start_mark.line + 1
        return mapping

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> list[object]:
        items = super().construct_sequence(node, deep=deep)
        return [
            _LinedText(item, child.start_mark.line + 1) if isinstance(item, str) else item
            for item, child in zip(items, node.value, strict=True)
        ]


class _LinedText(str):
    """A string from a YAML list that knows its line (for a phrase's error message)."""

    line: int

    def __new__(cls, text: str, line: int) -> _LinedText:
        made = super().__new__(cls, text)
        made.line = line
        return made


def _refused(where: str, line: object, problem: str) -> ScreenevalError:
    at = f", line {line}" if isinstance(line, int) else ""
    return ScreenevalError(f"Cannot use the protected terms in {where}{at}: {problem}.")


def _read(path: Path, where: str) -> _Source:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ScreenevalError(f"Cannot read the protected terms file {where} ({reason}).") from None
    try:
        data = yaml.load(text, Loader=_LineLoader)  # a SafeLoader that notes lines
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise _refused(
            where, mark.line + 1 if mark is not None else None, f"invalid YAML ({problem})"
        ) from None
    if not isinstance(data, dict):
        raise _refused(where, None, "the file must be a mapping with a 'terms' list")
    unknown = sorted(str(key) for key in data if key not in _FILE_KEYS and key != _LINE)
    if unknown:
        raise _refused(where, None, f"unknown key {unknown[0]!r} (expected {_keys(_FILE_KEYS)})")
    replace = data.get("replace", False)
    if not isinstance(replace, bool):
        raise _refused(where, None, "'replace' must be true or false")
    terms = data.get("terms", [] if "phrases" in data else None)
    if not isinstance(terms, list) or not all(isinstance(term, dict) for term in terms):
        raise _refused(where, None, "'terms' must be a list of mappings")
    return _Source(
        where,
        replace,
        _names(data.get("categories"), "categories", where, joined=False),
        _names(data.get("fragments"), "fragments", where, joined=True),
        (*terms, *_phrase_terms(data.get("phrases"), where)),
    )


def _phrase_terms(value: object, where: str) -> list[dict[str, object]]:
    """The ``phrases`` section as terms: each phrase one term of its category, with its line.

    ``phrases`` maps a category to a list; each entry is a phrase in plain words, or a mapping
    with ``phrase`` and optionally ``about: candidate``, ``unless_before``, ``unless_after``.
    """
    if value is None:
        return []
    if not isinstance(value, dict):
        raise _refused(where, None, "'phrases' must map each category to a list of phrases")
    terms: list[dict[str, object]] = []
    for category, entries in value.items():
        if category == _LINE:
            continue
        if not isinstance(entries, list):
            raise _refused(
                where, value.get(_LINE), f"phrases of {category!r} must be a list of phrases"
            )
        for entry in entries:
            line = getattr(entry, "line", None)
            if isinstance(entry, dict):
                line = entry.get(_LINE)
                unknown = sorted(str(k) for k in entry if k not in _PHRASE_KEYS and k != _LINE)
                if unknown:
                    raise _refused(
                        where,
                        line,
                        f"unknown phrase key {unknown[0]!r} (expected {_keys(_PHRASE_KEYS)})",
                    )
                shared: dict[str, object] = {k: v for k, v in entry.items() if k != _LINE}
                phrases = entry.get("phrase")
            else:
                shared = {}
                phrases = entry
            about = shared.get("about")
            if about is not None and about not in _ABOUT:
                raise _refused(where, line, f"'about' must be {' or '.join(_ABOUT)}")
            for phrase in phrases if isinstance(phrases, list) else [phrases]:
                if not isinstance(phrase, str) or not _PHRASE_TEXT.fullmatch(phrase.strip()):
                    raise _refused(
                        where,
                        line,
                        f"phrase {phrase!r} of {category!r} must be words (letters, digits, "
                        "hyphens, apostrophes), 'a|b' for a choice of words, {fragment} or "
                        "(?:pattern)",
                    )
                pattern, gate = _phrase_pattern(phrase.strip())
                term = {**shared, "category": category, "pattern": pattern, "phrase": phrase}
                if gate is not None:
                    term["gate"] = gate
                term[_LINE] = line
                terms.append(term)
    return terms


_PHRASE_WORD = r"(?:[\w'+&|-]+|\{[a-z][a-z0-9_]*\}|\(\?:\S+\))"
_PHRASE_TEXT = re.compile(rf"{_PHRASE_WORD}(?:\s+{_PHRASE_WORD})*")
_INFLECT_FROM = 4  # words this long or longer match their inflections


def _inflections(word: str) -> str:
    """A word and its inflections as a pattern: "stammer" -> stammers, stammered, stammering;
    the parts of a hyphenated word may be joined by a hyphen, a space or nothing."""
    if "-" in word:
        return "[-\\s]?".join(_inflections(part) for part in word.split("-") if part)
    if len(word) < _INFLECT_FROM or not word.isalpha():
        return re.escape(word)
    if word.endswith("e"):
        return f"{word[:-1]}(?:e|es|ed|ing|er|ers)"
    if word.endswith("y") and word[-2] not in "aeiou":
        return f"{word[:-1]}(?:y|ies|ied|ying)"
    return f"{word}(?:s|es|ed|ing|er|ers)?"


def _stable_prefix(word: str) -> str:
    """The start every inflection of a word shares (at most five letters), for its gate."""
    first = re.split(r"[^a-z0-9]", word)[0]
    if len(first) >= _INFLECT_FROM and first.endswith(("e", "y")):
        first = first[:-1]
    return first[:5]


def _phrase_pattern(phrase: str) -> tuple[str, str | None]:
    """A phrase's regular expression (its words joined by spaces or hyphens, each in its
    inflections, alternatives written a|b) and its gate: the first word's alternatives."""
    parts: list[str] = []
    for word in phrase.split():
        if word.startswith(("{", "(?:")):
            parts.append(f"(?:{word})")  # a fragment, or a group written as a pattern
        else:
            choices = word.lower().split("|")
            parts.append("(?:" + "|".join(_inflections(choice) for choice in choices) + ")")
    pattern = r"\b" + r"[-\s]+".join(parts) + r"(?![\w])"
    # Every match holds one choice of each word: the gate is the word whose choices are the
    # rarest (the longest shortest choice), so "her|his|their partner is" waits for "partner".
    best: set[str] | None = None
    fragment: str | None = None
    for word in phrase.lower().split():
        if word.startswith(("{", "(?:")):
            fragment = fragment or (word if word.startswith("{") else None)
            continue
        prefixes = {_stable_prefix(choice) for choice in word.split("|")}
        if min(len(prefix) for prefix in prefixes) < 2:
            continue
        if best is None or min(map(len, prefixes)) >= min(map(len, best)):
            best = prefixes
    if fragment is not None and (best is None or best <= _COMMON_WORDS):
        return pattern, fragment  # "{demonyms} and so is she" waits for a demonym, not "and"
    return pattern, " ".join(sorted(best)) if best else None


# words in almost every rationale: a gate of these alone would try its phrase on every text
_COMMON_WORDS = frozenset(
    "and the so is are was has have her his she he they their of to in on at an as for with"  # noqa: SIM905
    " by it its".split()
)


def _keys(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys))


def _names(value: object, what: str, where: str, *, joined: bool) -> dict[str, str]:
    """A mapping of names to texts; with ``joined`` a text may be a list of pieces."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _refused(where, None, f"{what!r} must be a mapping of names to text")
    names: dict[str, str] = {}
    for name, text in value.items():
        if name == _LINE:
            continue
        piece = _text(text) if joined else text if isinstance(text, str) else None
        if not isinstance(name, str) or not _PLACEHOLDER.fullmatch(f"{{{name}}}") or not piece:
            raise _refused(
                where, value.get(_LINE), f"{what} entry {name!r} needs a lower-case name and text"
            )
        names[name] = piece
    return names


def _text(value: object) -> str | None:
    """A pattern as written: a string, or a list of strings joined without separators."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(piece, str) for piece in value):
        return "".join(value)
    return None


def _compile(
    source: _Source,
    terms: tuple[dict[str, object], ...],
    categories: Mapping[str, str],
    fragments: Mapping[str, str],
) -> ProtectedLexicon:
    compiled: list[_Term] = []
    gates: dict[str, list[int]] = {}
    ungated: list[int] = []
    for number, term in enumerate(terms):
        line = term.get(_LINE)
        try:
            compiled.append(_compile_term(term, categories, fragments))
            gate = term.get("gate")
            words = _gate_words(gate, fragments) if isinstance(gate, str) else None
            if words is None:
                ungated.append(number)  # no gate, or one no word can stand for: always tried
            for prefix in words or ():
                gates.setdefault(prefix, []).append(number)
        except ValueError as exc:
            raise _refused(source.where, line, str(exc)) from None
    work = work_context(fragments)
    return ProtectedLexicon(
        tuple(compiled),
        {key: tuple(entries) for key, entries in gates.items()},
        tuple(ungated),
        work.domain_after,
        source.where,
        work.domain_before,
        work.work_after,
        max((len(prefix) for prefix in gates), default=0),
        work.antecedent,
        work.thing_before,
    )


def _compile_term(
    term: Mapping[str, object], categories: Mapping[str, str], fragments: Mapping[str, str]
) -> _Term:
    """One term's regular expressions, fragments filled in; ValueError says what is wrong."""
    problem = _term_problem(term, categories)
    if problem:
        raise ValueError(problem)
    patterns: list[re.Pattern[str] | None] = []
    for key in ("pattern", "unless_before", "unless_after"):
        text = _text(term.get(key))
        if text is None:
            patterns.append(None)
            continue
        try:
            patterns.append(re.compile(_expand(text, fragments, key), re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"{key} is not a valid regular expression ({exc})") from None
    pattern, before, after = patterns
    assert pattern is not None  # _term_problem checked it
    about = term.get("about") == "candidate"
    return _Term(categories[str(term["category"])], pattern, before, after, about)


def _expand(text: str, fragments: Mapping[str, str], key: str) -> str:
    def fragment(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            raise ValueError(f"{key} uses the unknown fragment {{{name}}}")
        return fragments[name]

    return _PLACEHOLDER.sub(fragment, text)


def _term_problem(term: Mapping[str, object], categories: Mapping[str, str]) -> str | None:
    unknown = sorted(str(key) for key in term if key not in _TERM_KEYS and key != _LINE)
    if unknown:
        return f"unknown term key {unknown[0]!r} (expected {_keys(_TERM_KEYS)})"
    category = term.get("category")
    if not isinstance(category, str) or category not in categories:
        return f"category {category!r} is not one of {', '.join(categories)}"
    if _text(term.get("pattern")) is None:
        return "the term needs a 'pattern' (a string, or a list of strings)"
    for key in ("unless_before", "unless_after"):
        if key in term and _text(term[key]) is None:
            return f"{key!r} must be a string or a list of strings"
    if "gate" in term and not isinstance(term["gate"], str):
        return "'gate' must be a string of words"
    if "about" in term and term["about"] not in _ABOUT:
        return f"'about' must be {' or '.join(_ABOUT)}"
    return None


def _gate_words(gate: str, fragments: Mapping[str, str]) -> list[str] | None:
    """The gate's words, a ``{fragment}`` standing for the literal start of each of its
    alternatives; None when an alternative has no start of two letters to wait for (the term is
    then tried on every text, never missed)."""
    words: list[str] = []
    for word in gate.split():
        name = _PLACEHOLDER.fullmatch(word)
        if name is None:
            if not _GATE_WORD.fullmatch(word):
                raise ValueError(
                    f"gate word {word!r} must be two or more lower-case letters or digits"
                )
            words.append(word)
        elif name.group(1) not in fragments:
            raise ValueError(f"gate uses the unknown fragment {word}")
        else:
            starts = _literal_starts(fragments[name.group(1)])
            if starts is None:
                return None
            words.extend(starts)
    return words


def _literal_starts(fragment: str) -> list[str] | None:
    """What every match of each alternative of a fragment starts with: its letters up to the
    first pattern sign, a letter that a ``?`` makes optional left out ("leaders?" starts
    "leader"), a one-letter class spelled out ("m[ae]n": "man", "men")."""
    starts: list[str] = []
    for alternative in _alternatives(fragment):
        for spelled in _spelled_classes(alternative.strip()):
            literal = re.match(r"[a-z0-9' ]*", spelled)
            start = literal.group(0) if literal else ""
            if spelled[len(start) : len(start) + 1] in ("?", "*"):
                start = start[:-1]  # the last letter is optional
            start = start.split(" ")[0].split("'")[0]
            if len(start) < 2:
                return None
            starts.append(start)
    return starts


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern, an outer ``(?:...)`` around all of it opened
    (a group inside an alternative stays whole: its letters are no start of the alternative)."""
    while pattern.startswith("(?:") and pattern.endswith(")") and _closes_at_end(pattern):
        pattern = pattern[3:-1]
    alternatives, depth, current = [], 0, ""
    for char in pattern:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            alternatives.append(current)
            current = ""
        else:
            current += char
    return [*alternatives, current]


def _closes_at_end(pattern: str) -> bool:
    """Whether the group opening ``pattern`` closes at its last character."""
    depth = 0
    for position, char in enumerate(pattern):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return position == len(pattern) - 1
    return False


def _spelled_classes(alternative: str) -> list[str]:
    """The alternative with its first one-letter class spelled out each way (``m[ae]n``)."""
    found = re.search(r"\[([a-z]+)\]", alternative)
    if found is None:
        return [alternative]
    return [alternative[: found.start()] + c + alternative[found.end() :] for c in found.group(1)]
