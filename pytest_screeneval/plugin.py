"""pytest glue (being built): registers the options so the entry point loads."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("screeneval", "screeneval: regression tests for AI resume screeners")
    group.addoption(
        "--screeneval",
        action="store_true",
        default=False,
        help="Score the golden set, record a run, assert and gate.",
    )
