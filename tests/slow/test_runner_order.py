"""The order in which the session's runner lets calls out (scoring.runner).

Texts of the case whose items run next go first; a text an item waits for now (URGENT) goes
before everything queued ahead; equal priorities keep their submission order. A cancelled
waiter never holds a slot.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import pytest

from pytest_screeneval import CriterionScore, ScorerIdentity
from pytest_screeneval.golden.model import Criterion, Rubric, Scale
from pytest_screeneval.scoring.results import JobResult, ScoringJob
from pytest_screeneval.scoring.runner import URGENT, Runner

RUBRIC = Rubric(
    id="order",
    version="1",
    scale=Scale(1, 5),
    advance_at=50.0,
    criteria=(Criterion("python", "Writes Python.", 1.0),),
)


class _Recorder:
    """Answers in the order calls reach it; the first call blocks until told to go on."""

    def __init__(self) -> None:
        self.identity = ScorerIdentity("recorder", "r-1", "0" * 64, RUBRIC.sha, 0.0)
        self.seen: list[str] = []
        self.hold = threading.Event()
        self.first_returned = threading.Event()

    def score(self, text: str, rubric: Rubric) -> list[CriterionScore]:
        self.seen.append(text)
        if len(self.seen) == 1:
            self.hold.wait(10)
            self.first_returned.set()
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


def _held_runner(
    scorer: _Recorder, timeout: float = 10
) -> tuple[Runner, concurrent.futures.Future[JobResult]]:
    """A one-slot runner whose first call (text "first") holds the slot until released."""
    runner = Runner(scorer, RUBRIC, concurrency=1, timeout=timeout)
    first = runner.submit(_job("first"), 0)
    while not scorer.seen:
        threading.Event().wait(0.01)
    return runner, first


def test_the_lowest_priority_goes_first_and_ties_keep_their_order() -> None:
    scorer = _Recorder()
    runner, _first = _held_runner(scorer)
    try:
        priorities = [5, 1, 3, 1, URGENT, 5]
        futures = [runner.submit(_job(str(i)), p) for i, p in enumerate(priorities)]
        scorer.hold.set()
        runner.wait(futures)
    finally:
        runner.close()
    assert scorer.seen == ["first", "4", "1", "3", "2", "0", "5"]


def test_a_call_cancelled_while_queued_is_never_sent_and_holds_no_slot() -> None:
    scorer = _Recorder()
    runner, _first = _held_runner(scorer)
    try:
        gone = runner.submit(_job("cancelled"), 0)
        kept = runner.submit(_job("kept"), 1)
        assert gone.cancel()
        scorer.hold.set()
        runner.wait([kept])
        # the slot came back: one more goes out at once
        runner.wait([runner.submit(_job("after"), 9)])
    finally:
        runner.close()
    assert scorer.seen == ["first", "kept", "after"]
    assert runner.in_flight == 0


def test_plain_scorer_calls_reuse_their_threads() -> None:
    # a thread, a task and a timer per call tripled the runner's share of the interpreter
    scorer = _Recorder()
    scorer.hold.set()
    runner = Runner(scorer, RUBRIC, concurrency=4, timeout=10)
    try:
        results = runner.wait([runner.submit(_job(f"text {i}"), i) for i in range(300)])
    finally:
        runner.close()
    assert len(results) == 300 and all(r.by_criterion for r in results)
    assert 1 <= runner.threads.started <= 4


def test_a_hung_call_times_out_frees_its_slot_and_its_late_answer_is_dropped() -> None:
    scorer = _Recorder()  # "first" hangs until released, far past the timeout
    runner, first = _held_runner(scorer, timeout=0.3)
    try:
        after = runner.submit(_job("after"), 0)
        timed_out, answered = runner.wait([first, after])
        assert timed_out.errors == {"*": "the scorer took longer than 0.3 s"}
        assert answered.by_criterion  # went out on a new thread while the hung one held its own
        assert runner.threads.started == 2
        scorer.hold.set()  # the hung call returns now: nobody takes its answer
        assert scorer.first_returned.wait(5)
        threading.Event().wait(0.2)  # its hand-back to the loop follows within microseconds
        assert first.result() is timed_out and runner.finished == 2 and runner.in_flight == 0
    finally:
        runner.close()


class _Held:
    """An async scorer whose calls wait until released (or cancelled)."""

    def __init__(self) -> None:
        self.identity = ScorerIdentity("held", "h-1", "0" * 64, RUBRIC.sha, 0.0)
        self.seen: list[str] = []
        self.release: asyncio.Event | None = None

    async def score(self, text: str, rubric: Rubric) -> list[CriterionScore]:
        self.seen.append(text)
        if self.release is None:
            self.release = asyncio.Event()
        if text == "first":
            await self.release.wait()
        return [CriterionScore("python", 3, "The resume says Python.")]


def test_a_text_submitted_after_a_stop_goes_out_once_the_cancelled_call_ends() -> None:
    # -x cancels the call out; the noise probe then re-scores: its slot must come back (the
    # re-score waited forever when the cancelled task gave its slot back after the dispatch)
    for _ in range(20):
        scorer = _Held()
        runner = Runner(scorer, RUBRIC, concurrency=1, timeout=10)
        try:
            first = runner.submit(_job("first"), 0)
            while not scorer.seen:
                threading.Event().wait(0.005)
            assert runner.cancel_pending() == 1
            again = runner.submit(_job("re-score"), URGENT)
            done, _ = concurrent.futures.wait([again], timeout=5)
            assert done == {again}, "the re-score never went out"
            assert first.cancelled() and again.result().by_criterion
        finally:
            runner.close()


class _ReturnsAwaitable:
    """A plain ``def`` whose answer is a coroutine (a sync facade over an async client)."""

    def __init__(self, pause_s: float) -> None:
        self.identity = ScorerIdentity("facade", "f-1", "0" * 64, RUBRIC.sha, 0.0)
        self.pause_s = pause_s

    def score(self, text: str, rubric: Rubric) -> Any:
        async def answer() -> list[CriterionScore]:
            await asyncio.sleep(self.pause_s)
            return [CriterionScore("python", 4, "The resume says Python.")]

        return answer()


@pytest.mark.parametrize("pause_s", [0.0, 5.0], ids=["answers", "too-slow"])
def test_a_plain_scorer_that_returns_an_awaitable_is_awaited_within_the_timeout(
    pause_s: float,
) -> None:
    runner = Runner(_ReturnsAwaitable(pause_s), RUBRIC, concurrency=2, timeout=0.5)
    try:
        (result,) = runner.wait([runner.submit(_job("text"))])
    finally:
        runner.close()
    if pause_s:
        assert result.errors == {"*": "the scorer took longer than 0.5 s"}
    else:
        assert result.by_criterion["python"].score == 4 and not result.errors
    assert runner.in_flight == 0 and runner.finished == 1


def test_an_async_call_past_its_timeout_is_an_error_and_frees_its_slot() -> None:
    scorer = _Held()  # "first" waits for a release that never comes
    runner = Runner(scorer, RUBRIC, concurrency=1, timeout=0.3)
    try:
        late, after = runner.wait([runner.submit(_job("first")), runner.submit(_job("after"))])
    finally:
        runner.close()
    assert late.errors == {"*": "the scorer took longer than 0.3 s"}
    assert after.by_criterion and scorer.seen == ["first", "after"]
