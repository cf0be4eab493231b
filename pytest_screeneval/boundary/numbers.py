"""Numbers from outside (a file, an option, a scorer, a server) are finite or refused.

``nan`` compares false with everything: a rubric weight of ``.nan`` made every overall score
NaN and every check pass. So the readers of numbers ask :func:`is_finite_number` before they
use one, and refuse the value with a sentence of their own (they know the file and line).
"""

from __future__ import annotations

import math

__all__ = ["is_finite_number"]


def is_finite_number(value: object) -> bool:
    """A real number (not a bool) that is neither NaN nor infinite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return True
    return math.isfinite(value)
