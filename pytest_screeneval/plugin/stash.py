"""The session's objects in ``config.stash``: the one place the plugin's modules find them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_screeneval.session.core import ScreenevalSession

__all__ = ["SESSION_KEY", "session_of"]

SESSION_KEY = pytest.StashKey["ScreenevalSession"]()


def session_of(config: pytest.Config) -> ScreenevalSession | None:
    return config.stash.get(SESSION_KEY, None)
