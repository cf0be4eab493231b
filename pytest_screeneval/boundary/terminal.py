"""The one function every line printed by pytest or the ``screeneval`` command passes.

Text shown on a terminal is data, not commands: ``\\x1b[2K\\r... PASSED`` in a rationale, a
server's error, an accepted-by name or a scorer's name would erase the line pytest just printed
and fake another. :func:`terminal_safe` writes control characters as visible escapes (newlines
and tabs stay: a block is several lines; carriage returns, escapes, backspaces, the other C0/C1
controls, lone surrogates and the bidirectional overrides that can reorder what a line appears
to say do not), after the redactor (:mod:`.secrets`) has taken out every secret the run knows.
"""

from __future__ import annotations

import unicodedata

from pytest_screeneval.boundary.secrets import redact

__all__ = ["terminal_safe"]

_KEPT = frozenset("\n\t")
# bidirectional embeddings, overrides and isolates (Trojan Source, CVE-2021-42574)
_BIDI = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


def _escaped(char: str) -> str:
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _unsafe(char: str) -> bool:
    return char not in _KEPT and (unicodedata.category(char) in ("Cc", "Cs") or char in _BIDI)


def terminal_safe(text: str) -> str:
    """``text`` redacted, with every control character but newline and tab written as an
    escape."""
    text = redact(str(text))
    if text.isprintable() and not (_BIDI & set(text)):
        return text  # the common case, no copy
    return "".join(_escaped(char) if _unsafe(char) else char for char in text)
