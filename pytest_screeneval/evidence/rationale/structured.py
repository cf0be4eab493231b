"""Structured rationales made plain: JSON, fenced code and markdown read as sentences.

A model asked for a reason often answers with a JSON object, a fenced block or markdown.
Grounding and the protected-term check read what the rationale says, not its syntax: a JSON
string is not a quotation of the resume, a key such as ``"criterion"`` or ``"on_time"`` is not an
employer, and ``**bold**`` is not a word. :func:`plain_text` keeps the values (each string and
number a sentence of its own), drops the keys and the score, and strips markdown marks. Shape
checks (length, sentences, naming the criterion) still read the original text.

Pure and dependency-free (the standard library's ``json``).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

__all__ = ["plain_text"]

# Keys whose values are the answer's bookkeeping, not its reasons.
_BOOKKEEPING = frozenset(
    {"score", "rating", "level", "criterion", "criteria", "confidence", "id", "name", "grade"}
)
_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
_TABLE_RULE = re.compile(
    r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M
)
_EMPHASIS = re.compile(r"\*\*|__|`+|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")
_UNDERSCORE = re.compile(r"(?<![\w])_(\S(?:[^_\n]*\S)?)_(?![\w])")
_PIPE = re.compile(r"[ \t]*\|[ \t]*")
_LIST_MARKER = re.compile(r"^[ \t]*(?:\d{1,2}[.)]|[-*+\u2022])[ \t]+", re.MULTILINE)


@lru_cache(maxsize=2048)
def plain_text(text: str) -> str:
    """The rationale as plain sentences: JSON values, markdown without its marks."""
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    stripped = body.strip()
    if stripped[:1] in "{[" and stripped[-1:] in "}]":
        try:
            data = json.loads(stripped)
        except ValueError:
            pass
        else:
            sentences = [s for s in _values(data, None) if s]
            return "\n".join(f"{s.rstrip('.')}." for s in sentences)
    body = _LIST_MARKER.sub("", body)
    if not any(mark in body for mark in ("*", "_", "#", "|", "`")):
        return body
    body = _TABLE_RULE.sub("", body)
    body = _HEADING.sub("", body)
    body = _UNDERSCORE.sub(r"\1", body)
    body = _EMPHASIS.sub("", body)
    lines = []
    for line in body.splitlines():
        if "|" in line:
            cells = [cell for cell in _PIPE.split(line.strip().strip("|")) if cell.strip()]
            line = "; ".join(cells)
        lines.append(line)
    return "\n".join(lines)


def _values(data: object, key: str | None) -> list[str]:
    """Every string and number in a JSON value, in order, bookkeeping keys left out."""
    if key is not None and key.lower() in _BOOKKEEPING:
        return []
    if isinstance(data, dict):
        found: list[str] = []
        for name, value in data.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                continue  # {"leadership": 4}: a score under the criterion's name
            found.extend(_values(value, str(name)))
        return found
    if isinstance(data, list):
        return [text for item in data for text in _values(item, None)]
    if isinstance(data, str):
        return [data.strip()]
    return []
