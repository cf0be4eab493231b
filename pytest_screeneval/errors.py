"""User-facing errors: one plain sentence saying what went wrong and where.

Every error a user can cause (bad YAML, a changed frozen case, an unreachable database, a scorer
that misbehaves) is raised as a :class:`ScreenevalError`. The plugin and the CLI print its message
alone, never a traceback.

The message is exception text that reaches the terminal, JUnit and the store: ``str()`` of every
one of these passes the boundary (no known secret, no URL password, no control character), so
no path that prints or records an error can skip it.
"""

from __future__ import annotations

__all__ = ["GoldenSetError", "ScreenevalError", "StoreError", "StoreUnavailable"]


class ScreenevalError(Exception):
    """An error caused by the user's input or environment, worded for them."""

    def __str__(self) -> str:
        from pytest_screeneval.boundary.terminal import terminal_safe

        return terminal_safe(super().__str__())


class GoldenSetError(ScreenevalError):
    """The golden set on disk or in the store is invalid."""


class StoreError(ScreenevalError):
    """The run store cannot be used (unreachable, locked, full, wrong schema, refused change)."""


class StoreUnavailable(StoreError):
    """The store could not take a write just now (connection lost, locked, full, read-only):
    the same write may succeed later, so what was to be written is kept and tried again."""
