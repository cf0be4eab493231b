"""Quantities in text, as values: "5", "five", "5k", "5,000", "£1.5M", "a dozen", "a quarter of
a million", "two decades" all become numbers that can be compared.

A rationale says the resume's figures in its own words. Grounding compares values, not
spellings, so "2.4k requests per second" is grounded by "2,400 requests per second" and
"twelve engineers" is not grounded by "8 engineers". Each quantity keeps its span and whether it
was spelled out, so the caller can decide which are claims.

Pure and dependency-free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

__all__ = [
    "APPROX_BEFORE",
    "APPROX_TOLERANCE",
    "AT_LEAST_BEFORE",
    "DURATION_AFTER",
    "NOT_A_COUNT_AFTER",
    "Quantity",
    "quantities",
    "same_value",
]

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_SUFFIX_SCALES = {"k": 1_000, "m": 1_000_000, "mn": 1_000_000, "b": 1_000_000_000, "bn": 1e9}
_NUMBER_WORD = "|".join(
    sorted(
        (*_UNITS, *_TENS, *_SCALES, "dozen", "decade", "decades", "century", "centuries"),
        key=len,
        reverse=True,
    )
)
# Digits, with thousands commas or a decimal part, and a scale written after them.
_DIGITS = re.compile(
    r"(?<![\w.,])(?<![A-Za-z]-)(?>(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?)"
    r"(?:(k|mn|bn|m|b)(?!\w)|\s+(thousand|million|billion)\b)?",
    re.IGNORECASE,
)
# A run of number words: "twenty-five", "four hundred", "a quarter of a million", "half a
# million", "a dozen", "two dozen", "a couple of dozen", "a decade".
_WORDS = re.compile(
    rf"\b(?:(?:a|an)\s+quarter\s+of\s+a\s+|half\s+a\s+"
    rf"|a\s+couple\s+of\s+(?=(?:dozen|hundred|thousand|million)\b)|(?:a|an)\s+(?=(?:dozen|hundred|thousand"
    rf"|million|billion|decade|century)\b))?(?:(?:{_NUMBER_WORD})(?:(?:[-\s]+|(?<=hundred)[-\s]+and[-\s]+"
    # "four and a half thousand": a half before a scale
    rf"|\s+and\s+a\s+half\s+(?=(?:hundred|thousand|million|billion)\b))"
    rf"(?=(?:{_NUMBER_WORD})\b))?)+\b",
    re.IGNORECASE,
)
_DIGIT_WORD = "zero|one|two|three|four|five|six|seven|eight|nine"
# A decimal said in words: "four point two million", "two point five".
_POINT_WORDS = re.compile(
    rf"\b((?:{_NUMBER_WORD})(?:[-\s]+(?:{_NUMBER_WORD}))*)\s+point\s+"
    rf"((?:{_DIGIT_WORD})(?:\s+(?:{_DIGIT_WORD}))*)\b(?:\s+(thousand|million|billion)\b)?",
    re.IGNORECASE,
)

# The words before a number that make it an approximation ("about 97%") or a lower bound
# ("over 10,000"), and how far an approximation may be from the figure it stands for.
APPROX_BEFORE = re.compile(
    r"(?:\b(?:about|around|roughly|approximately|approx|nearly|almost|some|circa|c|close\s+to"
    r"|just\s+under|just\s+over|an\s+estimated)|~)\.?\s*[£$€]?\s*$",
    re.IGNORECASE,
)
AT_LEAST_BEFORE = re.compile(
    r"\b(?:over|more\s+than|at\s+least|upwards\s+of|north\s+of|in\s+excess\s+of|well\s+over"
    r"|beyond)\s*[£$€]?\s*$",
    re.IGNORECASE,
)
APPROX_TOLERANCE = 0.1  # "about 97%" for 97.1%, "roughly 1.1k" for 1,100

# A duration after a number: "5 years", "a decade"
DURATION_AFTER = re.compile(r"\s*(?:\+\s*)?[- ]?(?:years?|yrs?|decades?)\b", re.IGNORECASE)
# A spelled-out number is a count only when a noun follows it ("twelve engineers"), not "four
# at Hallam", "ten of them", "two or three".
NOT_A_COUNT_AFTER = re.compile(
    r"[\s-]*(?:of|at|as|in|on|to|and|or|for|with|times|more|less|each|a|an|the|was|were|is"
    r"|are|since|before|after|earlier|later|now|then|there|here|per|out|thirds?|quarters?"
    r"|halves|half|fifths?|tenths?|percent|cent)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """One quantity: its value, where it is, and whether it was written in words."""

    value: float
    start: int
    end: int
    spelled: bool
    # "a decade", "two decades", "a quarter of a century": a duration said in its own unit
    decades: bool = False


def same_value(a: float, b: float, tolerance: float = 0.0) -> bool:
    """Whether two values are the same, within a relative ``tolerance`` (0: exactly)."""
    if tolerance == 0.0:
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


@lru_cache(maxsize=4096)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Every quantity in a text, in order of position."""
    found: list[Quantity] = []
    for match in _DIGITS.finditer(text):
        whole, fraction, suffix, scale = match.groups()
        value = float(whole.replace(",", "") + (f".{fraction}" if fraction else ""))
        if suffix:
            value *= _SUFFIX_SCALES[suffix.lower()]
        elif scale:
            value *= _SCALES[scale.lower()]
        found.append(Quantity(value, match.start(), match.end(), spelled=False))
    # "from 1.9 to 2.6 million": the scale after the second number is the first one's too
    for first, second in pairwise(list(found)):
        between = text[first.end : second.start]
        scaled = second.value / _plain(text, second)
        if scaled > 1 and first.value == _plain(text, first) and _RANGE_JOIN.fullmatch(between):
            found.append(Quantity(first.value * scaled, first.start, first.end, spelled=False))
    for match in _POINT_WORDS.finditer(text):
        whole = _spelled_value(match.group(1).lower())
        if whole is None or whole >= 1000:
            continue
        digits = "".join(str(_UNITS[d]) for d in match.group(2).lower().split())
        value = (whole + float(f"0.{digits}")) * _SCALES.get((match.group(3) or "").lower(), 1)
        found.append(Quantity(value, match.start(), match.end(), spelled=True))
    digits_end = [(q.start, q.end) for q in found]
    for match in _WORDS.finditer(text):
        if any(start < match.end() and match.start() < end for start, end in digits_end):
            continue  # "million" in "1.5 million" is the digits' scale
        words = match.group(0).lower()
        spelled = _spelled_value(words)
        if spelled is not None:
            found.append(
                Quantity(
                    spelled,
                    match.start(),
                    match.end(),
                    True,
                    decades="decade" in words or "centur" in words,
                )
            )
    return tuple(sorted(found, key=lambda q: q.start))


_RANGE_JOIN = re.compile(r"\s*(?:to|-|and|or)\s*[£$€]?\s*", re.IGNORECASE)
_PLAIN_NUMBER = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")


def _plain(text: str, quantity: Quantity) -> float:
    """A digit quantity's value without its scale ("2.6" of "2.6 million")."""
    match = _PLAIN_NUMBER.search(text, quantity.start, quantity.end)
    if match is None:
        return quantity.value
    whole, fraction = match.groups()
    return float(whole.replace(",", "") + (f".{fraction}" if fraction else "")) or 1.0


_AND_A_HALF = re.compile(r"\s+and\s+a\s+half\s+")


def _spelled_value(words: str) -> float | None:
    """The value of a run of number words, or None when it is not a number ("a", "and")."""
    fraction = 1.0
    if words.startswith(("a quarter of a ", "an quarter of a ")):
        fraction, words = 0.25, words.split(" of a ", 1)[1]
    elif words.startswith("half a "):
        fraction, words = 0.5, words[len("half a ") :]
    elif words.startswith("a couple of "):
        fraction, words = 2.0, words[len("a couple of ") :]  # "a couple of dozen": 24
    words = _AND_A_HALF.sub(" plus-half ", words)
    tokens = [t for t in re.split(r"[\s]+|-(?!half)", words) if t and t != "and"]
    if tokens and tokens[0] in ("a", "an"):
        tokens[0] = "one"
    total = 0.0
    current = 0.0
    seen = False
    for token in tokens:
        if token == "plus-half":
            current += 0.5  # "four and a half thousand": 4,500
        elif token in _UNITS:
            current += _UNITS[token]
        elif token in _TENS:
            current += _TENS[token]
        elif token == "dozen":
            current = (current or 1) * 12
        elif token in ("decade", "decades"):
            current = (current or 1) * 10
        elif token in ("hundred", "century", "centuries"):
            current = (current or 1) * 100
        elif token in _SCALES:
            total += (current or 1) * _SCALES[token]
            current = 0
        else:
            return None
        seen = True
    if not seen:
        return None
    return (total + current) * fraction
