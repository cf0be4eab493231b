"""The openai scorer used from two threads at once, each running its own event loop.

A runner may score in a background thread while another check scores on the main thread: each
loop must keep its own pooled client. Real client, real ChatServer on loopback, nothing mocked.
"""

from __future__ import annotations

import asyncio
import threading

from pytest_screeneval.golden.model import Criterion, Rubric, Scale
from pytest_screeneval.scoring.openai.options import OpenAISettings
from pytest_screeneval.scoring.openai.scorer import OpenAIScorer, make_scorer
from pytest_screeneval.scoring.protocol import ScoreOutcome
from pytest_screeneval.testing import ChatServer, Reply

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
PER_ROUND = 6
ROUNDS = 3


async def rounds(scorer: OpenAIScorer, start: threading.Barrier) -> list[ScoreOutcome]:
    start.wait()  # both threads' loops are running before either sends a request
    outcomes: list[ScoreOutcome] = []
    for _ in range(ROUNDS):
        outcomes += await asyncio.gather(*(scorer.score(RESUME, RUBRIC) for _ in range(PER_ROUND)))
    return outcomes


def test_two_threads_with_their_own_loops_keep_their_own_pooled_clients() -> None:
    with ChatServer(lambda body: Reply(delay_s=0.1)) as server:
        settings = OpenAISettings(
            model=MODEL, base_url=server.base_url, timeout_s=10.0, response_format="json_schema"
        )
        scorer = make_scorer(RUBRIC, settings, environ={})
        start = threading.Barrier(2)
        results: list[list[ScoreOutcome]] = []

        def thread_body() -> None:
            results.append(asyncio.run(rounds(scorer, start)))

        threads = [threading.Thread(target=thread_body) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        counted = server.stats()

    assert len(results) == 2
    assert all(len(r) == PER_ROUND * ROUNDS for r in results)
    assert all(
        o.attempts == 1 and [s.score for s in o.scores] == [3, 3] for r in results for o in r
    )
    assert counted["chat_requests"] == 2 * PER_ROUND * ROUNDS
    assert counted["max_in_flight"] > PER_ROUND  # the two loops really were in flight together
    # each loop opened its pool once and kept it: no client was swapped out under the other
    assert counted["connections"] <= 2 * PER_ROUND
