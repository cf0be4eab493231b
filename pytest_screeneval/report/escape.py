"""Text from a scorer, shown on a terminal without letting it drive the terminal.

A rationale is untrusted text: ``\\x1b[2K\\r... PASSED`` in one would erase the line pytest just
printed and fake another. Every terminal block (failure blocks, the summary) passes scorer text
through :func:`terminal_safe`, which writes control characters as visible escapes. Newlines and
tabs stay (a block is several lines); carriage returns, escapes, backspaces, the other C0/C1
controls and the bidirectional overrides that can reorder what a line appears to say do not.
"""

from __future__ import annotations

import unicodedata

__all__ = ["terminal_safe"]

_KEPT = frozenset("\n\t")
# bidirectional embeddings, overrides and isolates (Trojan Source, CVE-2021-42574)
_BIDI = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


def _escaped(char: str) -> str:
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape."""
    if text.isprintable() and not (_BIDI & set(text)):
        return text  # the common case, no copy
    return "".join(
        _escaped(char)
        if char not in _KEPT and (unicodedata.category(char) == "Cc" or char in _BIDI)
        else char
        for char in text
    )
