"""How many scorer calls may be out now: adaptive concurrency under a provider's rate limit.

Pure module (no event loop, no clock of its own: every method takes ``now``), so the rule is
tested with a fake clock. The runner asks :meth:`Pacing.room` before it sends a call, tells
:meth:`Pacing.sent` when it does, and reports each answer (:meth:`Pacing.answered`) and each
429 (:meth:`Pacing.rate_limited`).

The rule (also stated in docs/servers.md):

- **Window (AIMD).** Calls out at once never exceed the window, which starts at the ceiling
  (``screeneval_concurrency``) and never goes above it. A 429 halves it (never below 1), once
  per round: a 429 of a call sent before the last decrease belongs to the burst that caused
  it, not to a new one. Each window's worth of answered calls adds one call to it, back up to
  the ceiling.
- **Hold.** After a 429 no call is sent until its ``Retry-After`` has passed (or, without one,
  the rate-limit reset it gave, else one second).
- **Headers.** A response's ``x-ratelimit-remaining-requests`` / ``-tokens`` say what was left
  when the server counted that call; the calls sent after it have used some of it since, and
  the limit refills at ``limit / 60`` per second (a limit is per minute; 1% is taken off, and
  the server is taken to have counted a call 5 ms after it was sent, or, for the first calls
  of a run, when their answers came: a first connection can hold them long before the server
  counts them). A call goes out only
  while the estimate leaves room for it (one request; a call's tokens as the answers so far
  used); otherwise the runner waits until the estimate says there is. Without a
  ``limit-*`` header, nothing refills until the ``reset-*`` time.

With ``adaptive`` off the window stays at the ceiling and the headers are not read; a 429 still
makes that one call wait for its ``Retry-After`` before it is sent again. Either way a wait on a
limit is not an attempt and not part of a call's latency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_screeneval.scoring.protocol import RateLimits

__all__ = ["DEFAULT_WAIT_S", "Pacing", "PacingReport"]

DEFAULT_WAIT_S = 1.0  # a 429 that says neither Retry-After nor a reset time
# The server counted a call a little after it was sent, and its limit may refill a little slower
# than it says: without these margins a call sent "just in time" arrives just too early.
RATE_MARGIN = 0.99
COUNTED_AFTER_S = 0.005


@dataclass(frozen=True)
class PacingReport:
    """How the concurrency moved over a run and how long the run waited on rate limits."""

    adaptive: bool
    ceiling: int
    lowest: int  # the lowest window reached
    final: int
    decreases: int  # times a 429 halved the window
    rate_limited: int  # 429s answered (each call sent again)
    header_waits: int  # times the headers held the next call back
    waited_s: float  # wall time calls were held back by a limit
    moves: tuple[tuple[float, int], ...]  # (seconds into the run, window) at each change

    @property
    def moved(self) -> bool:
        return self.lowest < self.ceiling or self.rate_limited > 0 or self.waited_s > 0

    def as_dict(self) -> dict[str, object]:
        return {
            "adaptive": self.adaptive,
            "ceiling": self.ceiling,
            "lowest": self.lowest,
            "final": self.final,
            "decreases": self.decreases,
            "rate_limited": self.rate_limited,
            "header_waits": self.header_waits,
            "waited_s": round(self.waited_s, 3),
            "moves": [[round(at, 3), window] for at, window in self.moves],
        }


@dataclass
class _Budget:
    """What one response said is left of a limit (requests, or tokens), and when it said so."""

    remaining: float
    seq: int  # the number of the call it came with (calls are numbered as they are sent)
    at: float  # when that call was sent: about when the server counted it
    per_s: float | None  # refill per second (the limit per minute / 60); None: unknown
    full_at: float | None  # when it is full again (the reset time), if said
    cap: float | None  # the limit itself

    def left(self, now: float, spent_since: float) -> float:
        """What is left now, after ``spent_since`` was sent on top of what it said."""
        if self.per_s is None:
            if self.full_at is not None and now >= self.full_at:
                return math.inf  # back to full: what it said no longer binds
            return self.remaining - spent_since
        refilled = self.remaining + self.per_s * max(0.0, now - self.at)
        if self.cap is not None:
            refilled = min(refilled, self.cap)
        return refilled - spent_since

    def time_for(self, need: float, spent_since: float) -> float:
        """When there will be ``need`` left."""
        if self.per_s is None or self.per_s <= 0:
            return self.full_at if self.full_at is not None else self.at + DEFAULT_WAIT_S
        missing = need + spent_since - self.remaining
        return self.at + missing / self.per_s


class Pacing:
    """The window, the hold and the header budgets of one runner (see the module's rule)."""

    def __init__(self, ceiling: int, *, adaptive: bool = True, started: float = 0.0) -> None:
        self.ceiling = max(1, ceiling)
        self.adaptive = adaptive
        self.window = self.ceiling
        self._answers_at_window = 0  # answers since the window last changed
        self._started = started
        self._sent = 0  # calls sent so far; a call's number is the count when it was sent
        self._round = 0  # calls numbered up to this were sent before the last decrease
        self._hold_until = -math.inf
        self._first_answer: float | None = None  # when the first answer came back
        self._requests: _Budget | None = None
        self._tokens: _Budget | None = None
        self._tokens_per_call: float | None = None  # what an answered call used, on average
        self._answers_with_tokens = 0
        self._blocked_since: float | None = None
        self._waited = 0.0
        self._own_waits_end = -math.inf  # the end of the calls' own waits (fixed window)
        self._lowest = self.ceiling
        self._decreases = 0
        self._limited = 0
        self._header_waits = 0
        self._moves: list[tuple[float, int]] = []

    # ---------------------------------------------------------------- asking

    def room(self, now: float, out: int) -> tuple[int, float | None]:
        """How many more calls may go now, with ``out`` calls out; when 0 because of a limit,
        also when to ask again (None: when a call comes back)."""
        free = self.window - out if self.adaptive else self.ceiling - out
        if free <= 0:
            return 0, None
        if now < self._hold_until:
            return 0, self._hold_until
        if not self.adaptive:
            return free, None
        wake: float | None = None
        for budget, need in self._budgets():
            spent = need * (self._sent - budget.seq)
            left = budget.left(now, spent)
            if math.isinf(left):
                continue  # back to full since it was said: it does not bind
            if left < need:
                if out > 0 and budget.per_s is None:
                    return 0, None  # nothing refills before the reset: an answer may say more
                when = budget.time_for(need, spent)
                wake = when if wake is None else max(wake, when)
                continue
            free = min(free, int(left // need))
        if wake is not None:
            return 0, max(wake, now)
        return max(free, 0), None

    def _budgets(self) -> list[tuple[_Budget, float]]:
        budgets: list[tuple[_Budget, float]] = []
        if self._requests is not None:
            budgets.append((self._requests, 1.0))
        if self._tokens is not None and self._tokens_per_call:
            budgets.append((self._tokens, self._tokens_per_call))
        return budgets

    def blocked(self, now: float) -> None:
        """The runner holds queued calls back for a limit from ``now`` (until ``unblocked``)."""
        if self._blocked_since is None:
            self._blocked_since = now
            if now >= self._hold_until:  # not a 429's hold: the headers said to wait
                self._header_waits += 1

    def unblocked(self, now: float) -> None:
        if self._blocked_since is not None:
            self._waited += max(0.0, now - self._blocked_since)
            self._blocked_since = None

    # ---------------------------------------------------------------- telling

    def sent(self) -> int:
        """A call goes out; returns its number (pass it back with its answer)."""
        self._sent += 1
        return self._sent

    def answered(
        self, seq: int, sent_at: float, now: float, limits: RateLimits | None, tokens: int = 0
    ) -> None:
        """A call came back with an answer (or an error that is not a rate limit)."""
        if self._first_answer is None:
            self._first_answer = now
        if tokens > 0:
            self._answers_with_tokens += 1
            known = self._tokens_per_call or 0.0
            self._tokens_per_call = known + (tokens - known) / self._answers_with_tokens
        if not self.adaptive:
            return
        if limits is not None:
            self._read(limits, seq, self._counted_at(sent_at, now))
        if self.window < self.ceiling:
            self._answers_at_window += 1
            if self._answers_at_window >= self.window:
                self.window += 1
                self._moved(now)

    def rate_limited(
        self,
        seq: int,
        sent_at: float,
        now: float,
        retry_after_s: float | None,
        limits: RateLimits | None,
    ) -> float:
        """A call was refused for the rate limit; returns when it may be sent again."""
        self._limited += 1
        counted = self._counted_at(sent_at, now)
        if self._first_answer is None:
            self._first_answer = now
        wait = retry_after_s
        if wait is None and limits is not None:
            resets = [s for s in (limits.reset_requests_s, limits.reset_tokens_s) if s is not None]
            wait = min(resets) if resets else None
        until = now + (wait if wait is not None else DEFAULT_WAIT_S)
        if not self.adaptive:
            # the call waits on its own; the run waited where no other call's wait covers it
            self._waited += max(0.0, until - max(now, self._own_waits_end))
            self._own_waits_end = max(self._own_waits_end, until)
            return until
        if limits is not None:
            self._read(limits, seq, counted)
        if seq > self._round:
            self.window = max(1, self.window // 2)
            self._round = self._sent
            self._decreases += 1
            self._moved(now)
        self._hold_until = max(self._hold_until, until)
        return until

    def _counted_at(self, sent_at: float, now: float) -> float:
        """When the server counted a call: a moment after it was sent; for the calls sent
        before any answer came back, when its answer came (a first connection, the client's
        first request, can hold a call long before the server sees it)."""
        if self._first_answer is None or sent_at < self._first_answer:
            return now
        return min(now, sent_at + COUNTED_AFTER_S)

    def _read(self, limits: RateLimits, seq: int, sent_at: float) -> None:
        """Keep what the newest call's headers said (a late answer of an older call says less)."""
        if limits.remaining_requests is not None and (
            self._requests is None or seq >= self._requests.seq
        ):
            self._requests = _budget(
                limits.remaining_requests,
                limits.limit_requests,
                limits.reset_requests_s,
                seq,
                sent_at,
            )
        if limits.remaining_tokens is not None and (
            self._tokens is None or seq >= self._tokens.seq
        ):
            self._tokens = _budget(
                limits.remaining_tokens, limits.limit_tokens, limits.reset_tokens_s, seq, sent_at
            )

    def _moved(self, now: float) -> None:
        self._answers_at_window = 0
        self._lowest = min(self._lowest, self.window)
        if not self._moves or self._moves[-1][1] != self.window:
            self._moves.append((now - self._started, self.window))

    # ---------------------------------------------------------------- reading

    def report(self, now: float) -> PacingReport:
        waited = self._waited
        if self._blocked_since is not None:
            waited += max(0.0, now - self._blocked_since)
        return PacingReport(
            adaptive=self.adaptive,
            ceiling=self.ceiling,
            lowest=self._lowest,
            final=self.window if self.adaptive else self.ceiling,
            decreases=self._decreases,
            rate_limited=self._limited,
            header_waits=self._header_waits,
            waited_s=waited,
            moves=tuple(self._moves),
        )


def _budget(
    remaining: int, limit: int | None, reset_s: float | None, seq: int, sent_at: float
) -> _Budget:
    per_s = RATE_MARGIN * limit / 60.0 if limit else None
    full_at = sent_at + reset_s if reset_s is not None else None
    return _Budget(float(remaining), seq, sent_at, per_s, full_at, float(limit) if limit else None)
