"""The progress line of a run: texts scored of those queued, calls in flight, items done."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pytest_screeneval.boundary.terminal import terminal_safe

if TYPE_CHECKING:
    from pytest_screeneval.session.core import ScreenevalSession

__all__ = ["Progress"]


class Progress:
    """A progress line while an item waits for scoring (at most every 2 s, on runs of 20 texts
    or more), and once at the end: texts scored of those queued, calls in flight, items done."""

    def __init__(self, reporter: Any, screeneval: ScreenevalSession) -> None:
        self.reporter = reporter
        self.screeneval = screeneval
        self.last = time.monotonic()
        self.started = time.monotonic()

    def __call__(self, scored: int, total: int, in_flight: int, force: bool = False) -> None:
        if self.reporter is None or total < 20:
            return
        now = time.monotonic()
        if now - self.last < 2.0 and not force:
            return
        self.last = now
        self.reporter.ensure_newline()
        self._write(
            f"screeneval: scored {scored}/{total} inputs, {in_flight} in flight, "
            f"{len(self.screeneval.ran_needs)} items done ({now - self.started:.1f} s)"
        )

    def _write(self, line: str) -> None:
        # a scorer's name and model id are its own text: they must not drive the terminal
        self.reporter.write_line(terminal_safe(line))

    def announce(self, line: str) -> None:
        if self.reporter is not None:
            self._write(line)

    def done(self, screeneval: ScreenevalSession) -> None:
        runner = screeneval.runner
        if runner is not None:
            self(runner.finished, runner.submitted, runner.in_flight, force=True)
        if self.reporter is not None and screeneval.scorer is not None:
            identity = screeneval.scorer.identity
            self._write(
                f"screeneval: run {screeneval.run_id}, scorer {identity.name} "
                f"({identity.model_id}), {screeneval.scored_inputs} inputs scored in "
                f"{time.monotonic() - self.started:.1f} s"
            )
