"""tests/slow: loads the libraries an in-process pytester run must not import first
(``support.preload`` says why)."""

from __future__ import annotations

import support.preload  # noqa: F401
