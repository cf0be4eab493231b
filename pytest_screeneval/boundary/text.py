"""Text that enters the program (a scorer's answer, a server's body, a case file), made safe once.

What is unsafe is the same for every entry and every store backend:

* a lone surrogate (half of an emoji cut in two, or a ``"\\ud83d"`` escape in JSON) cannot be
  encoded as UTF-8: SQLite and PostgreSQL both refuse it, and so do the JUnit and JSON files;
* NUL is refused by PostgreSQL text columns (the whole batch of rows was lost) and kept by SQLite;
* the other C0 and C1 control characters (escape sequences, backspaces) mean nothing in a
  rationale and can drive a terminal that later shows it.

:func:`clean_text` replaces each of them by U+FFFD (the replacement character), so an answer is
kept, on either backend, and shows where something was removed; tab, newline, carriage return
and NEL (line breaks) stay. :func:`unsafe_character` names the first one, for the readers that
refuse instead (a case file is a person's text: it is corrected, not rewritten).
:func:`bounded` cuts a text over a limit and says so in the text itself, so the flag travels with
it into the store and every report. :func:`nfc` is the one normalisation of names (ids,
criteria, attribute values): "José" typed two ways is one name.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CUT_MARK",
    "MAX_ANSWER_CHARS",
    "REPLACEMENT",
    "bounded",
    "clean_text",
    "nfc",
    "unsafe_character",
    "was_cut",
]

REPLACEMENT = "\ufffd"
# C0 controls but tab, newline and carriage return; DEL and the C1 controls but NEL (U+0085, a
# line break to YAML and Unicode, kept like a newline); lone surrogates
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")
# A rationale, an error or a raw answer longer than this is cut: a model's rationale is rarely a
# thousand characters, and a 10 MB one was stored, shown and checked as is.
MAX_ANSWER_CHARS = 20_000
CUT_MARK = " [cut at {limit:,} of {total:,} characters]"
_CUT = re.compile(r" \[cut at [\d,]+ of [\d,]+ characters\]\Z")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate, NUL and control character (but tab, newline and
    carriage return, and NEL) replaced by U+FFFD."""
    if _UNSAFE.search(text) is None:
        return text  # the common case, no copy
    return _UNSAFE.sub(REPLACEMENT, text)


def unsafe_character(text: str) -> str | None:
    """The first character :func:`clean_text` would replace, described ("NUL (U+0000) at
    character 12"), or None."""
    found = _UNSAFE.search(text)
    if found is None:
        return None
    code = ord(found.group(0))
    if 0xD800 <= code <= 0xDFFF:
        what = "a lone surrogate"
    elif code == 0:
        what = "NUL"
    else:
        what = "a control character"
    return f"{what} (U+{code:04X}) at character {found.start() + 1}"


def bounded(text: str, limit: int = MAX_ANSWER_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the cut said at its end; unchanged when it fits."""
    if len(text) <= limit:
        return text
    return text[:limit] + CUT_MARK.format(limit=limit, total=len(text))


def was_cut(text: str) -> bool:
    """Whether :func:`bounded` cut this text."""
    return _CUT.search(text) is not None


def nfc(text: str) -> str:
    """The NFC (composed) form: the one spelling of a name however it was typed."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", text)
