"""Counterfactual variants: rewrite one attribute of a case, and measure the gaps.

A variant is the same resume with exactly one attribute changed: a name, a college, a career-gap
line. The job requirements do not change, so the ideal score gap across an attribute's values is
zero; the gap actually measured is evidence of how much the scorer leans on that attribute.

Two kinds of attribute:

* replace (a name, a college, any text a user declares): the case's current value is replaced
  wherever it appears as a whole phrase, in its written case and in capitals (resume headers are
  often all caps). For ``name`` the first name alone and the last name alone are rewritten too,
  so "Ms. Lee" and "Ann's" follow the new name. A possessive ("Lee's") is rewritten as the new
  value + "'s"; words that merely contain the value ("Leeds", "Annabel", "Lee-Smith",
  "O'Lee") are left alone.
* insert (a career-gap line): ``None`` removes the current gap line, text puts that line right
  after the line named by ``GapPlacement.after`` (or rewrites the current gap line in place).

Pure module: no pytest, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import (
    ORIGINAL,
    AttributeValue,
    Case,
    GapPlacement,
    Variants,
    VariantValue,
)

__all__ = [
    "CounterfactualError",
    "VariantScores",
    "attribute_kind",
    "case_variants",
    "variant_key",
    "variant_text",
    "with_attribute",
]

NAME_ATTRIBUTE = "name"
REPLACE = "replace"
INSERT = "insert"

# A phrase is "whole" when it is not glued to more word: not preceded by a word character (or by
# a word character and an apostrophe or hyphen, as in O'Lee or Smith-Lee), and not followed by a
# word character or by an apostrophe/hyphen joined to more word (Lee-Smith), except the
# possessive 's, which belongs to the name and is kept after the new value.
_LEFT_EDGE = r"(?<!\w)(?<!\w['’-])"
_RIGHT_EDGE = r"(?:(?=['’]s(?!\w))|(?!\w)(?!['’-]\w))"
_BULLET_OR_SPACE = " \t•*-–·"


class CounterfactualError(ScreenevalError):
    """A variant cannot be made: the attribute or its current value is not in the case."""


# --------------------------------------------------------------------------------------------
# Rewriting one attribute
# --------------------------------------------------------------------------------------------


def attribute_kind(case: Case, attribute: str, variants: Variants | None = None) -> str:
    """``replace`` or ``insert``: from the variants file when it names the attribute, else from
    the type of the value stored on the case."""
    if variants is not None and attribute in variants.attributes:
        return variants.attributes[attribute].kind
    stored = case.attributes.get(attribute)
    return INSERT if isinstance(stored, GapPlacement) else REPLACE


def with_attribute(
    case: Case, attribute: str, value: str | None, variants: Variants | None = None
) -> Case:
    """A copy of ``case`` whose text has ``attribute`` set to ``value`` and nothing else changed.

    ``case.attributes[attribute]`` of the copy holds the new value (for an insert-type attribute
    a ``GapPlacement`` with the same ``after``). Raises :class:`CounterfactualError` when the case
    does not carry the attribute, or its current value cannot be found in the text.
    """
    if attribute not in case.attributes:
        raise _refuse(case, attribute, value, "the case has no such attribute")
    current = case.attributes[attribute]
    kind = attribute_kind(case, attribute, variants)
    if kind == INSERT:
        if not isinstance(current, GapPlacement):
            raise _refuse(
                case, attribute, value, "it is an insert-type attribute but the case stores text"
            )
        text, placement = _rewrite_insert(case, attribute, current, value)
        new_value: AttributeValue = placement
    else:
        if isinstance(current, GapPlacement):
            raise _refuse(
                case, attribute, value, "it is a replace-type attribute but the case stores a line"
            )
        if value is None or not value.strip():
            raise _refuse(case, attribute, value, "a replace-type attribute needs a text value")
        text = _rewrite_replace(case, attribute, current, value)
        new_value = value
    attributes: dict[str, AttributeValue] = dict(case.attributes)
    attributes[attribute] = new_value
    return replace(case, input_text=text, attributes=attributes)


def _refuse(case: Case, attribute: str, value: str | None, why: str) -> CounterfactualError:
    shown = "no value (None)" if value is None else repr(value)
    return CounterfactualError(
        f"Case {case.id}: cannot set attribute {attribute!r} to {shown} because {why}."
    )


def _replacements(attribute: str, old: str, new: str) -> dict[str, str]:
    """Each written form of the old value → what it becomes; longer forms are matched first."""
    pairs = [(old, new)]
    old_parts, new_parts = old.split(), new.split()
    if attribute == NAME_ATTRIBUTE and len(old_parts) >= 2:
        # A resume says "Ms. Lee" or "Ann's" as often as the full name; both must follow.
        pairs.append((old_parts[0], new_parts[0]))
        pairs.append((old_parts[-1], new_parts[-1]))
    forms: dict[str, str] = {}
    for seen, meant in pairs:
        forms.setdefault(seen, meant)
        # Headers are often in capitals: "ANN LEE" is the same name.
        forms.setdefault(seen.upper(), meant.upper())
    return forms


def _phrase_pattern(forms: Mapping[str, str]) -> re.Pattern[str]:
    alternatives = sorted(forms, key=len, reverse=True)
    body = "|".join(re.escape(form) for form in alternatives)
    return re.compile(f"{_LEFT_EDGE}(?:{body}){_RIGHT_EDGE}")


def _rewrite_replace(case: Case, attribute: str, old: str, new: str) -> str:
    whole = _phrase_pattern({old: new, old.upper(): new.upper()})
    if not whole.search(case.input_text):
        raise _refuse(
            case, attribute, new, f"its current value {old!r} is not in the text as a whole phrase"
        )
    forms = _replacements(attribute, old, new)
    # One pass over the text, so a replacement is never itself replaced again.
    return _phrase_pattern(forms).sub(lambda m: forms[m.group(0)], case.input_text)


def _rewrite_insert(
    case: Case, attribute: str, current: GapPlacement, value: str | None
) -> tuple[str, GapPlacement]:
    if value is not None and ("\n" in value or not value.strip()):
        raise _refuse(case, attribute, value, "a gap line must be one non-empty line")
    lines = case.input_text.splitlines(keepends=True)
    placed = GapPlacement(value=value, after=current.after)
    if current.value is not None:
        index = _gap_line_index(case, attribute, lines, current.value, value)
        if value is None:
            del lines[index]
            if index == len(lines) and index > 0 and not case.input_text.endswith("\n"):
                # The gap was the last line: its separator was the previous line's newline.
                lines[index - 1] = lines[index - 1].rstrip("\r\n")
        else:
            # Rewrite in place so the line keeps its indentation and bullet.
            lines[index] = lines[index].replace(current.value, value, 1)
        return "".join(lines), placed
    if value is None:
        return case.input_text, placed
    after = _after_line_index(lines, current.after)
    if after is None:
        raise _refuse(
            case, attribute, value, f"the line {current.after!r} it goes after is not in the text"
        )
    anchor = lines[after]
    indent = anchor[: len(anchor) - len(anchor.lstrip(" \t"))]
    if anchor.endswith("\n"):
        lines.insert(after + 1, f"{indent}{value}\n")
    else:
        lines[after] = anchor + "\n"
        lines.insert(after + 1, f"{indent}{value}")
    return "".join(lines), placed


def _gap_line_index(
    case: Case, attribute: str, lines: list[str], current: str, value: str | None
) -> int:
    for index, line in enumerate(lines):
        if current in line:
            rest = line.replace(current, "", 1).strip(_BULLET_OR_SPACE + "\r\n")
            if rest:
                raise _refuse(
                    case,
                    attribute,
                    value,
                    f"its current line {current!r} shares its line with other text",
                )
            return index
    raise _refuse(case, attribute, value, f"its current value {current!r} is not in the text")


def _after_line_index(lines: list[str], after: str) -> int | None:
    wanted = after.strip()
    for index, line in enumerate(lines):
        if line.strip() == wanted:
            return index
    for index, line in enumerate(lines):
        if wanted in line:
            return index
    return None


# --------------------------------------------------------------------------------------------
# Variants of a case, and their keys
# --------------------------------------------------------------------------------------------

_MAX_KEY_VALUE = 60


def variant_key(attribute: str, value: str | None) -> str:
    """A stable short key for a variant's score rows: ``name=Dana Okafor``, ``gap=none``.

    Whitespace is collapsed; a value longer than 60 characters is cut and ends with ``~`` and
    the first 8 hex digits of its sha256, so two long values never share a key.
    """
    if value is None:
        return f"{attribute}=none"
    shown = " ".join(value.split())
    if len(shown) > _MAX_KEY_VALUE:
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
        shown = f"{shown[: _MAX_KEY_VALUE - 9].rstrip()}~{digest}"
    return f"{attribute}={shown}"


def case_variants(case: Case, variants: Variants) -> dict[str, list[tuple[VariantValue, Case]]]:
    """For each attribute of ``variants`` the case carries: every value and the case rewritten
    to it, in the variants file's order. The case's own value, when listed, yields its own text."""
    result: dict[str, list[tuple[VariantValue, Case]]] = {}
    for name, spec in variants.attributes.items():
        if name not in case.attributes:
            continue
        result[name] = [(v, with_attribute(case, name, v.value, variants)) for v in spec.values]
    return result


def variant_text(case: Case, variants: Variants, key: str) -> str | None:
    """The text a variant key stands for: the case's own for ``ORIGINAL``, else the rewritten
    counterfactual variant's; None for a key no variant of this case has (a perturbation's)."""
    if key == ORIGINAL:
        return case.input_text
    for attribute, values in case_variants(case, variants).items():
        for value, variant in values:
            if variant_key(attribute, value.value) == key:
                return variant.input_text
    return None


# --------------------------------------------------------------------------------------------
# Gaps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VariantScores:
    """What one variant of one case scored: overall (0–100) and per criterion (scale points)."""

    overall: float
    criteria: Mapping[str, float] = field(default_factory=dict)
