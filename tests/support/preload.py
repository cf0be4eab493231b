"""Libraries loaded before any in-process pytester run, by the conftest of every folder that runs
one (all but tests/unit, which stays fast: it needs none of them).

pytester restores sys.modules after each run, and a library first imported inside one would be
imported again later as a second copy whose exception classes no longer match the first (httpx
would then leak raw transport errors past openai; psycopg's errors would escape SQLAlchemy's
wrapping; libyaml's C loader would build nodes of the first copy's classes; multiprocessing would
start a second resource tracker for the drawing worker of the next run).
"""

from __future__ import annotations

import asyncio
import concurrent.futures.process  # noqa: F401
import multiprocessing.resource_tracker  # noqa: F401
import socket

import openai
import psycopg  # noqa: F401
import sqlalchemy  # noqa: F401
import yaml  # noqa: F401


def _load_the_transport() -> None:
    """openai's HTTP stack (httpx2, httpcore2, h11, anyio's backend) loads on the first request,
    not on import: one request to a closed loopback port loads it here, outside any run (once,
    the stack first loaded inside a pytester run let httpcore2's ConnectError escape openai)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the request

    async def request() -> None:
        client = openai.AsyncOpenAI(
            api_key="preload", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=2
        )
        try:
            await client.models.list()
        except openai.APIError:
            pass
        finally:
            await client.close()

    asyncio.run(request())


_load_the_transport()
