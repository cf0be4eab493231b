"""The order in which the session's runner lets calls out (scoring.slots, scoring.runner).

Texts of the case whose items run next go first; a text an item waits for now (URGENT) goes
before everything queued ahead; equal priorities keep their submission order. A cancelled
waiter never holds a slot.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from pytest_screeneval import CriterionScore, ScorerIdentity
from pytest_screeneval.golden.model import Criterion, Rubric, Scale
from pytest_screeneval.scoring.runner import URGENT, Runner, ScoringJob
from pytest_screeneval.scoring.slots import PrioritySlots

RUBRIC = Rubric(
    id="order",
    version="1",
    scale=Scale(1, 5),
    advance_at=50.0,
    criteria=(Criterion("python", "Writes Python.", 1.0),),
)


class _OneSlot:
    """One slot, held by the test; each waiter notes its name when served and gives it back."""

    def __init__(self) -> None:
        self.slots = PrioritySlots(1)
        self.served: list[str] = []

    async def hold(self) -> None:
        await self.slots.acquire(0)

    async def waiter(self, name: str, priority: int) -> None:
        await self.slots.acquire(priority)
        self.served.append(name)
        self.slots.release()


def _order_of(priorities: Sequence[int]) -> list[str]:
    """Names (indexes) of the waiters in the order one slot served them."""

    async def main() -> list[str]:
        one = _OneSlot()
        await one.hold()  # everyone below has to queue
        tasks = [asyncio.create_task(one.waiter(str(i), p)) for i, p in enumerate(priorities)]
        await asyncio.sleep(0)  # every waiter is queued now
        one.slots.release()
        await asyncio.gather(*tasks)
        return one.served

    return asyncio.run(main())


def test_the_lowest_priority_goes_first_and_ties_keep_their_order() -> None:
    assert _order_of([5, 1, 3, 1, URGENT, 5]) == ["4", "1", "3", "2", "0", "5"]


def test_a_cancelled_waiter_is_skipped_and_never_holds_a_slot() -> None:
    async def main() -> tuple[list[str], int]:
        one = _OneSlot()
        await one.hold()
        gone = asyncio.create_task(one.waiter("cancelled", 0))
        kept = asyncio.create_task(one.waiter("kept", 1))
        await asyncio.sleep(0)
        gone.cancel()
        one.slots.release()
        await asyncio.wait_for(kept, timeout=5)
        with pytest.raises(asyncio.CancelledError):
            await gone
        # the slot came back: one more can take it at once
        await asyncio.wait_for(one.slots.acquire(9), timeout=1)
        return one.served, len(one.slots._waiting)

    served, left = asyncio.run(main())
    assert served == ["kept"] and left == 0


def test_a_waiter_cancelled_after_its_slot_was_granted_passes_it_on() -> None:
    async def main() -> list[str]:
        one = _OneSlot()
        await one.hold()
        first = asyncio.create_task(one.waiter("granted, then cancelled", 0))
        second = asyncio.create_task(one.waiter("next", 1))
        await asyncio.sleep(0)
        one.slots.release()  # hands the slot to `first`, which has not resumed yet
        first.cancel()
        await asyncio.wait_for(second, timeout=5)  # a lost slot would leave it waiting
        return one.served

    assert asyncio.run(main()) == ["next"]


class _Recorder:
    """Answers in the order calls reach it; the first call blocks until told to go on."""

    def __init__(self) -> None:
        self.identity = ScorerIdentity("recorder", "r-1", "0" * 64, RUBRIC.sha, 0.0)
        self.seen: list[str] = []
        self.hold = threading.Event()

    def score(self, text: str, rubric: Rubric) -> list[CriterionScore]:
        self.seen.append(text)
        if len(self.seen) == 1:
            self.hold.wait(10)
        return [CriterionScore("python", 3, "The resume says Python.")]


def _job(text: str) -> ScoringJob:
    return ScoringJob("c-1", text, 0, text, text)


def test_the_runner_sends_an_urgent_text_before_the_calls_queued_ahead() -> None:
    scorer = _Recorder()
    runner = Runner(scorer, RUBRIC, concurrency=1, timeout=10)
    try:
        first = runner.submit(_job("first"), 0)
        later = [runner.submit(_job(f"case {rank}"), rank) for rank in (3, 2, 1)]
        while not scorer.seen:  # the first call holds the only slot
            threading.Event().wait(0.01)
        urgent = runner.submit(_job("urgent"), URGENT)
        scorer.hold.set()
        runner.wait([first, *later, urgent])
    finally:
        runner.close()
    assert scorer.seen == ["first", "urgent", "case 1", "case 2", "case 3"]
