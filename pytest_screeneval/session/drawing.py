"""Perturbation examples drawn beside the scoring, in a process of their own when there are many.

Drawing is Hypothesis searches, ~10 ms of CPU per (case, kind). In the session's process it would
hold the GIL that the runner's event loop needs for every answer (the openai client alone takes
several ms of CPU per call): on 200 cases, drawing there made scoring ~40% slower than the same
calls from a bare asyncio loop. A set with many searches therefore draws in one spawned worker
process while the calls go; a small one draws inline, cheaper than starting a process. Both give
the same texts: the searches are seeded by case and kind (``probes.draw``).

Results are taken in item order only, by the session's main thread at points where it is safe
to queue calls (before a case settles, and while it waits): no thread touches the queue but it.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pytest_screeneval.probes.draw import draw_case
from pytest_screeneval.session.worker_process import spawn_worker

__all__ = ["DrawRequest", "ExampleDrawer"]

# Searches from which a worker process pays for itself (it takes ~1 s of CPU to start, on
# the other core).
PROCESS_FROM_SEARCHES = 60


@dataclass(frozen=True)
class DrawRequest:
    """One case's perturbation kinds to draw examples of."""

    case_id: str
    kinds: tuple[str, ...]
    text: str
    examples: int


class ExampleDrawer:
    def __init__(
        self, requests: Sequence[DrawRequest], *, process_from: int = PROCESS_FROM_SEARCHES
    ) -> None:
        self._requests = list(requests)
        self._position = {r.case_id: i for i, r in enumerate(self._requests)}
        self._next = 0
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._futures: list[concurrent.futures.Future[list[tuple[str, list[str]]]]] = []
        searches = sum(len(r.kinds) for r in self._requests)
        if searches >= process_from:
            self._start_worker()
        if self._pool is None:
            for r in self._requests:
                done: concurrent.futures.Future[list[tuple[str, list[str]]]]
                done = concurrent.futures.Future()
                done.set_result(draw_case(r.case_id, r.kinds, r.text, r.examples))
                self._futures.append(done)

    def _start_worker(self) -> None:
        self._pool = spawn_worker()
        if self._pool is None:
            return  # no processes here (a sandbox without semaphores): draw inline, the same texts
        try:
            self._futures = [
                self._pool.submit(draw_case, r.case_id, r.kinds, r.text, r.examples)
                for r in self._requests
            ]
        except RuntimeError:  # the worker broke as it started: draw inline
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool, self._futures = None, []

    @property
    def last_case(self) -> str | None:
        return self._requests[-1].case_id if self._requests else None

    @property
    def in_process(self) -> bool:
        """Whether drawing runs inline (no worker process)."""
        return self._pool is None

    def take(self, through: str | None = None) -> Iterator[tuple[str, str, list[str]]]:
        """(case id, kind, texts) of every case drawn so far, in request order.

        With ``through``, waits for the cases up to and including that one; otherwise stops at
        the first case not drawn yet. A failed draw raises here, in the caller's thread.
        """
        wanted = self._position.get(through) if through is not None else None
        if wanted is not None and wanted < self._next:
            wanted = None  # taken already: only what is ready comes
        while self._next < len(self._requests):
            future = self._futures[self._next]
            if not future.done() and (wanted is None or self._next > wanted):
                return
            drawn = future.result()
            case_id = self._requests[self._next].case_id
            self._next += 1
            for kind, texts in drawn:
                yield case_id, kind, texts

    def close(self) -> None:
        """Stop drawing what is left (the run ended or stopped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
