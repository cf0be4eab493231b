"""Whether every selected item ran: what makes a run ``complete`` rather than ``partial``.

Registered on the process that owns the run (a plain session, or the xdist controller, which
receives every worker's reports). It counts the items that reached a final report and notes what
stopped the others: ``-x``/``--maxfail`` (pytest's ``session.shouldstop``), a crashed xdist
worker (``pytest_handlecrashitem``), or a store write that failed. A run with any of those, or
with fewer items finished than selected, is ``partial``, and :meth:`Completeness.missing` is the
sentence the summary and the run's verdict carry.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["WRITE_ERROR_PROPERTY", "Completeness"]

# the user property an item's report carries when the rows it was judged on could not be stored
WRITE_ERROR_PROPERTY = "screeneval_write_error"

_SHOWN = 3


class Completeness:
    def __init__(self, *, distributed: bool) -> None:
        self.distributed = distributed
        self.finished: set[str] = set()
        self.crashed: list[str] = []
        self.write_errors: list[str] = []
        self.unstored_items: dict[str, str] = {}  # item -> why its rows' write failed
        self.stopped_by: str | None = None  # "the run was stopped by SIGTERM"

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # an item has run once its call phase reported, or its setup failed or skipped it
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.finished.add(report.nodeid)
        for name, value in report.user_properties:
            if name == WRITE_ERROR_PROPERTY:
                self.unstored_items.setdefault(report.nodeid, str(value))

    def write_error(self, clause: str) -> None:
        if clause not in self.write_errors:
            self.write_errors.append(clause)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        self.crashed.append(crashitem)

    def selected(self, session: pytest.Session) -> int:
        # the controller collects nothing itself: xdist sets testscollected from the workers
        return int(session.testscollected) if self.distributed else len(session.items)

    def missing(self, session: pytest.Session) -> str | None:
        """What keeps the run from being complete, in one clause; None when nothing does."""
        parts: list[str] = []
        selected = self.selected(session)
        not_run = selected - len(self.finished)
        if not_run > 0:
            parts.append(f"{not_run} of {selected} selected items did not run")
        if self.crashed:
            shown = ", ".join(self.crashed[:_SHOWN])
            more = f" and {len(self.crashed) - _SHOWN} more" if len(self.crashed) > _SHOWN else ""
            parts.append(f"a worker crashed while running {shown}{more}")
        maxfail = int(getattr(session.config.option, "maxfail", 0) or 0)
        if maxfail and session.testsfailed >= maxfail and not_run > 0:
            parts.append(f"stopped by -x/--maxfail after {session.testsfailed} failure(s)")
        elif session.shouldstop:
            parts.append(f"the session stopped early ({session.shouldstop})")
        if self.stopped_by is not None:
            parts.append(self.stopped_by)
        if self.unstored_items:
            count = len(self.unstored_items)
            parts.append(
                f"{count} item(s) failed because their score rows could not be stored "
                f"(the first: {next(iter(self.unstored_items.values()))})"
            )
        parts.extend(self.write_errors)
        return "; ".join(parts) or None
