"""User-facing errors: one plain sentence saying what went wrong and where.

Every error a user can cause (bad YAML, a changed frozen case, an unreachable database, a scorer
that misbehaves) is raised as a :class:`ScreenevalError`. The plugin and the CLI print its message
alone, never a traceback.
"""

from __future__ import annotations

__all__ = ["GoldenSetError", "ScreenevalError", "StoreError"]


class ScreenevalError(Exception):
    """An error caused by the user's input or environment, worded for them."""


class GoldenSetError(ScreenevalError):
    """The golden set on disk or in the store is invalid."""


class StoreError(ScreenevalError):
    """The run store cannot be used (unreachable, locked, full, wrong schema, refused change)."""
