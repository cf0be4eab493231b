"""OpenAI's rate-limit headers as the scorer reads them: Go-style durations, counts, and the
unreadable ones left out (the runner's pacing rests on these values; tests/slow/
test_openai_rate_limits.py checks them end to end against the chat server's token bucket)."""

from __future__ import annotations

import pytest

from pytest_screeneval.scoring.openai.rate_headers import parse_duration, rate_limits_from_headers
from pytest_screeneval.scoring.protocol import RateLimits
from pytest_screeneval.testing.chat_server import go_duration


def test_reset_durations_read_go_s_format_and_refuse_anything_else() -> None:
    assert parse_duration("1s") == 1.0
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_duration("0.5") == 0.5
    assert parse_duration("17µs") == pytest.approx(17e-6)
    for bad in ("", "soon", "5 s", "1s2", "-3s", "s", "nan", "inf"):
        assert parse_duration(bad) is None, bad


def test_rate_limit_headers_are_read_and_unreadable_ones_left_out() -> None:
    headers = {
        "X-RateLimit-Limit-Requests": "300",
        "x-ratelimit-remaining-requests": "12",
        "x-ratelimit-reset-requests": "1.6s",
        "x-ratelimit-limit-tokens": "40000",
        "x-ratelimit-remaining-tokens": "lots",
        "x-ratelimit-reset-tokens": "6m0s",
        "content-type": "application/json",
    }
    assert rate_limits_from_headers(headers) == RateLimits(
        remaining_requests=12,
        remaining_tokens=None,
        reset_requests_s=1.6,
        reset_tokens_s=360.0,
        limit_requests=300,
        limit_tokens=40000,
    )
    assert rate_limits_from_headers({"content-type": "text/plain"}) is None
    assert rate_limits_from_headers({"x-ratelimit-remaining-requests": "?"}) is None


def test_the_server_writes_durations_the_scorer_reads_back() -> None:
    for seconds in (0.0, 0.02, 0.2, 1.0, 1.6, 59.5, 360.0, 3723.5):
        assert parse_duration(go_duration(seconds)) == pytest.approx(seconds, abs=1e-3)
