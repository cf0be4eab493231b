"""The rationale checks of each answer, worked out ahead of its items when there are many.

Every (case, criterion) item checks its rationale (``evidence.rationale.flags``): ~0.12 ms of
CPU per answer, in the thread that runs pytest's items. On 10,000 items that was a seventh of
the plugin's time, and it holds the GIL that the runner's event loop needs for every answer.
A run with many answers therefore checks them in one spawned worker process as they arrive,
ahead of their items; a small run checks inline, cheaper than starting a process.

Both give the same flags: the worker runs the same function on the same texts with the same
protected terms. An item whose answer the worker has not finished (or could not check) checks
it inline, so nothing waits on the worker and nothing is lost when it is gone.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Sequence

from pytest_screeneval.evidence.rationale.flags import rationale_flags
from pytest_screeneval.evidence.rationale.protected import ProtectedLexicon
from pytest_screeneval.session.worker_process import spawn_worker

__all__ = ["Answer", "RationaleChecks"]

# Checks from which a worker process pays for itself: it takes ~0.2 s of CPU to start, on the
# other core, and saves ~0.12 ms of the items' thread per check.
PROCESS_FROM_CHECKS = 1000
# Answers per task sent to the worker: few enough that the first come back early, enough that
# the hand-over (pickling, the executor's thread) stays a small share of the work.
ANSWERS_PER_TASK = 32

# (criterion, score, rationale, evidence quotes): one answer's part that a check reads
Answer = tuple[str, int, str, tuple[str, ...]]
# an answer's key: the case, then the answer
_Key = tuple[str, str, int, str, tuple[str, ...]]
_Flags = tuple[str, ...]
# a task sent to the worker, and where one answer's flags are in what it returns
_Sent = tuple["concurrent.futures.Future[list[list[_Flags]]]", int, int]

_worker_terms: ProtectedLexicon | None = None


def _start_worker(terms: ProtectedLexicon) -> None:
    """In the worker: keep the run's protected terms (sent once, not with every task)."""
    global _worker_terms
    _worker_terms = terms


def _check(tasks: list[tuple[str, list[Answer]]]) -> list[list[_Flags]]:
    """In the worker: the flags of each answer, per (resume text, answers)."""
    return [
        [
            tuple(rationale_flags(text, c, s, r, e, protected_terms=_worker_terms))
            for c, s, r, e in answers
        ]
        for text, answers in tasks
    ]


class RationaleChecks:
    """The flags of each answer's rationale, computed once (ahead, in a worker, when many)."""

    def __init__(self, terms: ProtectedLexicon) -> None:
        self.terms = terms
        self._known: dict[_Key, _Flags] = {}
        self._ahead: dict[_Key, _Sent] = {}
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._started = False

    @property
    def in_process(self) -> bool:
        """Whether every check runs inline (no worker process)."""
        return self._pool is None

    def expect(self, checks: int, *, process_from: int = PROCESS_FROM_CHECKS) -> None:
        """Start the worker when the run expects at least ``process_from`` checks."""
        if self._started or checks < process_from:
            return
        self._started = True
        self._pool = spawn_worker(_start_worker, (self.terms,))

    def ahead(self, answers: Sequence[tuple[str, str, Sequence[Answer]]]) -> None:
        """Send answers to the worker, as (case id, resume text, answers); inline: nothing."""
        if self._pool is None:
            return
        fresh = [
            (case_id, text, [a for a in batch if (case_id, *a) not in self._known])
            for case_id, text, batch in answers
        ]
        fresh = [(case_id, text, batch) for case_id, text, batch in fresh if batch]
        for start in range(0, len(fresh), ANSWERS_PER_TASK):
            chunk = fresh[start : start + ANSWERS_PER_TASK]
            try:
                future = self._pool.submit(_check, [(text, batch) for _, text, batch in chunk])
            except RuntimeError:  # the pool broke or was shut down: the items check inline
                return
            for task, (case_id, _, batch) in enumerate(chunk):
                for position, answer in enumerate(batch):
                    self._ahead[(case_id, *answer)] = (future, task, position)

    def flags(self, case_id: str, text: str, answer: Answer) -> _Flags:
        """The flags of one answer: worked out ahead if ready, else now."""
        key: _Key = (case_id, *answer)
        known = self._known.get(key)
        if known is not None:
            return known
        sent = self._ahead.pop(key, None)
        if sent is not None:
            future, task, position = sent
            if future.done() and not future.cancelled() and future.exception() is None:
                known = future.result()[task][position]
        if known is None:
            criterion, score, rationale, evidence = answer
            flags = rationale_flags(
                text, criterion, score, rationale, evidence, protected_terms=self.terms
            )
            known = tuple(flags)
        self._known[key] = known
        return known

    def close(self) -> None:
        """Stop checking ahead (the items are done, or the run stopped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._ahead.clear()
