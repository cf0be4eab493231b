"""Text plumbing for the rationale checks: normalise, count words, split sentences and clauses.

Pure and dependency-free. Sentence splitting is rule-based and tuned to what scorers write:
abbreviations ("e.g.", "B.Sc.", "Sr.", "St."), decimals ("3.5") and versions ("Python 3.11")
do not end a sentence; a line that starts a bullet does.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "casefold_text",
    "clause_spans",
    "count_words",
    "normalise",
    "sentence_spans",
    "split_sentences",
]

# Typographic characters a model emits, mapped to the plain ones resumes are compared in.
_TYPOGRAPHY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2032": "'",
        "\u2013": "-",
        "\u2014": " - ",
        "\u2212": "-",
        "\u2010": "-",
        "\u2011": "-",
        "\u2022": "-",
    }
)
_SPACES = re.compile(r"\s+")


_HORIZONTAL_SPACE = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n(?: ?\n)+")


def normalise(text: str) -> str:
    """NFKC, plain quotes and dashes (the ellipsis becomes "..."), each run of spaces one space
    and each run of blank lines one blank line; line breaks are kept (bullets need them).

    Short whitespace runs also keep every later pattern linear on pathological input.
    """
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)
    return _BLANK_LINES.sub("\n\n", _HORIZONTAL_SPACE.sub(" ", text))


def casefold_text(text: str) -> str:
    """Normalised, case-folded, whitespace runs made one space: how quotes are compared."""
    return _SPACES.sub(" ", normalise(text).casefold()).strip()


_HAS_ALNUM = re.compile(r"[^\W_]")


def count_words(text: str) -> int:
    """Whitespace-separated tokens that hold a letter or digit ("$3.2M" counts, "-" does not)."""
    return sum(1 for token in text.split() if _HAS_ALNUM.search(token))


# Abbreviations that never end a sentence (they introduce what follows).
_NEVER_FINAL = frozenset(
    [
        "e.g",
        "i.e",
        "eg",
        "ie",
        "cf",
        "vs",
        "viz",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "no",
        "nos",
        "approx",
        "incl",
        "esp",
        "fig",
        "ca",
        "al",
        "dept",
        "mt",
        "ft",
    ]
)
# Abbreviations that may end a sentence: they do when the next word starts a new sentence.
_MAYBE_FINAL = frozenset(
    [
        "etc",
        "inc",
        "ltd",
        "co",
        "corp",
        "llc",
        "plc",
        "bsc",
        "b.sc",
        "msc",
        "m.sc",
        "ba",
        "b.a",
        "ma",
        "m.a",
        "phd",
        "ph.d",
        "mba",
        "beng",
        "b.eng",
        "meng",
        "m.eng",
        "b.s",
        "m.s",
        "u.s",
        "u.k",
        "e.u",
        "a.m",
        "p.m",
        "hons",
    ]
)
_SENTENCE_STARTERS = frozenset(
    [
        "the",
        "this",
        "that",
        "these",
        "those",
        "she",
        "he",
        "they",
        "it",
        "its",
        "her",
        "his",
        "their",
        "there",
        "here",
        "overall",
        "however",
        "also",
        "but",
        "and",
        "so",
        "yet",
        "a",
        "an",
        "both",
        "each",
        "no",
        "not",
        "none",
        "while",
        "although",
        "though",
        "as",
        "in",
        "on",
        "at",
        "for",
        "with",
        "without",
        "by",
        "from",
        "after",
        "before",
        "since",
        "because",
        "if",
        "when",
        "where",
        "which",
        "who",
        "what",
        "why",
        "how",
        "i",
        "we",
        "you",
        "our",
        "your",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "score",
        "scores",
        "evidence",
        "strong",
        "weak",
        "solid",
        "good",
        "limited",
    ]
)
# Starts only at the first mark of a run, and never backtracks: linear on "!!!!...!x".
_TERMINATOR = re.compile(r"(?<![.!?])[.!?]++[\"')\]]*+(?=\s|$)")
_NEXT_TOKEN = re.compile(r"\s*([\"'(\[]*)(\S*)")
_DOTTED = re.compile(r"^(?:[a-z]\.)+[a-z]$|^[a-z]{1,3}\.[a-z]{1,3}$")
_BULLET_LINE = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,2}[.)])\s+")


def _is_boundary(text: str, start: int, end: int) -> bool:
    """Whether the terminator at text[start:end] ends a sentence."""
    mark = text[start:end]
    if "!" in mark or "?" in mark:
        return True
    following = _NEXT_TOKEN.match(text, end)
    next_word = following.group(2) if following else ""
    if not next_word:
        return True
    if next_word[0].islower():
        # "e.g. the", "Ph.D. but": a lower-case continuation is never a new sentence.
        return False
    token = text[max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1 : start + 1]
    token = token.lstrip("\"'([").rstrip(".").lower()
    if len(token) == 1 and token.isalpha():
        return False  # an initial: "J. Doe"
    if token in _NEVER_FINAL:
        return False
    if token in _MAYBE_FINAL or _DOTTED.match(token):
        bare = re.sub(r"[^\w]", "", next_word).lower()
        return bare in _SENTENCE_STARTERS
    return True


def _logical_lines(text: str) -> list[tuple[int, int]]:
    """Spans of text that sentences never cross: paragraphs and bullet lines.

    A hard-wrapped sentence (a line break inside it) stays one span; a blank line, or a line
    that starts with a bullet marker, starts a new one.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    position = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if not stripped or _BULLET_LINE.match(line):
            if text[start:position].strip():
                spans.append((start, position))
            start = position if stripped else position + len(line)
        position += len(line)
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


@lru_cache(maxsize=1024)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each sentence that holds a letter or digit, in order."""
    spans: list[tuple[int, int]] = []
    for line_start, line_end in _logical_lines(text):
        start = line_start
        for mark in _TERMINATOR.finditer(text, line_start, line_end):
            if _is_boundary(text[:line_end], mark.start(), mark.end()):
                spans.append((start, mark.end()))
                start = mark.end()
        spans.append((start, line_end))
    return tuple((s, e) for s, e in spans if _HAS_ALNUM.search(text, s, e))


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, stripped."""
    return [text[s:e].strip() for s, e in sentence_spans(text)]


# Where one claim's clause ends and the next begins: a negation ("no AWS") reaches to the end of
# its clause, not past "but" or a semicolon, nor past a comma that opens a new subject.
_CLAUSE_BREAK = re.compile(
    r";|\s-\s"
    r"|,?\s+(?:but|however|although|though|whereas|whilst|while|yet)\b"
    r"|,\s+(?=(?:she|he|they|it|there|this|which|her|his|their|the\s+candidate|the\s+resume"
    r"|and\s+(?:she|he|they|it|there|the|her|his|their))\b)",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def clause_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each clause: sentences cut at semicolons, dashes and contrast words."""
    spans: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        cursor = start
        for cut in _CLAUSE_BREAK.finditer(text, start, end):
            if cut.start() > cursor:
                spans.append((cursor, cut.start()))
            cursor = cut.end()
        if end > cursor:
            spans.append((cursor, end))
    return tuple(spans)
