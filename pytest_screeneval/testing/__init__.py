"""Test helpers shipped with the plugin: a local OpenAI-compatible server for scorer tests.

Nothing here is imported by the plugin itself; users import it from their own tests
(``from pytest_screeneval.testing import ChatServer, Reply``) to try a scorer offline.
"""

from __future__ import annotations

from pytest_screeneval.testing.chat_server import (
    DIALECTS,
    FIRST_CRITERION,
    ChatServer,
    JudgeRules,
    ReceivedRequest,
    Reply,
    default_answer,
    is_judge_request,
)

__all__ = [
    "DIALECTS",
    "FIRST_CRITERION",
    "ChatServer",
    "JudgeRules",
    "ReceivedRequest",
    "Reply",
    "default_answer",
    "is_judge_request",
]
