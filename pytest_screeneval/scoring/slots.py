"""The runner's call slots: at most ``concurrency`` calls out, the most urgent waiter next.

asyncio's semaphore wakes waiters first come, first served. The session's queue needs an order
instead: the texts of the case whose items run next go first, and a text an item is waiting for
right now (a confirmation re-score, a shrinking candidate) goes before all of them, even though
it was asked for after hundreds of calls queued ahead. So every waiter carries a priority (lower
is sooner; ties in the order they came), and a slot that frees is handed to the lowest.

Runs on the runner's event loop only; no locks.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

__all__ = ["PrioritySlots"]


class PrioritySlots:
    def __init__(self, slots: int) -> None:
        self._free = max(1, slots)
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: int) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (priority, next(self._order), granted))
        try:
            await granted
        except asyncio.CancelledError:
            # cancelled after the slot was handed over, before it ran: pass the slot on
            if granted.done() and not granted.cancelled():
                self.release()
            raise

    def release(self) -> None:
        while self._waiting:
            _priority, _order, granted = heapq.heappop(self._waiting)
            if not granted.done():  # a cancelled waiter is skipped
                granted.set_result(None)
                return
        self._free += 1
