"""Collects what confirmation concluded for each item, from the items' reports.

An item whose difference did not hold against the scorer's noise passes, with the user property
``screeneval.outcome`` = ``unstable`` (or ``unconfirmed`` when the confirmation budget was spent)
and its reason as a report section. Reports reach the controller of an ``-n`` run too, so this
one place gathers them for the summary in either mode: they are counted and listed, never a
silent pass.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

__all__ = ["OutcomeCollector"]


class OutcomeCollector:
    def __init__(self, note: Callable[[str, str, str], None]) -> None:
        self.note = note  # the session's: node id, outcome, one line

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        properties = dict(report.user_properties)
        outcome = properties.get("screeneval.outcome")
        if outcome:
            line = str(properties.get("screeneval.confirmation", ""))
            self.note(report.nodeid, str(outcome), line)
