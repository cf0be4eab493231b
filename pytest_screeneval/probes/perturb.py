"""Perturbations of resume text, as Hypothesis strategies for the (case, perturbation[kind]) items.

A scorer that reads content, not layout, gives the same scores when a resume is reformatted,
when its text carries a little OCR noise, or when its sections come in another order. Each
perturbation is a frozen value saying exactly what it did, so a failure can show it and
``apply(text)`` reproduces it. Strategies shrink towards the smallest change: one OCR
confusion, one swap of two sections, one formatting aspect.

What each kind may change (and the tests check): ``reformat`` and ``reorder-sections`` keep the
multiset of words (reformat may change a heading's letter case); ``ocr-noise`` changes only
characters a scanner confuses (l/1/I, O/0, S/5, rn/m), ligature glyphs, and the spacing
between words (never a word's letters).

Search coverage: each strategy has kinds of edit (``edit_kinds``), and the first examples of a
search are one per kind (``stratified``), so a scorer sensitive to one kind meets it within
the first few examples instead of in a fraction of random draws.

Pure module: Hypothesis strategies, no pytest.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from hypothesis import strategies as st

from pytest_screeneval.errors import ScreenevalError

__all__ = [
    "KNOWN_HEADINGS",
    "OCR_CONFUSIONS",
    "OCR_EDIT_KINDS",
    "PERTURBATION_KINDS",
    "OcrEdit",
    "OcrNoise",
    "Perturbation",
    "PerturbationError",
    "Reformat",
    "ReorderSections",
    "coverage",
    "describe",
    "edit_kinds",
    "find_sections",
    "perturbations",
    "stratified",
]

PERTURBATION_KINDS = ("reformat", "ocr-noise", "reorder-sections")

# What a scanner or a PDF text layer writes for what is printed, by the kind of edit. Each kind
# is drawn on its own first (``stratified``), so a scorer sensitive to one kind meets it within
# the first examples. Longer sources come first at a position so "ffi" is one site, not two.
OCR_EDIT_KINDS = ("digit-letter", "letter-shape", "ligature", "spacing")
OCR_CONFUSIONS: tuple[tuple[str, str, str], ...] = (
    ("letter-shape", "rn", "m"),
    ("letter-shape", "m", "rn"),
    ("digit-letter", "l", "1"),
    ("digit-letter", "1", "l"),
    ("letter-shape", "l", "I"),
    ("letter-shape", "I", "l"),
    ("digit-letter", "O", "0"),
    ("digit-letter", "0", "O"),
    ("digit-letter", "S", "5"),
    ("digit-letter", "5", "S"),
    # a PDF text layer keeps the typeface's ligature glyphs (NFKC reads them as the letters)
    ("ligature", "ffi", "\ufb03"),
    ("ligature", "ffl", "\ufb04"),
    ("ligature", "ff", "\ufb00"),
    ("ligature", "fi", "\ufb01"),
    ("ligature", "fl", "\ufb02"),
    # spacing a scanner gets wrong without changing a word: a doubled space, a lost one after
    # a comma
    ("spacing", ", ", ","),
)
_SPACING = "spacing"

KNOWN_HEADINGS = frozenset(
    {
        "experience",
        "work experience",
        "professional experience",
        "employment",
        "employment history",
        "work history",
        "education",
        "skills",
        "technical skills",
        "key skills",
        "certifications",
        "certificates",
        "licenses and certifications",
        "summary",
        "professional summary",
        "profile",
        "objective",
        "projects",
        "languages",
        "volunteering",
        "volunteer experience",
        "awards",
        "publications",
        "interests",
        "training",
    }
)

BULLETS = ("•", "-", "*")
_BULLET_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>[•*-])(?P<rest>[ \t]+\S.*)$", re.DOTALL)
_MAX_GENERIC_HEADING_WORDS = 5
_MAX_GENERIC_HEADING_CHARS = 40
_NOT_IN_HEADINGS = re.compile(r"[\d,;|]")


class PerturbationError(ScreenevalError):
    """A perturbation was asked for that does not exist or does not fit the text."""


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


def _is_bullet(line: str) -> bool:
    return _BULLET_LINE.match(line) is not None


def _heading_kind(line: str) -> Literal["known", "generic", None]:
    """``known`` for a standard heading (Experience, EDUCATION:, ...), ``generic`` for a short
    unindented line in capitals or ending with ':', else None."""
    if not line.strip() or line[:1].isspace() or _is_bullet(line):
        return None
    stripped = line.strip()
    core = stripped.rstrip(":").strip()
    if not core:
        return None
    if core.casefold() in KNOWN_HEADINGS:
        return "known"
    if len(core.split()) > _MAX_GENERIC_HEADING_WORDS or len(core) > _MAX_GENERIC_HEADING_CHARS:
        return None
    if _NOT_IN_HEADINGS.search(core):
        # "SQL, AWS, GCP" or "2019 - 2024:" are content in capitals, not headings.
        return None
    letters = [c for c in core if c.isalpha()]
    if stripped.endswith(":") and letters:
        return "generic"
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return "generic"
    return None


def _heading_indexes(lines: Sequence[str]) -> list[int]:
    """Indexes of heading lines. The first non-blank line is the name line, never a heading;
    a generic heading (capitals, trailing ':') counts only after the first blank line, so a
    job title in capitals under the name stays in the header block."""
    headings: list[int] = []
    seen_text = seen_blank = False
    for index, line in enumerate(lines):
        if not line.strip():
            seen_blank = seen_blank or seen_text
            continue
        if not seen_text:
            seen_text = True
            continue
        kind = _heading_kind(line)
        if kind == "known" or (kind == "generic" and seen_blank):
            headings.append(index)
    return headings


@dataclass(frozen=True)
class _Layout:
    """A text cut into a header block and sections; each section without its trailing blank
    lines, which stay where they were (``gaps``) so moving sections keeps the spacing."""

    header: tuple[str, ...]
    sections: tuple[tuple[str, ...], ...]
    gaps: tuple[tuple[str, ...], ...]
    final_newline: bool

    def render(self, order: Sequence[int]) -> str:
        lines = list(self.header)
        for slot, index in enumerate(order):
            lines.extend(self.sections[index])
            lines.extend(self.gaps[slot])
        text = "\n".join(lines)
        return text + "\n" if self.final_newline else text


def _layout(text: str) -> _Layout:
    lines = text.split("\n")
    final_newline = text.endswith("\n")
    if final_newline:
        lines.pop()
    starts = _heading_indexes(lines)
    if not starts:
        return _Layout(tuple(lines), (), (), final_newline)
    sections: list[tuple[str, ...]] = []
    gaps: list[tuple[str, ...]] = []
    for start, end in itertools.pairwise([*starts, len(lines)]):
        body = lines[start:end]
        content_end = len(body)
        while content_end > 1 and not body[content_end - 1].strip():
            content_end -= 1
        sections.append(tuple(body[:content_end]))
        gaps.append(tuple(body[content_end:]))
    return _Layout(tuple(lines[: starts[0]]), tuple(sections), tuple(gaps), final_newline)


def find_sections(text: str) -> tuple[str, ...]:
    """The heading line of each section, in order (the header block is not a section)."""
    return tuple(section[0].strip() for section in _layout(text).sections)


# --------------------------------------------------------------------------------------------
# The perturbations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OcrEdit:
    """At ``position`` the text reads ``original``; the scanner wrote ``replacement``."""

    position: int
    original: str
    replacement: str

    @property
    def kind(self) -> str:
        """The kind of edit (one of ``OCR_EDIT_KINDS``)."""
        return _OCR_KIND[(self.original, self.replacement)]


_OCR_KIND = {(original, replacement): kind for kind, original, replacement in OCR_CONFUSIONS}
_OCR_KIND[(" ", "  ")] = _SPACING


@dataclass(frozen=True)
class OcrNoise:
    """Characters misread the way a scanner misreads them, each edit at a position of the
    original text."""

    kind: ClassVar[str] = "ocr-noise"
    edits: tuple[OcrEdit, ...] = ()

    @property
    def is_identity(self) -> bool:
        return not self.edits

    def apply(self, text: str) -> str:
        out: list[str] = []
        cursor = 0
        for edit in sorted(self.edits, key=lambda e: e.position):
            end = edit.position + len(edit.original)
            if edit.position < cursor or text[edit.position : end] != edit.original:
                raise ValueError(f"{edit} does not fit this text")
            out.append(text[cursor : edit.position])
            out.append(edit.replacement)
            cursor = end
        out.append(text[cursor:])
        return "".join(out)

    def summary(self) -> str:
        if not self.edits:
            return "ocr-noise: no change"
        shown = ", ".join(
            f"{e.original!r}→{e.replacement!r} at {e.position}" for e in self.edits[:10]
        )
        more = f" and {len(self.edits) - 10} more" if len(self.edits) > 10 else ""
        plural = "s" if len(self.edits) > 1 else ""
        return f"ocr-noise: {len(self.edits)} change{plural}: {shown}{more}"


HeadingCase = Literal["upper", "title"]


@dataclass(frozen=True)
class Reformat:
    """Layout changes only; ``None`` leaves that aspect as it is.

    ``bullet``: every bullet mark becomes this one; ``heading_case``: headings in capitals or
    title case; ``blank_lines``: every run of blank lines between text becomes this many;
    ``indent``: bullet lines start with this many spaces.
    """

    kind: ClassVar[str] = "reformat"
    bullet: str | None = None
    heading_case: HeadingCase | None = None
    blank_lines: int | None = None
    indent: int | None = None

    @property
    def is_identity(self) -> bool:
        return (self.bullet, self.heading_case, self.blank_lines, self.indent) == (None,) * 4

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        headings = set(_heading_indexes(lines)) if self.heading_case else set()
        out: list[str] = []
        for index, line in enumerate(lines):
            bullet = _BULLET_LINE.match(line)
            if bullet and (self.bullet is not None or self.indent is not None):
                indent = bullet["indent"] if self.indent is None else " " * self.indent
                mark = bullet["mark"] if self.bullet is None else self.bullet
                line = f"{indent}{mark}{bullet['rest']}"
            elif index in headings:
                line = line.upper() if self.heading_case == "upper" else _title(line)
            out.append(line)
        if self.blank_lines is not None:
            out = _respace(out, self.blank_lines)
        return "\n".join(out)

    def summary(self) -> str:
        changes = [
            f"{name}={value!r}"
            for name, value in (
                ("bullet", self.bullet),
                ("heading_case", self.heading_case),
                ("blank_lines", self.blank_lines),
                ("indent", self.indent),
            )
            if value is not None
        ]
        return "reformat: " + (", ".join(changes) if changes else "no change")


def _title(line: str) -> str:
    # str.title() would write "Don'T"; capitalise each space-separated word instead.
    return re.sub(r"\S+", lambda m: m.group(0)[:1].upper() + m.group(0)[1:].lower(), line)


def _respace(lines: list[str], blank_lines: int) -> list[str]:
    """Every run of blank lines that sits between two lines of text becomes ``blank_lines``
    blank lines; blank lines at the very start or end are kept as they are."""
    text_indexes = [i for i, line in enumerate(lines) if line.strip()]
    if not text_indexes:
        return lines
    first, last = text_indexes[0], text_indexes[-1]
    out = lines[:first]
    for index in range(first, last + 1):
        line = lines[index]
        if line.strip():
            if out and index > first and not lines[index - 1].strip():
                out.extend([""] * blank_lines)
            out.append(line)
    out.extend(lines[last + 1 :])
    return out


@dataclass(frozen=True)
class ReorderSections:
    """The sections (found by their headings) in a new order; the header block stays first.
    ``order[k]`` is the original index of the section now in place ``k``."""

    kind: ClassVar[str] = "reorder-sections"
    order: tuple[int, ...] = ()

    @property
    def is_identity(self) -> bool:
        return self.order == tuple(range(len(self.order)))

    def apply(self, text: str) -> str:
        layout = _layout(text)
        if sorted(self.order) != list(range(len(layout.sections))):
            raise ValueError(
                f"order {self.order} is not a permutation of this text's "
                f"{len(layout.sections)} sections"
            )
        return layout.render(self.order)

    def summary(self) -> str:
        if self.is_identity:
            return "reorder-sections: no change"
        return "reorder-sections: order " + ", ".join(str(i) for i in self.order)


Perturbation = OcrNoise | Reformat | ReorderSections


def describe(perturbation: Perturbation, text: str) -> str:
    """What a perturbation did to ``text``, for a failure message: a one-line summary, then a
    unified diff of the changed lines only (no context lines)."""
    perturbed = perturbation.apply(text)
    summary = perturbation.summary()
    if isinstance(perturbation, ReorderSections) and not perturbation.is_identity:
        headings = find_sections(text)
        summary += " (" + " | ".join(headings[i] for i in perturbation.order) + ")"
    diff = difflib.unified_diff(
        text.splitlines(),
        perturbed.splitlines(),
        fromfile="original",
        tofile="perturbed",
        n=0,
        lineterm="",
    )
    body = "\n".join(diff)
    return f"{summary}\n{body}" if body else f"{summary}\n(the text is unchanged)"


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


def perturbations(
    kind: str, text: str, *, ocr_rate: float = 0.02
) -> st.SearchStrategy[Perturbation]:
    """A Hypothesis strategy of perturbations of ``kind`` for this ``text``.

    Every drawn perturbation changes the text, and shrinking goes to the smallest change:
    one OCR edit, one swap of two sections, one formatting aspect. A text that admits no
    change of that kind (no confusable character, fewer than two sections, nothing to
    reformat) gets the identity perturbation only; check ``is_identity`` to report it.

    ``ocr_rate`` bounds the share of the text's characters that OCR noise changes (a
    character error rate); at least one edit is always drawn.
    """
    if kind == "ocr-noise":
        return _ocr_noise(text, _checked_rate(ocr_rate))
    if kind == "reformat":
        return _reformats(text)
    if kind == "reorder-sections":
        return _reorders(text)
    raise PerturbationError(
        f"Unknown perturbation kind {kind!r} (known kinds: {', '.join(PERTURBATION_KINDS)})."
    )


def _checked_rate(rate: float) -> float:
    if not 0 < rate <= 1:
        raise PerturbationError(f"ocr_rate must be above 0 and at most 1, got {rate:g}.")
    return rate


def _ocr_sites(text: str) -> list[OcrEdit]:
    sites: list[OcrEdit] = []
    position = 0
    while position < len(text):
        covered = 1
        for _kind, original, replacement in OCR_CONFUSIONS:
            if text.startswith(original, position):
                sites.append(OcrEdit(position, original, replacement))
                covered = max(covered, len(original))
        if covered == 1 and _is_word_space(text, position):
            sites.append(OcrEdit(position, " ", "  "))
        # A longer site ("rn", "ffi", ", ") covers its characters; no other site may overlap it.
        position += covered
    return sites


def _is_word_space(text: str, position: int) -> bool:
    """One space between two words: doubling it changes the spacing, never a word."""
    return (
        text[position] == " "
        and 0 < position < len(text) - 1
        and text[position - 1].isalnum()
        and text[position + 1].isalnum()
    )


def _ocr_noise(text: str, rate: float) -> st.SearchStrategy[Perturbation]:
    sites = _ocr_sites(text)
    if not sites:
        return st.just(OcrNoise())
    most = _ocr_most_edits(text, sites, rate)

    def noise(edits: list[OcrEdit]) -> Perturbation:
        return _ocr_of(edits)

    # A plain list (deduplicated afterwards) shrinks by deleting elements, down to one edit.
    return st.lists(st.sampled_from(sites), min_size=1, max_size=most).map(noise)


def _ocr_most_edits(text: str, sites: Sequence[OcrEdit], rate: float) -> int:
    positions = len({site.position for site in sites})
    return max(1, min(positions, math.ceil(rate * len(text))))


def _ocr_of(edits: Sequence[OcrEdit]) -> OcrNoise:
    """One edit per position (the first drawn), in text order."""
    first_per_position = {e.position: e for e in reversed(edits)}
    return OcrNoise(tuple(sorted(first_per_position.values(), key=lambda e: e.position)))


_HEADING_CASES: tuple[HeadingCase, ...] = ("upper", "title")
_BLANK_LINES = (1, 0, 2)
_INDENTS = (0, 2, 4)


def _reformats(text: str) -> st.SearchStrategy[Perturbation]:
    def changes(reformat: Reformat) -> bool:
        return reformat.apply(text) != text

    # Only the values that, alone, change this text: drawn reformats then rarely do nothing.
    bullets = [b for b in BULLETS if changes(Reformat(bullet=b))]
    cases = [c for c in _HEADING_CASES if changes(Reformat(heading_case=c))]
    blanks = [n for n in _BLANK_LINES if changes(Reformat(blank_lines=n))]
    indents = [n for n in _INDENTS if changes(Reformat(indent=n))]
    if not (bullets or cases or blanks or indents):
        return st.just(Reformat())

    def aspect(values: Sequence[object]) -> st.SearchStrategy[object]:
        # none() first: each aspect shrinks to "left as it is" on its own.
        return st.none() | st.sampled_from(values) if values else st.none()

    return st.builds(
        Reformat,
        bullet=aspect(bullets),
        heading_case=aspect(cases),
        blank_lines=aspect(blanks),
        indent=aspect(indents),
    ).filter(changes)


def _reorders(text: str) -> st.SearchStrategy[Perturbation]:
    count = len(_layout(text).sections)
    if count < 2:
        return st.just(ReorderSections(tuple(range(count))))

    # Two independent integers, not a flatmap: with ``j`` drawn from a range that depends on
    # ``i``, the shrinker could not lower ``i`` without reinterpreting ``j`` and got stuck on
    # two swaps forming a 3-cycle (about 1 run in 15 of test_reorder_shrinks_to_one_swap).
    def swap_of(first: int, step: int) -> tuple[int, int]:
        return first, first + 1 + step % (count - 1 - first)

    swap = st.builds(swap_of, st.integers(0, count - 2), st.integers(0, count - 2))

    def compose(swaps: list[tuple[int, int]]) -> ReorderSections:
        order = list(range(count))
        for i, j in swaps:
            order[i], order[j] = order[j], order[i]
        return ReorderSections(tuple(order))

    # A list of swaps shrinks to one swap of the first two sections.
    return (
        st.lists(swap, min_size=1, max_size=count - 1)
        .map(compose)
        .filter(lambda p: not p.is_identity)
    )


# --------------------------------------------------------------------------------------------
# Stratified first examples: every kind of edit within the first few
# --------------------------------------------------------------------------------------------

_REFORMAT_ASPECTS: tuple[tuple[str, tuple[Reformat, ...]], ...] = (
    # (kind of edit, its one-aspect reformats in the order they are tried)
    ("indentation", tuple(Reformat(indent=n) for n in (4, 2, 0))),
    ("bullets", tuple(Reformat(bullet=b) for b in BULLETS)),
    ("spacing", tuple(Reformat(blank_lines=n) for n in (2, 0, 1))),
    ("case", (Reformat(heading_case="upper"), Reformat(heading_case="title"))),
)


def stratified(kind: str, text: str, *, ocr_rate: float = 0.02) -> tuple[Perturbation, ...]:
    """The first examples of a search of ``kind``: each kind of edit on its own, in turn.

    ``ocr-noise``: one example per kind of edit (digit/letter, letter shapes, ligatures,
    spacing), each applying that kind at sites spread over the text, up to the rate's bound.
    ``reformat``: one aspect at a time (indentation, bullets, blank lines, heading case), going
    round the aspects so each appears among the first four, then their other values.
    ``reorder-sections``: each later section moved to the front, the first moved to the end,
    then the reverse order. Every example changes the text; a text that admits no change of
    ``kind`` has none.
    """
    return tuple(example for _, example in _strata(kind, text, ocr_rate))


def edit_kinds(kind: str, text: str, *, ocr_rate: float = 0.02) -> tuple[str, ...]:
    """The kinds of edit a search of ``kind`` can make on ``text``, in the order it tries them."""
    return tuple(dict.fromkeys(name for name, _ in _strata(kind, text, ocr_rate)))


def coverage(kind: str, text: str, examples: int, *, ocr_rate: float = 0.02) -> tuple[int, int]:
    """(kinds of edit tried, kinds of edit there are) by a search of ``examples`` examples."""
    strata = _strata(kind, text, ocr_rate)
    tried = {name for name, _ in strata[: max(1, examples)]}
    return len(tried), len({name for name, _ in strata})


def _strata(kind: str, text: str, ocr_rate: float) -> list[tuple[str, Perturbation]]:
    if kind == "ocr-noise":
        return _ocr_strata(text, _checked_rate(ocr_rate))
    if kind == "reformat":
        return _reformat_strata(text)
    if kind == "reorder-sections":
        return _reorder_strata(text)
    perturbations(kind, text)  # refuses the unknown kind with the usual sentence
    return []


def _ocr_strata(text: str, rate: float) -> list[tuple[str, Perturbation]]:
    sites = _ocr_sites(text)
    if not sites:
        return []
    most = _ocr_most_edits(text, sites, rate)
    strata: list[tuple[str, Perturbation]] = []
    for edit_kind in OCR_EDIT_KINDS:
        of_kind = list({s.position: s for s in reversed(sites) if s.kind == edit_kind}.values())
        of_kind.sort(key=lambda s: s.position)
        if not of_kind:
            continue
        # spread over the text: a kind's sites at the top and at the bottom both get edited
        step = len(of_kind) / min(most, len(of_kind))
        chosen = [of_kind[int(i * step)] for i in range(min(most, len(of_kind)))]
        strata.append((edit_kind, _ocr_of(chosen)))
    return strata


def _reformat_strata(text: str) -> list[tuple[str, Perturbation]]:
    per_aspect = [
        [(edit_kind, reformat) for reformat in reformats if reformat.apply(text) != text]
        for edit_kind, reformats in _REFORMAT_ASPECTS
    ]
    # round the aspects: every aspect once, then each one's next value
    rounds = itertools.zip_longest(*(aspect for aspect in per_aspect if aspect))
    return [entry for round_ in rounds for entry in round_ if entry is not None]


def _reorder_strata(text: str) -> list[tuple[str, Perturbation]]:
    headings = find_sections(text)
    count = len(headings)
    if count < 2:
        return []
    strata: list[tuple[str, Perturbation]] = []
    for moved in range(1, count):
        order = (moved, *(i for i in range(count) if i != moved))
        strata.append((f"{headings[moved]} first", ReorderSections(order)))
    if count > 2:
        strata.append((f"{headings[0]} last", ReorderSections((*range(1, count), 0))))
        strata.append(("reversed", ReorderSections(tuple(reversed(range(count))))))
    return strata
