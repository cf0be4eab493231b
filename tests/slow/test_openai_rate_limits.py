"""Rate limits end to end: the real openai client against ChatServer's token bucket.

The server's bucket answers 429 with Retry-After and sends OpenAI's x-ratelimit-* headers; the
openai scorer reads them from the raw response; under the runner a 429 goes back to the one
queue (scoring.pacing says when it may go again). Nothing is mocked. Every time assertion here
is a lower bound or a count, never a duration that load could stretch.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_screeneval.golden.model import Criterion, Rubric, Scale
from pytest_screeneval.scoring.openai.options import OpenAISettings
from pytest_screeneval.scoring.openai.scorer import OpenAIScorer, make_scorer
from pytest_screeneval.scoring.protocol import ScoreOutcome, ScorerError
from pytest_screeneval.scoring.results import ScoringJob
from pytest_screeneval.scoring.runner import Runner
from pytest_screeneval.testing import ChatServer, Reply
from pytest_screeneval.testing.chat_server import RateLimit

MODEL = "acme-screener-2025-03-01"
RUBRIC = Rubric(
    id="support-engineer",
    version="1",
    scale=Scale(1, 5),
    advance_at=60.0,
    criteria=(
        Criterion("experience", "Years of relevant support work.", 1.0),
        Criterion("communication", "Clear writing with customers.", 1.0),
    ),
)
RESUME = (
    "Support engineer at Bramblewick Logistics, 2019-2024.\n"
    "Resolved 40 tickets a week across Linux and SQL systems for retail clients.\n"
)


@pytest.fixture
def serve() -> Iterator[Callable[..., ChatServer]]:
    servers: list[ChatServer] = []

    def start(**options: Any) -> ChatServer:
        servers.append(ChatServer(**options).start())
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def scorer_of(server: ChatServer, **changes: Any) -> OpenAIScorer:
    settings = OpenAISettings(
        **{
            "model": MODEL,
            "base_url": server.base_url,
            "timeout_s": 10.0,
            "response_format": "json_schema",
            **changes,
        }
    )
    return make_scorer(RUBRIC, settings, environ={})


def score(scorer: OpenAIScorer) -> ScoreOutcome:
    return asyncio.run(scorer.score(RESUME, RUBRIC))


def raw_post(server: ChatServer) -> tuple[int, dict[str, str]]:
    """One chat request by hand: the status and the headers as the server sent them."""
    body = {"model": MODEL, "messages": [{"role": "user", "content": "one two three"}]}
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


# ---------------------------------------------------------------------------------------------
# The chat server's token bucket
# ---------------------------------------------------------------------------------------------


def test_the_bucket_answers_429_with_retry_after_once_its_burst_is_spent(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve(rate_limit=RateLimit(requests_per_minute=60, burst_requests=2))
    first, second, third = (raw_post(server) for _ in range(3))
    assert (first[0], second[0], third[0]) == (200, 200, 429)
    headers = {k.lower(): v for k, v in third[1].items()}
    assert headers["x-ratelimit-limit-requests"] == "60"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert int(headers["retry-after-ms"]) > 0
    assert int(headers["retry-after"]) >= 1
    assert {k.lower(): v for k, v in first[1].items()}["x-ratelimit-remaining-requests"] == "1"
    stats = server.stats()
    assert (stats["rate_limited"], stats["over_limit"]) == (1, 0)


def test_headers_only_never_refuses_and_counts_what_went_over(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve(rate_limit=RateLimit(requests_per_minute=60, burst_requests=2, reject=False))
    statuses = [raw_post(server)[0] for _ in range(4)]
    assert statuses == [200] * 4
    assert (server.stats()["rate_limited"], server.stats()["over_limit"]) == (0, 2)


def test_a_token_limit_charges_the_prompt_and_429s_without_headers_when_told(
    serve: Callable[..., ChatServer],
) -> None:
    limit = RateLimit(tokens_per_minute=600, burst_tokens=5, headers=False)
    server = serve(rate_limit=limit)
    assert raw_post(server)[0] == 200  # 3 words of 5
    status, headers = raw_post(server)
    assert status == 429
    assert not any(k.lower().startswith("x-ratelimit-") for k in headers)
    assert "retry-after-ms" in {k.lower() for k in headers}


# ---------------------------------------------------------------------------------------------
# The scorer on its own: a 429 is waited out, never an attempt, never a failure
# ---------------------------------------------------------------------------------------------


def test_rate_limits_never_count_towards_stop_after_failures(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve()
    server.enqueue(*[Reply(status=429, headers={"retry-after-ms": "10"})] * 6)
    outcome = score(scorer_of(server, stop_after_failures=2, max_retries=0))
    assert outcome.attempts == 1
    assert len(server.chat_requests) == 7


def test_a_429_saying_the_quota_is_spent_is_a_rejection_not_a_wait(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve()
    message = "You exceeded your current quota."
    server.responder = lambda body: Reply(
        status=429, error_message=message, error_code="insufficient_quota"
    )
    with pytest.raises(ScorerError) as caught:
        score(scorer_of(server))
    assert f"rejected the request with HTTP 429 ({message})" in caught.value.reason
    assert len(server.chat_requests) == 1


def test_every_answer_says_its_system_fingerprint_and_a_change_mid_run_shows(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve(system_fingerprint="fp_alpha", fingerprint_change=(2, "fp_beta"))
    scorer = scorer_of(server)
    said = [score(scorer).system_fingerprint for _ in range(4)]
    assert said == ["fp_alpha", "fp_alpha", "fp_beta", "fp_beta"]
    server.system_fingerprint, server.fingerprint_change = None, None
    assert score(scorer).system_fingerprint is None


# ---------------------------------------------------------------------------------------------
# Under the runner: one queue waits for every call at once
# ---------------------------------------------------------------------------------------------


def run_all(
    server: ChatServer, count: int, *, concurrency: int, adaptive: bool = True, **changes: Any
) -> tuple[list[Any], Runner]:
    runner = Runner(
        scorer_of(server, **changes),
        RUBRIC,
        concurrency=concurrency,
        timeout=60,
        adaptive=adaptive,
    )
    try:
        futures = [
            runner.submit(ScoringJob(f"c-{i}", "", 0, f"{RESUME}\nCase {i}.", f"sha-{i}"))
            for i in range(count)
        ]
        results = runner.wait(futures)
    finally:
        runner.close()
    return results, runner


def test_a_429_under_the_runner_goes_back_to_the_queue_and_is_not_an_attempt(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve()
    server.enqueue(Reply(status=429, headers={"retry-after-ms": "1500"}))
    [result], runner = run_all(server, 1, concurrency=4, max_retries=0)
    assert result.errors == {}
    assert result.attempts == 1
    # the wait was not part of the call's latency (the answer itself took milliseconds)
    assert result.latency_ms < 1500
    first, second = server.chat_requests
    assert second.received_at - first.received_at >= 1.45
    report = runner.pacing_report()
    assert (report.rate_limited, report.decreases, report.lowest) == (1, 1, 2)
    assert report.waited_s >= 1.45


def test_a_limited_server_answers_every_call_once_and_the_window_came_down(
    serve: Callable[..., ChatServer],
) -> None:
    # 50 requests a second, a burst of 4, headers off: only 429s tell the runner
    limit = RateLimit(requests_per_minute=3000, burst_requests=4, headers=False)
    server = serve(rate_limit=limit)
    results, runner = run_all(server, 60, concurrency=16, max_retries=0)
    assert [r.errors for r in results] == [{}] * 60
    assert {r.attempts for r in results} == {1}
    assert len({r.job.case_id for r in results}) == 60
    stats = server.stats()
    report = runner.pacing_report()
    assert stats["chat_requests"] == 60 + stats["rate_limited"]
    assert report.rate_limited == stats["rate_limited"] > 0
    assert report.decreases >= 1
    assert report.lowest < 16


def test_headers_alone_keep_the_runner_within_the_limit(
    serve: Callable[..., ChatServer],
) -> None:
    # never a 429: the headers are the only signal, and going over them is counted. 5 a
    # second, a burst of 2 (as many as the calls out at first): unpaced, 10 of 12 go over
    limit = RateLimit(requests_per_minute=300, burst_requests=2, reject=False)
    server = serve(rate_limit=limit)
    results, runner = run_all(server, 12, concurrency=2, max_retries=0)
    assert [r.errors for r in results] == [{}] * 12
    # paced, a call goes over only when the machine is too loaded to send it within a few
    # milliseconds of when it meant to: seen once in 40 runs under a parallel test run
    assert server.stats()["over_limit"] <= 3
    report = runner.pacing_report()
    assert report.header_waits > 0
    assert report.rate_limited == 0


def test_fixed_concurrency_reads_no_headers_and_goes_over_them(
    serve: Callable[..., ChatServer],
) -> None:
    limit = RateLimit(requests_per_minute=300, burst_requests=2, reject=False)
    server = serve(rate_limit=limit)
    results, runner = run_all(server, 12, concurrency=2, adaptive=False, max_retries=0)
    assert [r.errors for r in results] == [{}] * 12
    assert server.stats()["over_limit"] >= 8
    assert runner.pacing_report().header_waits == 0


def test_fixed_concurrency_still_waits_out_a_429_without_counting_it(
    serve: Callable[..., ChatServer],
) -> None:
    server = serve()
    server.enqueue(Reply(status=429, headers={"retry-after-ms": "200"}))
    results, runner = run_all(server, 5, concurrency=2, adaptive=False, max_retries=0)
    assert [(r.errors, r.attempts) for r in results] == [({}, 1)] * 5
    report = runner.pacing_report()
    assert (report.adaptive, report.rate_limited, report.lowest, report.decreases) == (
        False,
        1,
        2,
        0,
    )
