"""ChatServer's counts over HTTP, for a client in another process (benchmarks/throughput.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from pytest_screeneval.testing import ChatServer, Reply

CHAT = {"model": "acme-screener-2025-03-01", "messages": [{"role": "user", "content": "Hello"}]}


def post(url: str, body: object) -> dict[str, object]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def stats(root: str) -> dict[str, object]:
    with urllib.request.urlopen(f"{root}/stats", timeout=10) as answer:
        return json.load(answer)


def test_stats_count_chat_requests_and_the_in_flight_peak_and_reset() -> None:
    with ChatServer(lambda body: Reply(delay_s=0.3)) as server:
        with ThreadPoolExecutor(4) as pool:
            answers = list(
                pool.map(lambda _: post(f"{server.base_url}/chat/completions", CHAT), range(4))
            )
        assert all(a["object"] == "chat.completion" for a in answers)
        urllib.request.urlopen(f"{server.base_url}/models", timeout=10).close()

        counted = stats(server.url)
        # urllib opens a connection per request: four chats, the model list, this question
        assert counted == {
            "requests": 5,
            "chat_requests": 4,
            "in_flight": 0,
            "max_in_flight": 4,
            "connections": 6,
            "rate_limited": 0,  # no rate limit set: nothing refused, nothing over
            "over_limit": 0,
        }
        assert counted == server.stats()
        assert len(server.requests) == 5  # asking for the counts is not a request

        assert post(f"{server.url}/stats/reset", {})["max_in_flight"] == 0
        assert stats(server.url) == {
            "requests": 0,
            "chat_requests": 0,
            "in_flight": 0,
            "max_in_flight": 0,
            "connections": 1,
            "rate_limited": 0,
            "over_limit": 0,
        }


def test_a_server_in_its_own_process_reports_its_counts() -> None:
    command = [sys.executable, "-m", "pytest_screeneval.testing.chat_server", "--latency", "0.01"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            post(f"{base_url}/chat/completions", CHAT)
            counted = stats(base_url.removesuffix("/v1"))
        finally:
            process.terminate()
    assert counted["chat_requests"] == 1 and counted["max_in_flight"] == 1
