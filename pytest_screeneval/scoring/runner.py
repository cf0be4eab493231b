"""Resolving a scorer and running it: bounded concurrency, a timeout, a latency per call.

What each answer becomes (and which answers are errors) is ``scoring.results``. Built-in scorers
that talk to a service count their own transport retries and report them as ``attempts``. How
many calls may be out at once under a provider's rate limit is ``scoring.pacing``: a call that
raises ``RateLimited`` goes back to the queue, in its place, and is sent again when the limit
allows; that wait is not an attempt and not part of its latency.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import heapq
import importlib
import inspect
import itertools
import math
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.call_threads import CallThreads
from pytest_screeneval.scoring.pacing import Pacing, PacingReport
from pytest_screeneval.scoring.protocol import (
    RateLimited,
    RateLimits,
    ScoreOutcome,
    Scorer,
    ScorerError,
    set_runner_waits_on_limits,
)
from pytest_screeneval.scoring.results import JobResult, ScoringJob, result_of

__all__ = [
    "URGENT",
    "LoopBlocked",
    "Runner",
    "load_scorer_factory",
    "run_jobs",
]

# A rate-limited call goes back to the queue; these bound how often and how soon, so a server
# that refuses one call forever (a 429 with "Retry-After: 0") ends it as an error, never a hang.
MIN_LIMIT_WAIT_S = 0.05
MAX_LIMIT_REFUSALS = 50

BUILTIN_SCORERS = {
    "keyword": "pytest_screeneval.scoring.keyword:make_scorer",
    "openai": "pytest_screeneval.scoring.openai.scorer:make_scorer",
}


def load_scorer_factory(spec: str) -> Callable[..., Scorer]:
    """Resolve ``keyword``, ``openai`` or ``package.module:factory`` to a callable."""
    target = BUILTIN_SCORERS.get(spec, spec)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ScreenevalError(
            f"The scorer {spec!r} is neither a built-in ({', '.join(BUILTIN_SCORERS)}) nor "
            "'package.module:factory'."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ScreenevalError(
            f"The scorer module {module_name!r} cannot be imported: {exc}."
        ) from None
    # the user's module is not type-checked with ours: whatever is there is checked right here
    factory: Callable[..., Scorer] | None = getattr(module, attr, None)
    if not callable(factory):
        raise ScreenevalError(f"The scorer factory {attr!r} is not a callable in {module_name!r}.")
    return factory


class ScorerInterrupted(BaseException):
    """A KeyboardInterrupt raised inside a scorer call, carried to the session's waiter.

    A BaseException, so that no ``except Exception`` on its way records it as a scorer error,
    and not a KeyboardInterrupt, which would stop the event loop itself."""


URGENT = -1  # the priority of a text an item is waiting for now: ahead of everything queued


class LoopBlocked(ScreenevalError):
    """An ``async def`` scorer held the event loop (a blocking call inside it): stop the run."""


@dataclass(eq=False)
class _Call:
    """One submitted call: queued, then out (``started``), then answered or dropped."""

    job: ScoringJob
    future: concurrent.futures.Future[JobResult]
    priority: int = 0
    order: int = 0  # its place among equal priorities (kept when a rate limit sends it back)
    started: float = 0.0
    deadline: float = math.inf  # time.monotonic() past which a thread call has timed out
    task: asyncio.Task[None] | None = None  # an awaited call's task on the loop
    seq: int = 0  # its number as sent (Pacing.sent), for what its answer's headers say
    sent_at: float = 0.0  # time.monotonic() when it was last sent
    limited_s: float = 0.0  # how long rate limits have held it back so far
    refusals: int = 0  # how many times a rate limit refused it


# a thread call's answer: the call, what score() returned, what it raised
_Answer = tuple[_Call, object, BaseException | None]


def _resolve(future: concurrent.futures.Future[JobResult], result: JobResult) -> None:
    # a future cancelled by a stop (-x, Ctrl-C) while its call was out keeps its cancellation
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(result)


def _fail(future: concurrent.futures.Future[JobResult], error: BaseException) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_exception(error)


class Runner:
    """One session's scorer calls: one event loop in a thread of its own, one bounded queue.

    Every call (originals, variants, perturbation examples, repeats, confirmations, shrinking)
    is submitted here and waits in one queue until fewer than ``concurrency`` calls are out:
    the lowest priority first (the case whose items run next; ``URGENT`` for a text an item
    waits for now, ahead of hundreds queued before it), equal priorities in submission order.
    An async scorer runs on this loop, so it keeps one client (one connection pool) for the
    whole session; a plain ``def`` scorer runs on kept daemon threads (``CallThreads``), within
    the same limit. Results are handed back as futures: the caller decides when to wait, and
    Ctrl-C reaches it while it does.

    The loop is woken once for a burst of submissions and once per answer; no task, timer or
    thread is made per call of a plain scorer (each of them cost the items' thread time).
    """

    HEARTBEAT_S = 0.05

    def __init__(
        self,
        scorer: Scorer,
        rubric: Rubric,
        *,
        concurrency: int,
        timeout: float,
        paused: bool = False,
        adaptive: bool = True,
    ) -> None:
        self.scorer = scorer
        self.rubric = rubric
        self.concurrency = max(1, concurrency)
        self.timeout = timeout
        # the window under the ceiling, the hold after a 429, the headers' budgets (loop only)
        self.pacing = Pacing(self.concurrency, adaptive=adaptive, started=time.monotonic())
        self._wake: asyncio.TimerHandle | None = None
        self.submitted = 0
        self.finished = 0
        self.in_flight = 0
        self.fatal: ScreenevalError | None = None
        self.interrupted = False  # a Ctrl-C inside a scorer call (see ScorerInterrupted)
        self._futures: list[concurrent.futures.Future[JobResult]] = []
        self._beat = time.monotonic()
        self._awaits = inspect.iscoroutinefunction(scorer.score)
        self.threads: CallThreads[_Call, _Answer] = CallThreads(
            "screeneval-scorer-call", self._call_in_thread, self._hand_back
        )
        # the queue: filled by submit (any thread), emptied on the loop; the lock guards both
        self._queue: list[tuple[int, int, _Call]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._dispatch_asked = False
        # the loop's own state (touched on the loop's thread only)
        self._released = False
        self._free = self.concurrency
        self._out: set[_Call] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="screeneval-runner", daemon=True)
        self._thread.start()
        if not paused:
            self.release()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._heartbeat)
        try:
            self._loop.run_forever()
        except KeyboardInterrupt:
            # raised by an async scorer on this thread: the session stops as on a Ctrl-C, raised
            # where it waits (wait), never inside whatever the main thread is doing now
            self.interrupted = True

    def _heartbeat(self) -> None:
        # a loop that stops beating while a call is out is held by that call (see wait)
        self._beat = now = time.monotonic()
        for call in [c for c in self._out if c.task is None and c.deadline <= now]:
            # a thread call past its timeout: answered as such, its slot given back; its
            # thread is left to return whenever it does, and that late answer is dropped
            self._finish(call, None, TimeoutError())
        self._loop.call_later(self.HEARTBEAT_S, self._heartbeat)

    def release(self) -> None:
        """Let the queued calls go (a paused runner holds them: the plan is printed first)."""
        self._loop.call_soon_threadsafe(self._open)

    def _open(self) -> None:
        self._released = True
        self._dispatch()

    def submit(self, job: ScoringJob, priority: int = 0) -> concurrent.futures.Future[JobResult]:
        """Queue one call; its future holds the result (or ScorerUnavailable).

        A lower ``priority`` goes sooner (the session passes its case's place in the item
        order, and URGENT for a text an item waits for now); equal ones in submission order.
        """
        future: concurrent.futures.Future[JobResult] = concurrent.futures.Future()
        with self._lock:
            order = next(self._order)
            heapq.heappush(self._queue, (priority, order, _Call(job, future, priority, order)))
            wake = not self._dispatch_asked
            self._dispatch_asked = True
        if wake:  # one wake-up for a burst of submissions
            self._loop.call_soon_threadsafe(self._dispatch)
        self.submitted += 1
        self._futures.append(future)
        return future

    def _dispatch(self) -> None:
        """Send queued calls while fewer than ``concurrency`` are out (on the loop)."""
        with self._lock:
            self._dispatch_asked = False
        while self._released and self._free > 0:
            now = time.monotonic()
            with self._lock:
                if not self._queue:
                    self.pacing.unblocked(now)
                    return
                room, wake = self.pacing.room(now, len(self._out))
                if room <= 0:
                    if wake is not None:  # a rate limit holds the queue back until then
                        self.pacing.blocked(now)
                        self._wake_at(wake)
                    return
                call = heapq.heappop(self._queue)[2]
            if call.future.cancelled():
                continue  # cancelled while it waited: never sent, never holds a slot
            if self.fatal is not None:
                _fail(call.future, self.fatal)  # the run is stopping: nothing leaves after it
                continue
            self.pacing.unblocked(now)
            self._free -= 1
            self.in_flight += 1
            self._out.add(call)
            call.seq, call.sent_at = self.pacing.sent(), now
            call.started = time.perf_counter()
            if self._awaits:
                call.task = self._loop.create_task(self._await(call, None))
            else:
                call.deadline = time.monotonic() + self.timeout
                self.threads.run(call)

    def _wake_at(self, when: float) -> None:
        """Dispatch again at ``when`` (time.monotonic()), unless a wake-up comes sooner."""
        delay = max(0.0, when - time.monotonic())
        if self._wake is not None:
            if self._wake.when() <= self._loop.time() + delay:
                return  # one is set for sooner: it will ask again
            self._wake.cancel()
        self._wake = self._loop.call_later(delay, self._woken)

    def _woken(self) -> None:
        self._wake = None
        self._dispatch()

    def _call_in_thread(self, call: _Call) -> _Answer:
        """One plain scorer call, on a scorer thread."""
        set_runner_waits_on_limits(True)  # a 429 comes back as RateLimited: this loop waits
        try:
            return call, self.scorer.score(call.job.text, self.rubric), None
        except KeyboardInterrupt:
            # a Ctrl-C that lands in a scorer call is the user's: it stops the session. Not
            # handed to the loop (it would kill the loop's thread) and not raised into the main
            # thread at once (it could land inside a store transaction and leave it open): the
            # waiter raises it where it waits (Runner.wait)
            return call, None, ScorerInterrupted()
        except BaseException as exc:  # the loop makes it the call's result (result_of)
            return call, None, exc

    def _hand_back(self, answer: _Answer) -> None:
        # a closed loop: the run ended while this call was still out, nobody waits for it
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._answered, *answer)

    def _answered(self, call: _Call, answer: object, error: BaseException | None) -> None:
        if error is None and inspect.isawaitable(answer) and call in self._out:
            # a plain def that returned an awaitable: awaited here, within what is left of
            # its timeout
            call.task = self._loop.create_task(self._await(call, answer))
            return
        self._finish(call, answer, error)

    async def _await(self, call: _Call, awaitable: Awaitable[object] | None) -> None:
        answer: object = None
        error: BaseException | None = None
        set_runner_waits_on_limits(True)  # in this task's context only
        try:
            async with asyncio.timeout(self.timeout - (time.perf_counter() - call.started)):
                if awaitable is None:
                    awaitable = self.scorer.score(call.job.text, self.rubric)  # type: ignore[assignment]
                    assert awaitable is not None
                answer = await awaitable
        except asyncio.CancelledError:
            # a stop cancelled it: no answer (its future is cancelled, whatever cancelled the
            # task, so no waiter is left waiting), and its slot goes to the next call
            call.future.cancel()
            if self._drop(call):
                self._dispatch()
            raise
        except KeyboardInterrupt:
            raise  # it stops the loop itself (see _serve)
        except BaseException as exc:
            error = exc
        self._finish(call, answer, error)

    def _finish(self, call: _Call, answer: object, error: BaseException | None) -> None:
        """Settle a call's future from its answer and give its slot to the next (on the loop)."""
        if isinstance(error, RateLimited):
            self._rate_limited(call, error)
            return
        if not self._drop(call):
            return  # timed out or cancelled already: this late answer is nobody's
        if error is None or isinstance(error, ScorerError):  # the provider answered
            self._answered_pacing(call, answer, error)
        try:
            result = result_of(
                call.job,
                self.rubric,
                answer=answer,
                error=error,
                started=call.started,
                timeout=self.timeout,
            )
        except ScreenevalError as exc:  # ScorerUnavailable: nothing else is sent
            self.fatal = self.fatal or exc
            _fail(call.future, exc)
            self._cancel_everything()
        except ScorerInterrupted as exc:  # a Ctrl-C inside a scorer call: nothing else is sent
            self.interrupted = True
            _fail(call.future, exc)
            self._cancel_everything()
        except BaseException as exc:
            _fail(call.future, exc)
        else:
            _resolve(call.future, result)
        self._dispatch()

    def _answered_pacing(self, call: _Call, answer: object, error: BaseException | None) -> None:
        limits: RateLimits | None = None
        tokens = 0
        if isinstance(answer, ScoreOutcome):
            limits, tokens = answer.limits, answer.prompt_tokens + answer.completion_tokens
        elif isinstance(error, ScorerError):
            limits, tokens = error.limits, error.prompt_tokens + error.completion_tokens
        self.pacing.answered(call.seq, call.sent_at, time.monotonic(), limits, tokens)

    def _rate_limited(self, call: _Call, signal: RateLimited) -> None:
        """A 429: the call goes back to the queue in its place, to be sent when the limit
        allows. Not an attempt, and not part of its latency (timed again when it is sent)."""
        if not self._drop(call, finished=False):
            return  # timed out or cancelled already
        now = time.monotonic()
        until = self.pacing.rate_limited(
            call.seq, call.sent_at, now, signal.retry_after_s, signal.limits
        )
        # A "Retry-After: 0" that keeps coming would otherwise send the call again at once,
        # forever: every refusal holds it back a little, and the refusals are counted.
        until = max(until, now + MIN_LIMIT_WAIT_S)
        call.limited_s += until - now
        call.refusals += 1
        call.task, call.deadline = None, math.inf
        if call.limited_s > self.timeout or call.refusals > MAX_LIMIT_REFUSALS:
            self.finished += 1
            reason = (
                f"the provider's rate limit refused this call {call.refusals} times and held it "
                f"back {call.limited_s:.0f} s in all (at most {MAX_LIMIT_REFUSALS} refusals or "
                f"screeneval_timeout = {self.timeout:g} s; {signal.reason})"
            )
            _resolve(call.future, JobResult(call.job, (), {"*": reason}, 0.0))
        elif self.pacing.adaptive:
            self._requeue(call)  # the hold keeps every call back until the limit allows
        else:
            self._loop.call_later(max(0.0, until - now), self._requeue, call)
        self._dispatch()

    def _requeue(self, call: _Call) -> None:
        with self._lock:
            heapq.heappush(self._queue, (call.priority, call.order, call))
        self._dispatch()

    def pacing_report(self) -> PacingReport:
        """How the concurrency moved so far and how long calls waited on rate limits."""
        return self.pacing.report(time.monotonic())

    def _drop(self, call: _Call, *, finished: bool = True) -> bool:
        """Take a call off the ones out and give its slot back; False if it was not out. The
        caller then sends the next call (_dispatch)."""
        if call not in self._out:
            return False
        self._out.discard(call)
        self._free += 1
        self.in_flight -= 1
        if finished:
            self.finished += 1
        return True

    def _cancel_everything(self) -> None:
        with self._lock:
            queued = [entry[2] for entry in self._queue]
            self._queue.clear()
        for call in queued:
            call.future.cancel()
        for call in list(self._out):
            call.future.cancel()
        self._cancel_out()

    def _cancel_out(self) -> None:
        """Stop the calls out whose futures were cancelled: an awaited one is cancelled on the
        loop (its request is dropped), a thread call gives its slot back at once."""
        freed = False
        for call in list(self._out):
            if call.future.cancelled():
                if call.task is not None:
                    call.task.cancel()  # its slot comes back as the task ends (_await)
                else:
                    freed = self._drop(call) or freed
        if freed:
            self._dispatch()  # what was submitted after the stop (a re-score) goes out

    def wait(
        self,
        futures: Sequence[concurrent.futures.Future[JobResult]],
        on_tick: Callable[[], None] | None = None,
    ) -> list[JobResult]:
        """The results of these calls, in order, once all are done.

        Raises the scorer's ScorerUnavailable, or LoopBlocked when an async scorer holds the
        loop past the timeout (a ``time.sleep`` inside ``async def``): the loop cannot enforce
        a timeout it never gets control back to, so this thread does.
        """
        pending = {f for f in futures if not f.done()}
        while pending:
            _done, pending = concurrent.futures.wait(
                pending, timeout=0.1, return_when=concurrent.futures.FIRST_COMPLETED
            )
            self._check_loop()
            if self.interrupted or not self._thread.is_alive():
                # a Ctrl-C inside a scorer call, or the loop's thread ended: nothing will answer
                raise KeyboardInterrupt
            if on_tick is not None:
                on_tick()
        if self.fatal is not None:
            raise self.fatal
        results = []
        for future in futures:
            try:
                results.append(future.result())
            except ScorerInterrupted:
                raise KeyboardInterrupt from None
            except ScreenevalError as exc:
                self.fatal = self.fatal or exc
                self.cancel_pending()
                raise
        return results

    def _check_loop(self) -> None:
        if self.fatal is not None:
            raise self.fatal
        held = time.monotonic() - self._beat
        if self.in_flight and held > self.timeout + 1.0:
            name = type(self.scorer).__name__
            self.fatal = LoopBlocked(
                f"The scorer {name}'s async score() held the event loop for {held:.0f} s, past "
                f"screeneval_timeout = {self.timeout:g} s: a blocking call (time.sleep, a "
                "synchronous client) inside async def; await it, or make score a plain def "
                "so it runs in a thread."
            )
            self.cancel_pending()
            raise self.fatal

    def cancel_pending(self) -> int:
        """Cancel every call not yet finished (-x, --maxfail, a stop); returns how many."""
        cancelled = 0
        for future in self._futures:
            if not future.done() and future.cancel():
                cancelled += 1
        self._futures = [f for f in self._futures if not f.done()]
        if cancelled:
            # the calls already out stop too (an awaited request is dropped); a closed loop
            # has none
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._cancel_out)
        return cancelled

    def close(self) -> None:
        """Cancel what is left, close the scorer's client on its own loop, stop the thread."""
        if self._loop.is_closed():
            return
        self.cancel_pending()
        if self.fatal is None or not isinstance(self.fatal, LoopBlocked):
            aclose = getattr(self.scorer, "aclose", None)
            if aclose is not None and inspect.iscoroutinefunction(aclose):
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(aclose(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        # a loop held by a blocking scorer never stops: its thread is a daemon and stays behind
        self._thread.join(timeout=1.0)
        if not self._thread.is_alive():
            self._loop.close()
        self.threads.close()


def run_jobs(
    scorer: Scorer,
    rubric: Rubric,
    jobs: Sequence[ScoringJob],
    *,
    concurrency: int,
    timeout: float,
    on_result: Callable[[JobResult], None] = lambda result: None,
    adaptive: bool = True,
) -> list[JobResult]:
    """Score every job with at most ``concurrency`` calls in flight; ``on_result`` sees each.

    A runner of its own for callers outside a session; a session keeps one for all its calls.
    """
    if not jobs:
        return []
    runner = Runner(scorer, rubric, concurrency=concurrency, timeout=timeout, adaptive=adaptive)
    try:
        futures = [runner.submit(job) for job in jobs]
        results = runner.wait(futures)
    finally:
        runner.close()
    for result in results:
        on_result(result)
    return results
