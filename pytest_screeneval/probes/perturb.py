"""Perturbations of resume text, as Hypothesis strategies for the (case, perturbation[kind]) items.

A scorer that reads content, not layout, gives the same scores when a resume is reformatted,
when its text carries a little OCR noise, or when its sections come in another order. Each
perturbation is a frozen value saying exactly what it did, so a failure can show it and
``apply(text)`` reproduces it. Strategies shrink towards the smallest change: one OCR
confusion, one swap of two sections, one formatting aspect.

What each kind may change (and the tests check): ``reformat`` and ``reorder-sections`` keep the
multiset of words (reformat may change a heading's letter case); ``ocr-noise`` changes only
characters a scanner confuses (l/1/I, O/0, S/5, rn/m).

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
    "PERTURBATION_KINDS",
    "OcrEdit",
    "OcrNoise",
    "Perturbation",
    "PerturbationError",
    "Reformat",
    "ReorderSections",
    "describe",
    "find_sections",
    "perturbations",
]

PERTURBATION_KINDS = ("reformat", "ocr-noise", "reorder-sections")

# What a scanner reads for what is printed. Multi-character sources come first so "rn" is seen
# as one site, not as an "r" and an "n".
OCR_CONFUSIONS: tuple[tuple[str, str], ...] = (
    ("rn", "m"),
    ("m", "rn"),
    ("l", "1"),
    ("1", "l"),
    ("l", "I"),
    ("I", "l"),
    ("O", "0"),
    ("0", "O"),
    ("S", "5"),
    ("5", "S"),
)

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
        if not 0 < ocr_rate <= 1:
            raise PerturbationError(f"ocr_rate must be above 0 and at most 1, got {ocr_rate:g}.")
        return _ocr_noise(text, ocr_rate)
    if kind == "reformat":
        return _reformats(text)
    if kind == "reorder-sections":
        return _reorders(text)
    raise PerturbationError(
        f"Unknown perturbation kind {kind!r} (known kinds: {', '.join(PERTURBATION_KINDS)})."
    )


def _ocr_sites(text: str) -> list[OcrEdit]:
    sites: list[OcrEdit] = []
    position = 0
    while position < len(text):
        matched = False
        for original, replacement in OCR_CONFUSIONS:
            if text.startswith(original, position):
                sites.append(OcrEdit(position, original, replacement))
                matched = matched or len(original) > 1
        # A two-character site ("rn") covers both characters; no other site may overlap it.
        position += 2 if matched else 1
    return sites


def _ocr_noise(text: str, rate: float) -> st.SearchStrategy[Perturbation]:
    sites = _ocr_sites(text)
    if not sites:
        return st.just(OcrNoise())
    positions = len({site.position for site in sites})
    most = max(1, min(positions, math.ceil(rate * len(text))))

    def noise(edits: list[OcrEdit]) -> Perturbation:
        first_per_position = {e.position: e for e in reversed(edits)}
        return OcrNoise(tuple(sorted(first_per_position.values(), key=lambda e: e.position)))

    # A plain list (deduplicated afterwards) shrinks by deleting elements, down to one edit.
    return st.lists(st.sampled_from(sites), min_size=1, max_size=most).map(noise)


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
