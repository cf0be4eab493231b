"""SIGTERM and SIGINT end a run the way Ctrl-C does, and the run says which signal stopped it.

A CI runner cancelling a job, a container stopping, or ``kill`` send SIGTERM, whose default
action ends the process at once: no summary, no JUnit file, and the run left ``running``. While
``--screeneval`` runs, SIGTERM raises KeyboardInterrupt in the main thread instead, so pytest
stops the session and the run closes as ``interrupted``. Only a signal whose handler is still
Python's default is taken over, and it is given back when the session ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

__all__ = ["StopSignals"]


class StopSignals:
    """The signals that stopped the session (their names), recorded as they arrive."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        defaults = {
            signal.SIGTERM: (signal.SIG_DFL,),
            signal.SIGINT: (signal.default_int_handler,),
        }
        for signum, taken_over in defaults.items():
            current = signal.getsignal(signum)
            if current in taken_over:
                self._previous[signum] = current
                signal.signal(signum, self._stop)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if name not in self.received:
            self.received.append(name)
        raise KeyboardInterrupt

    def restore(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def sentence(self) -> str | None:
        if not self.received:
            return None
        return f"the run was stopped by {' then '.join(self.received)}"
