"""Kept for imports from before the boundary package: the function is
:func:`pytest_screeneval.boundary.terminal.terminal_safe`."""

from __future__ import annotations

from pytest_screeneval.boundary.terminal import terminal_safe

__all__ = ["terminal_safe"]
