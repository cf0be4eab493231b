"""The threads that run a plain ``def`` scorer's calls, kept from one call to the next.

Daemon threads, never joined: a call that hangs past its timeout must not hold the session (or
Ctrl-C) until it returns on its own, which is why this is not ``asyncio.to_thread`` (its pool is
joined when the run ends). Kept, not one per call: with a thread, a task and a timer per call,
2,000 instant calls took the runner 1.05 s of interpreter time, which the thread running the
items shares; kept threads and one queue take 0.33 s (concurrency 4). A free thread takes the
next call; a new one starts only when none is free, so there are never more than the calls out
at once, plus the hung ones.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["CallThreads"]

_Argument = TypeVar("_Argument")
_Outcome = TypeVar("_Outcome")


class CallThreads(Generic[_Argument, _Outcome]):
    """Runs ``call(argument)`` on a free thread and hands its outcome to ``deliver``.

    The thread counts as free before it delivers: whoever hears the answer (the runner's loop,
    which sends the next call at once) finds it free, instead of starting another thread.
    Neither ``call`` nor ``deliver`` may raise: nobody is there to hear it.
    """

    def __init__(
        self,
        name: str,
        call: Callable[[_Argument], _Outcome],
        deliver: Callable[[_Outcome], None],
    ) -> None:
        self.name = name
        self._call = call
        self._deliver = deliver
        self._work: queue.SimpleQueue[tuple[_Argument] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for work that no call has claimed yet
        self._closed = False
        self.started = 0  # threads started so far (tests check that they are kept)

    def run(self, argument: _Argument) -> None:
        """Run one call on a free thread, or on a new one when none is free."""
        with self._lock:
            claimed = self._idle > 0
            if claimed:
                self._idle -= 1
            else:
                self.started += 1
        self._work.put((argument,))
        if not claimed:
            threading.Thread(target=self._serve, name=self.name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            work = self._work.get()
            if work is None:
                return
            outcome = self._call(work[0])
            with self._lock:
                closed = self._closed
                if not closed:
                    self._idle += 1
            self._deliver(outcome)
            if closed:
                return  # a call that outlived the run: its thread ends with it

    def close(self) -> None:
        """Let the free threads end now, and the busy ones when their call returns."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._work.put(None)
