"""The adaptive concurrency rule (scoring.pacing), on a fake clock: every time is given.

The window starts at the ceiling and never exceeds it; a 429 halves it once per round and holds
every call until its Retry-After; a window's worth of answers adds one; the rate-limit headers let a
call out only while what remains (less what was sent since, plus what refilled) pays for it.
Fixed (adaptive off): the window stays, the headers are not read, a 429 delays only its call.
"""

from __future__ import annotations

import pytest

from pytest_screeneval.scoring.pacing import COUNTED_AFTER_S, DEFAULT_WAIT_S, RATE_MARGIN, Pacing
from pytest_screeneval.scoring.protocol import RateLimits


def send(pacing: Pacing, count: int) -> list[int]:
    return [pacing.sent() for _ in range(count)]


def warm(ceiling: int) -> Pacing:
    """A runner whose first call came back at once (at t=0): its first connection is open."""
    pacing = Pacing(ceiling)
    pacing.answered(pacing.sent(), -0.01, 0.0, None)
    return pacing


def test_the_first_calls_are_taken_as_counted_when_their_answers_came() -> None:
    pacing = Pacing(4)
    cold = send(pacing, 2)  # sent at 0; the first connection held them 0.3 s
    limits = RateLimits(remaining_requests=0, limit_requests=300)
    pacing.answered(cold[1], 0.0, 0.3, limits)
    # counted at 0.3 (not 0.005): the next request is free 0.2 s after that
    assert pacing.room(0.3, out=1)[1] == pytest.approx(0.3 + 0.2 / RATE_MARGIN)
    later = pacing.sent()  # sent after the first answer: counted 5 ms after it was sent
    pacing.answered(later, 1.0, 1.01, limits)
    assert pacing.room(1.01, out=1)[1] == pytest.approx(1.0 + COUNTED_AFTER_S + 0.2 / RATE_MARGIN)


def test_the_window_starts_at_the_ceiling_and_never_goes_above_it() -> None:
    pacing = Pacing(8)
    assert pacing.room(0.0, out=0) == (8, None)
    assert pacing.room(0.0, out=8) == (0, None)  # full: wait for an answer, not a limit
    for seq in send(pacing, 50):
        pacing.answered(seq, 0.0, 1.0, None)
    assert pacing.window == 8
    assert pacing.report(2.0).lowest == 8


def test_a_429_halves_the_window_once_per_round_and_holds_every_call() -> None:
    pacing = Pacing(16)
    burst = send(pacing, 16)
    until = pacing.rate_limited(burst[0], 0.0, 1.0, retry_after_s=0.5, limits=None)
    assert until == 1.5
    assert pacing.window == 8
    # the rest of the same burst says the same thing: no second halving
    for seq in burst[1:]:
        pacing.rate_limited(seq, 0.0, 1.1, retry_after_s=0.5, limits=None)
    assert pacing.window == 8
    assert pacing.room(1.2, out=0) == (0, 1.6)  # held until the latest Retry-After
    assert pacing.room(1.6, out=0) == (8, None)
    # a call sent after the decrease that is refused again starts a new round
    late = pacing.sent()
    pacing.rate_limited(late, 1.6, 1.7, retry_after_s=None, limits=None)
    assert pacing.window == 4
    assert pacing.room(1.7, out=0) == (0, 1.7 + DEFAULT_WAIT_S)
    report = pacing.report(3.0)
    assert (report.decreases, report.rate_limited, report.lowest) == (2, 17, 4)


def test_the_window_never_goes_below_one() -> None:
    pacing = Pacing(2)
    for _ in range(5):
        seq = pacing.sent()
        pacing.rate_limited(seq, 0.0, 0.0, retry_after_s=0.0, limits=None)
    assert pacing.window == 1
    assert pacing.room(0.0, out=0) == (1, None)


def test_answers_raise_the_window_by_one_call_per_window_of_answers() -> None:
    pacing = Pacing(8)
    seq = pacing.sent()
    pacing.rate_limited(seq, 0.0, 0.0, retry_after_s=0.0, limits=None)
    assert pacing.window == 4
    answers = 0
    while pacing.window < 5:
        pacing.answered(pacing.sent(), 0.0, 0.0, None)
        answers += 1
    assert answers == 4  # 4 answers at a window of 4
    while pacing.window < 8:
        pacing.answered(pacing.sent(), 0.0, 0.0, None)
    assert pacing.window == 8
    report = pacing.report(1.0)
    assert [window for _at, window in report.moves] == [4, 5, 6, 7, 8]
    assert report.final == 8


def test_the_remaining_requests_less_those_sent_since_bound_the_calls_out() -> None:
    pacing = warm(16)
    first = send(pacing, 4)  # 4 out; the first comes back saying 5 were left after it
    limits = RateLimits(remaining_requests=5, reset_requests_s=10.0)
    pacing.answered(first[0], 0.0, 0.1, limits)
    # 3 were sent after it (they have used 3 of the 5): room for 2 more, whatever the window
    assert pacing.room(0.1, out=3) == (2, None)
    send(pacing, 2)
    # nothing refills (no limit header): with calls out, an answer may say more
    assert pacing.room(0.2, out=5) == (0, None)
    # with nothing out, wait for the reset
    # (the server counted it a moment after it was sent: the reset runs from then)
    assert pacing.room(0.2, out=0) == (0, 10.0 + COUNTED_AFTER_S)
    assert pacing.room(10.0 + COUNTED_AFTER_S, out=0) == (16, None)  # reset: the window again


def test_a_per_minute_limit_refills_the_estimate_and_says_when_the_next_call_may_go() -> None:
    pacing = warm(16)
    seq = pacing.sent()  # sent at t=0
    limits = RateLimits(remaining_requests=0, limit_requests=300, reset_requests_s=4.0)
    pacing.answered(seq, 0.0, 0.05, limits)
    room, wake = pacing.room(0.05, out=0)
    assert room == 0
    # 300 a minute: one request every 0.2 s (3% slower, from 5 ms after it was sent)
    assert wake == pytest.approx(COUNTED_AFTER_S + 0.2 / RATE_MARGIN)
    pacing.blocked(0.05)
    assert pacing.room(wake - 0.001, out=0)[0] == 0
    assert pacing.room(wake + 1e-9, out=0) == (1, None)
    pacing.unblocked(0.2)
    report = pacing.report(1.0)
    assert report.header_waits == 1
    assert report.waited_s == pytest.approx(0.15)
    assert report.decreases == 0  # headers pace the calls; only a 429 cuts the window


def test_the_token_budget_counts_a_call_as_the_answers_so_far_used() -> None:
    pacing = warm(16)
    seq = pacing.sent()
    limits = RateLimits(remaining_tokens=1000, limit_tokens=6000)
    pacing.answered(seq, 0.0, 0.01, limits, tokens=400)  # 400 tokens a call, 100 a second back
    assert pacing.room(0.0, out=0) == (2, None)
    send(pacing, 2)
    room, wake = pacing.room(0.0, out=2)
    assert room == 0
    # 200 left, 400 needed, 100 a second (less the margins)
    assert wake == pytest.approx(COUNTED_AFTER_S + 2.0 / RATE_MARGIN)


def test_an_older_answer_does_not_overwrite_what_a_newer_one_said() -> None:
    pacing = warm(16)
    old, new = pacing.sent(), pacing.sent()
    pacing.answered(new, 0.0, 0.1, RateLimits(remaining_requests=0, reset_requests_s=5.0))
    pacing.answered(old, 0.0, 0.2, RateLimits(remaining_requests=9, reset_requests_s=5.0))
    assert pacing.room(0.2, out=0) == (0, 5.0 + COUNTED_AFTER_S)


def test_a_429_without_retry_after_waits_for_the_reset_it_gave() -> None:
    pacing = Pacing(4)
    seq = pacing.sent()
    limits = RateLimits(remaining_requests=0, reset_requests_s=0.3, reset_tokens_s=2.0)
    assert pacing.rate_limited(seq, 0.0, 1.0, None, limits) == pytest.approx(1.3)


def test_fixed_keeps_the_window_ignores_headers_and_delays_only_the_refused_call() -> None:
    pacing = Pacing(8, adaptive=False)
    calls = send(pacing, 8)
    pacing.answered(calls[0], 0.0, 0.1, RateLimits(remaining_requests=0, reset_requests_s=9.0))
    assert pacing.room(0.1, out=7) == (1, None)
    until = pacing.rate_limited(calls[1], 0.0, 1.0, retry_after_s=2.0, limits=None)
    assert until == 3.0
    pacing.rate_limited(calls[2], 0.0, 2.0, retry_after_s=2.0, limits=None)  # overlaps: 1 s more
    assert pacing.room(1.0, out=6) == (2, None)  # no hold for the others
    report = pacing.report(5.0)
    assert (report.adaptive, report.lowest, report.final, report.decreases) == (False, 8, 8, 0)
    assert report.rate_limited == 2
    assert report.waited_s == pytest.approx(3.0)  # 1..3 and 2..4: 3 s of the run


def test_time_held_back_is_counted_once_however_often_the_runner_asks() -> None:
    pacing = Pacing(4)
    seq = pacing.sent()
    pacing.rate_limited(seq, 0.0, 0.0, retry_after_s=1.0, limits=None)
    for now in (0.0, 0.25, 0.5):
        assert pacing.room(now, out=0)[0] == 0
        pacing.blocked(now)
    pacing.unblocked(1.0)
    pacing.unblocked(1.5)  # not blocked any more: nothing added
    report = pacing.report(2.0)
    assert report.waited_s == pytest.approx(1.0)
    assert report.header_waits == 0  # a 429's hold, not the headers
    assert report.as_dict()["waited_s"] == 1.0
