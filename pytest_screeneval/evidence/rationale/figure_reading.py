"""How a figure of a rationale reads against the resume's figures, beyond its value and unit.

- A describing word before a people noun ("fourteen reception staff", "nine nursing staff")
  names the staff the resume counts under a word of the same root ("14 receptionists", "9 dental
  nurses"); the same word of a line that counts no people ("design" of "design review rework")
  does not.
- A figure the resume gives only as a percentage ("cut rework from 28% to 9%") grounds no count
  of things ("9 design engineers").
- "point" right after a number may name a thing counted ("forty point machines"), not a change
  in points ("up 9 points").
- A number after a duration in one list takes its unit ("sixteen years in water treatment, nine
  running the works").
- A change given as a share or a difference is read on the resume lines that share a word with
  its sentence (``sentence_words``), not on any line whose figures happen to be close.
- A count of people "in all" may be a line's total (``total_grounded``): the counts it lists
  together ("6 perfumers and 4 evaluators": a ten-strong team) or a number of groups times each
  group's size ("4 crews of 3 technicians each": twelve technicians, twelve techs), said of
  people in general or of the people the line counts.
- A number after "Level", "Grade", "Stage" ... is a level (``level_grounded``): when the resume
  gives levels of that word ("RATA Level 2", "Levels 1-3"), it must be one of them, not any
  figure of the same value elsewhere.
- A count said as a rate ("1,400 learners a year") is not borne out by the same figure given
  only as a total ("1,400 learners in total").

Pure: text in, answers out; the resume's percentages are read once per resume text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from pytest_screeneval.evidence.rationale.claim_context import COMMON_WORDS, CONTENT_WORD
from pytest_screeneval.evidence.rationale.quantities import quantities, same_value
from pytest_screeneval.evidence.rationale.resume_facts import is_year, unit_stem
from pytest_screeneval.evidence.rationale.text import sentence_spans

__all__ = [
    "PEOPLE_IN_GENERAL",
    "PERCENT_AFTER",
    "POINT_NOUN",
    "STAFF_FORM",
    "level_grounded",
    "percent_only",
    "same_root",
    "sentence_words",
    "staff_form_grounded",
    "total_grounded",
    "total_said_as_rate",
    "understood_duration",
]

# a people noun after a describing word: "reception staff", "library team", "nursing staff"
STAFF_FORM = re.compile(
    r"\s+([a-z][a-z-]{3,})\s+(?:staff|team|teams|workers|employees|personnel)\b", re.IGNORECASE
)
_ROOT = 4  # letters two words must share to be one root ("reception", "receptionist")
_PERSON_ENDING = ("ist", "er", "or", "ian", "ant", "ent", "se")

# "point" naming a thing ("point machines", "point duty"), not a change in points ("a 9 point
# rise")
POINT_NOUN = re.compile(
    r"[-\s]+point\s+(?!(?:increase|rise|drop|fall|gain|improvement|jump|swing|lift|cut|reduction"
    r"|change|lead|margin|difference|shift)\b)[a-z]",
    re.IGNORECASE,
)
PERCENT_AFTER = re.compile(r"\s*(?:%|per\s*cent\b|percent\b)", re.IGNORECASE)


def same_root(said: str, resume_word: str) -> bool:
    """Whether a describing word and a resume's word for people share a root ("nursing",
    "nurse"; "reception", "receptionist"); the same word ("design" of "design review") is no
    people noun."""
    said = said.lower()
    return (
        len(resume_word) >= _ROOT
        and said[:_ROOT] == resume_word[:_ROOT]
        and said != resume_word
        and resume_word.endswith(_PERSON_ENDING)
    )


def staff_form_grounded(
    units: Mapping[float, frozenset[str]], values: Sequence[float], text: str, end: int
) -> bool:
    """Whether a count said in a staff form after it ("fourteen reception staff") is one the
    resume gives of its people under a word of the same root ("14 receptionists")."""
    staff = STAFF_FORM.match(text, end)
    return staff is not None and any(
        same_root(staff.group(1), word) for v in values for word in units.get(v, ())
    )


@lru_cache(maxsize=512)
def percent_only(resume: str) -> frozenset[float]:
    """The figures a resume gives only as percentages ("cut rework from 28% to 9%")."""
    shares: set[float] = set()
    counts: set[float] = set()
    for quantity in quantities(resume):
        (shares if PERCENT_AFTER.match(resume, quantity.end) else counts).add(quantity.value)
    return frozenset(shares - counts)


# a number whose unit is understood from a duration just before it, in a list of the same clause:
# its first item after a comma, a later one after "and" ("six as a technician and six leading")
_AFTER_A_DURATION = re.compile(
    r"\b(?:years?|yrs?|decades?)\b[^.;:\n]{0,60},(?:[^.;:\n]{0,40}\s+and)?"
    r"\s*(?:and\s+|with\s+|including\s+)?$",
    re.IGNORECASE,
)
_ELLIPTICAL_AFTER = re.compile(r"\s+(?:[a-z]+ing|as|at|in)\b", re.IGNORECASE)
_DURATION_REACH = 80  # how far back the duration may stand, in characters


def understood_duration(text: str, start: int, end: int) -> bool:
    """Whether the number at ``start``-``end`` is a duration by the list it closes: "sixteen
    years in water treatment, nine running the works"."""
    return bool(
        _ELLIPTICAL_AFTER.match(text, end)
        and _AFTER_A_DURATION.search(text, max(0, start - _DURATION_REACH), start)
    )


def sentence_words(text: str, at: int) -> frozenset[str]:
    """The content words of the sentence holding ``at``, as a resume line's words are kept."""
    for start, end in sentence_spans(text):
        if start <= at < end:
            words = CONTENT_WORD.findall(text[start:end].lower())
            return frozenset(unit_stem(w) for w in words if len(w) >= 4) - COMMON_WORDS
    return frozenset()


# words after a count that say it counts people in general ("fifteen staff"), and those that do
# so only of a total ("a ten-strong team")
PEOPLE_IN_GENERAL = frozenset(
    unit_stem(word) for word in ("staff", "people", "reports", "heads", "employees", "members")
)
_ANY_PEOPLE = PEOPLE_IN_GENERAL | {unit_stem("strong"), unit_stem("team")}
_SAID_AFTER = re.compile(r"[\s-]+([a-z]+)(?:\s+([a-z]+))?", re.IGNORECASE)
_LIST_JOIN = re.compile(r"[^\d:;()]{0,40}?(?:,|\band\b|\bplus\b)\s*", re.IGNORECASE)
# "4 service crews of 3 technicians each": groups, then each group's size and what it counts
_GROUPS_OF = re.compile(r"\b(\d+)\s+(?:[a-z-]+\s+){1,3}?of\s+(\d+)\s+([a-z]+)", re.IGNORECASE)
_NEXT = re.compile(r"\s+([a-z]+)", re.IGNORECASE)


@lru_cache(maxsize=512)
def _line_totals(resume: str) -> tuple[tuple[float, frozenset[str]], ...]:
    """Each line's totals with the words they count: the sums of the counts it lists together
    ("7 climbers and 5 ground staff": 12), each count joined to the next by "and", "plus" or a
    comma ("2 crews: 7 climbers ..." is no list of 2 and 7), and its groups times their size."""
    totals: list[tuple[float, frozenset[str]]] = []
    for line in resume.splitlines():
        found = [q for q in quantities(line) if not is_year(q.value)]
        run = found[:1]
        for previous, current in pairwise(found):
            if _LIST_JOIN.fullmatch(line[previous.end : current.start]):
                run.append(current)
                # the sum counts one kind of people only when every part does ("9 design
                # engineers" is no total of "7 design engineers and 2 CAD technicians")
                words = [_NEXT.match(line, q.end) for q in run]
                units = {unit_stem(w.group(1)) if w else "" for w in words}
                totals.append(
                    (
                        sum(q.value for q in run),
                        frozenset(units - {""}) if len(units) == 1 else frozenset(),
                    )
                )
            else:
                run = [current]
        for groups in _GROUPS_OF.finditer(line):
            product = float(groups.group(1)) * float(groups.group(2))
            totals.append((product, frozenset({unit_stem(groups.group(3))})))
    return tuple(totals)


def total_grounded(resume: str, values: Sequence[float], text: str, end: int) -> bool:
    """Whether a count said of people ("fifteen staff", "twelve technicians in all", "twelve
    turbine techs") is a total one resume line gives (see the module docstring)."""
    said = _SAID_AFTER.match(text, end)
    if said is None:
        return False
    words = [unit_stem(w) for w in said.groups() if w]
    for total, units in _line_totals(resume):
        if not any(same_value(v, total) for v in values):
            continue
        if any(w in _ANY_PEOPLE or w in units for w in words[:1]):
            return True
        # a short form of the line's people noun, maybe after a describing word: "turbine techs"
        if any(same_root(w, unit) or w == unit for w in words for unit in units):
            return True
    return False


_LEVEL_WORD = r"(?:level|grade|stage|band|tier|step)"
_RANGE_JOIN = r"\s*(?:-|\u2013|to|and|&|,)\s*"
# the number said: "Level 3", or the end of a range or list, "Levels 1-4", "Levels 2 and 3"
_LEVEL_BEFORE = re.compile(rf"\b({_LEVEL_WORD})s?\s+(?:\d+{_RANGE_JOIN})*$", re.IGNORECASE)
_LEVELS = re.compile(rf"\b({_LEVEL_WORD})s?\s+(\d+(?:{_RANGE_JOIN}\d+)*)", re.IGNORECASE)
_RANGE = re.compile(r"^(\d+)\s*(?:-|\u2013|to)\s*(\d+)$", re.IGNORECASE)
_LEVEL_REACH = 24  # how far back the level word may stand, in characters


@lru_cache(maxsize=512)
def _resume_levels(resume: str) -> Mapping[str, frozenset[float]]:
    """The levels a resume gives under each level word, a range spelled out ("Levels 1-3": 1,
    2 and 3)."""
    levels: dict[str, set[float]] = {}
    for match in _LEVELS.finditer(resume):
        found = levels.setdefault(match.group(1).lower(), set())
        found.update(float(n) for n in re.findall(r"\d+", match.group(2)))
        span = _RANGE.match(match.group(2))
        if span and int(span.group(1)) < int(span.group(2)) <= 20:
            found.update(float(n) for n in range(int(span.group(1)), int(span.group(2)) + 1))
    return {word: frozenset(found) for word, found in levels.items()}


def level_grounded(resume: str, text: str, start: int, values: Sequence[float]) -> bool | None:
    """Whether a number said as a level ("RATA Level 3") is a level the resume gives under the
    same word; None when it is no level, or the resume gives no levels of that word (its value
    is then read as any other figure)."""
    before = _LEVEL_BEFORE.search(text, max(0, start - _LEVEL_REACH), start)
    if before is None:
        return None
    levels = _resume_levels(resume).get(before.group(1).lower())
    if not levels:
        return None
    return any(value in levels for value in values)


# a count said as a rate: "1,400 learners a year", "260 climbs per year", "40 jobs annually"
_RATE_AFTER = re.compile(
    r"\s+(?:[\w-]+\s+){0,3}?(?:(?:a|per|each|every)\s+(?:year|annum|month|week|day)|annually)\b",
    re.IGNORECASE,
)
_TOTAL_AFTER = re.compile(
    r"\s+(?:[\w-]+\s+){0,3}?(?:in\s+total|in\s+all|altogether|to\s+date|in\s+(?:her|his|their)"
    r"\s+career)\b",
    re.IGNORECASE,
)


def total_said_as_rate(resume: str, values: Sequence[float], text: str, end: int) -> bool:
    """Whether a count said as a rate ("1,400 learners a year") is one the resume gives only as
    a total ("1,400 learners in total"): the figure is there, the claim about it is not."""
    if not _RATE_AFTER.match(text, end):
        return False
    said = [q for q in quantities(resume) if any(same_value(v, q.value) for v in values)]
    return bool(said) and all(
        _TOTAL_AFTER.match(resume, q.end) and not _RATE_AFTER.match(resume, q.end) for q in said
    )
