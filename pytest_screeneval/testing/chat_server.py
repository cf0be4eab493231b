"""A small OpenAI-compatible Chat Completions server on loopback, scriptable per request.

It speaks real HTTP (``http.server`` in background threads, one per connection, HTTP/1.1
keep-alive), so a scorer under test goes through the genuine ``openai`` client, its connection
pool, its timeouts and its error mapping. Nothing leaves 127.0.0.1.

Each ``POST /v1/chat/completions`` is answered by the next :class:`Reply` queued with
:meth:`ChatServer.enqueue`, else by ``responder(request_body)``, else by the default reply. The
default reply is a VALID structured answer: the server reads the JSON schema the client sent in
``response_format`` and gives every criterion the same fixed score (3, clamped to the criterion's
scale) with a rationale that names the criterion and quotes one line of the resume verbatim. It
never looks for keywords, so its answers are deterministic in the request text alone.

``dialect`` imitates what real servers accept as ``response_format`` (see :data:`DIALECTS`): a
rejected format gets the error that server sends (llama.cpp's is an HTTP 500 carrying a
validation error), and a server without structured output answers in prose around a fenced JSON
block, the schema read from the prompt.

Faults a test can make it send (each a :class:`Reply` constructor): a 200 whose JSON body is cut
off (:meth:`Reply.cut_off_body`), an HTML login page with 200 (:meth:`Reply.login_page`), a 401
that echoes the key it was sent (:meth:`Reply.echo_key`, or ``ChatServer(api_key=...,
echo_key=True)`` as OpenAI does), answers whose rationales hold NUL, lone surrogates, terminal
escapes or megabytes (:meth:`Reply.with_rationale`), 429 (:meth:`Reply.rate_limited`) and 500
(:meth:`Reply.server_error`). :data:`FAULTS` names one of each, for a test that sends them all.

``rate_limit`` puts a token bucket in front of the chat endpoint (:class:`RateLimit`: requests
and tokens per minute, each with a burst): a request the bucket cannot pay for is answered 429
with ``Retry-After`` (and ``retry-after-ms``), and every answer carries OpenAI's
``x-ratelimit-*`` headers. Either can be turned off: headers only (the limit is reported, never
enforced, and each request over it is counted in ``stats()["over_limit"]``), or 429s without
headers. Every completion says ``system_fingerprint`` (settable at any time, or changed after
the Nth answer with ``fingerprint_change``), as a provider says which backend served it.

It also answers as a rationale judge (the ``screeneval_rationale_judge`` prompt, recognised by
the ``protected_attribute`` property of the schema it asks for): by :class:`JudgeRules`, a
rationale that holds one of its protected phrases (any case) is said to refer to that phrase's
category, and one that holds one of its claims to make that unsupported claim; anything else is
found clean. Deterministic in the request text alone, like the scorer's answers.

``GET /v1/models`` lists the configured model ids. Everything received is kept in
:attr:`ChatServer.requests`, and :attr:`ChatServer.max_in_flight` says how many chat requests
were being answered at once, which is how tests prove that a client really ran concurrently.
A server in its own process reports the same over HTTP: ``GET /stats`` answers
:meth:`ChatServer.stats` as JSON and ``POST /stats/reset`` calls :meth:`ChatServer.reset_stats`
(neither is counted as a request).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Any

__all__ = [
    "ALL_CRITERIA",
    "DIALECTS",
    "FAULTS",
    "FIRST_CRITERION",
    "ChatServer",
    "JudgeRules",
    "RateLimit",
    "ReceivedRequest",
    "Reply",
    "default_answer",
    "is_judge_request",
    "judge_answer",
    "main",
]

# What each imitated server accepts as response_format: "none" is a request without one.
DIALECTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "openai": frozenset({"json_schema", "json_object", "text", "none"}),
        # llama-cpp-python's server: no json_schema type, a schema inside json_object instead
        "llama.cpp": frozenset({"json_object", "text", "none"}),
        # JSON mode only: some JSON is forced, the schema must be stated in the prompt
        "json_object": frozenset({"json_object", "text", "none"}),
        # no structured output at all: any response_format is refused
        "prompt": frozenset({"none"}),
    }
)
# Exactly what llama-cpp-python 0.3.36 answers to a json_schema response format.
LLAMA_CPP_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)

# Stands for "whichever criterion the request's schema lists first", so a test can script a
# broken answer without repeating the rubric's criterion names.
FIRST_CRITERION = "<first>"
# Stands for "every criterion the request's schema lists" in ``Reply.fields``.
ALL_CRITERIA = "<all>"

_QUOTE_WORDS = re.compile(r"\S+(?:\s+\S+){0,7}")
# A line this long is a sentence of the resume, not a name or a heading: the default rationale
# quotes it so that the quote is grounded in the text and carries no personal name.
_MIN_QUOTE_WORDS = 5
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})
DEFAULT_FINGERPRINT = "fp_screeneval"


@dataclass(frozen=True)
class RateLimit:
    """A token bucket per minute for requests and for tokens (None: no such limit).

    A bucket holds at most its burst (default: a minute's worth) and refills continuously at
    the per-minute rate. A request costs one request and its prompt's tokens (words) plus its
    ``max_tokens``. ``reject`` answers a request the buckets cannot pay for with a 429;
    ``headers`` sends the ``x-ratelimit-*`` headers on every answer. Without ``reject``, a request
    over the limit is answered but not charged (as a refused one would not be), and counted.
    """

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    burst_requests: float | None = None
    burst_tokens: float | None = None
    reject: bool = True
    headers: bool = True


class _Bucket:
    """Refills at ``per_minute`` up to ``capacity``; may go below zero when not enforcing."""

    def __init__(self, per_minute: float, capacity: float | None, now: float) -> None:
        self.per_minute = per_minute
        self.per_s = per_minute / 60.0
        self.capacity = capacity if capacity is not None else per_minute
        self.level = self.capacity
        self._at = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + self.per_s * max(0.0, now - self._at))
        self._at = now

    def wait_for(self, cost: float) -> float:
        """Seconds until the bucket holds ``cost`` (0 when it does now)."""
        return max(0.0, (min(cost, self.capacity) - self.level) / self.per_s)

    def headers(self, kind: str) -> dict[str, str]:
        full_in = max(0.0, (self.capacity - self.level) / self.per_s)
        return {
            f"x-ratelimit-limit-{kind}": str(int(self.per_minute)),
            f"x-ratelimit-remaining-{kind}": str(max(0, math.floor(self.level))),
            f"x-ratelimit-reset-{kind}": go_duration(full_in),
        }


def go_duration(seconds: float) -> str:
    """A duration as OpenAI writes its reset headers (Go's format): "20ms", "1.5s", "6m0s"."""
    if seconds < 1.0:
        return f"{max(0, round(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60.0)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


@dataclass(frozen=True)
class Reply:
    """How the server answers one chat request.

    ``content`` is the exact message content; ``None`` means the default structured answer,
    edited by ``drop`` (criteria left out), ``scores`` (criterion → score put in its place, any
    JSON value) and ``add`` (extra top-level entries). ``status`` other than 200 sends an
    OpenAI-style error body with ``headers`` (e.g. ``Retry-After``). ``delay_s`` is waited before
    answering: a latency, or a hang when it is longer than the client's timeout.
    """

    content: str | None = None
    refusal: str | None = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    error_message: str = ""
    error_code: str | None = None  # the error body's code and type (e.g. insufficient_quota)
    delay_s: float = 0.0
    model: str | None = None  # the served model; None echoes the requested one
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; None estimates them
    drop: tuple[str, ...] = ()
    scores: Mapping[str, object] = field(default_factory=dict)
    add: Mapping[str, object] = field(default_factory=dict)
    fields: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # criterion -> edits
    finish_reason: str = "stop"
    raw_body: bytes | None = None  # sent as is with ``status`` (an HTML page from a proxy...)
    content_type: str = "text/html"  # of ``raw_body``
    # the error message gets the bearer token the request carried in place of "{key}"
    echoes_key: bool = False
    system_fingerprint: str | None = None  # None: the server's current one

    @classmethod
    def refused(cls, text: str = "I can't help with evaluating this candidate.") -> Reply:
        return cls(refusal=text)

    @classmethod
    def invalid_json(cls, text: str = '{"experience": {"score": 4, "rationale": "cut off') -> Reply:
        return cls(content=text)

    @classmethod
    def missing_criterion(cls, name: str = FIRST_CRITERION) -> Reply:
        return cls(drop=(name,))

    @classmethod
    def extra_criterion(cls, name: str = "charisma") -> Reply:
        extra = {"score": 3, "rationale": "Not in the rubric.", "evidence": [], "confidence": None}
        return cls(add={name: extra})

    @classmethod
    def off_scale(cls, name: str = FIRST_CRITERION, score: object = 9) -> Reply:
        return cls(scores={name: score})

    @classmethod
    def bad_field(cls, field_name: str, value: object, name: str = FIRST_CRITERION) -> Reply:
        """One field of one criterion's entry set to ``value`` (e.g. a confidence of 1.5)."""
        return cls(fields={name: {field_name: value}})

    @classmethod
    def rate_limited(cls, retry_after: str | None = "1") -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=429, headers=headers, error_message="Rate limit reached.")

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(status=status, error_message="The server had an error.")

    @classmethod
    def cut_off_body(cls, keep: int = 120) -> Reply:
        """A 200 whose JSON body stops after ``keep`` bytes (a proxy that dropped the rest)."""
        return cls(raw_body=_CUT_OFF_COMPLETION[:keep], content_type="application/json")

    @classmethod
    def login_page(cls, status: int = 200) -> Reply:
        """A single-sign-on proxy's HTML login page, answered with 200."""
        return cls(status=status, raw_body=LOGIN_PAGE)

    @classmethod
    def echo_key(cls, status: int = 401) -> Reply:
        """The key the request carried, echoed in the error as OpenAI's 401 does."""
        return cls(
            status=status,
            error_message="Incorrect API key provided: {key}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            echoes_key=True,
        )

    @classmethod
    def with_rationale(cls, text: str, name: str = ALL_CRITERIA) -> Reply:
        """The default answer with this rationale (NUL, a lone surrogate, an escape sequence,
        10 MB...) for one criterion, or every one."""
        return cls(fields={name: {"rationale": text}})

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Reply:
        return cls(delay_s=seconds)

    @classmethod
    def slow(cls, seconds: float) -> Reply:
        return cls(delay_s=seconds)


LOGIN_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in - Corporate SSO</title></head><body>"
    b'<form method="post" action="/login"><input name="user"><input name="password" '
    b'type="password"><button>Sign in</button></form></body></html>'
)
_CUT_OFF_COMPLETION = (
    b'{"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m", '
    b'"choices": [{"index": 0, "message": {"role": "assistant", "content": "{\\"skills\\": '
    b'{\\"score\\": 3, \\"rationale\\": \\"The candidate'
)


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server saw it: headers lower-cased, body parsed when it was JSON."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    received_at: float  # time.monotonic() when the body had been read


Responder = Callable[[Any], Reply]


def request_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON schema a request asks for: in ``response_format`` (either dialect), else the
    last line of a system message that is a JSON schema (the schema stated in the prompt)."""
    response_format = body.get("response_format") or {}
    if isinstance(response_format, Mapping):
        schema = (response_format.get("json_schema") or {}).get("schema") or response_format.get(
            "schema"
        )
        if isinstance(schema, Mapping):
            return schema
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping) or message.get("role") != "system":
            continue
        content = message.get("content")
        for line in reversed(str(content).splitlines()):
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    found = json.loads(line)
                    if isinstance(found, dict) and isinstance(found.get("properties"), dict):
                        return found
    return None


def default_answer(body: Mapping[str, Any], score: int = 3) -> dict[str, Any] | None:
    """The valid structured answer for a request, or None when it asked for no JSON schema."""
    schema = request_schema(body) or {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    quote = _quote_from_resume(body)
    answer: dict[str, Any] = {}
    for name, prop in properties.items():
        score_schema = (prop.get("properties") or {}).get("score") or {}
        levels = score_schema.get("enum")
        if isinstance(levels, list) and levels:
            low, high = int(min(levels)), int(max(levels))
        else:
            low = int(score_schema.get("minimum", 1))
            high = int(score_schema.get("maximum", 5))
        given = min(max(score, low), high)
        label = str(name).replace("_", " ")
        if quote:
            rationale = f'The {label} criterion scores {given} of {high} given "{quote}".'
        else:
            rationale = f"The {label} criterion scores {given} of {high} on the resume as written."
        answer[name] = {
            "score": given,
            "rationale": rationale,
            "evidence": [quote] if quote else [],
            "confidence": 0.5,
        }
    return answer


@dataclass(frozen=True)
class JudgeRules:
    """How the server answers as a rationale judge: ``protected`` maps a phrase to the category
    it is said to refer to; ``ungrounded`` lists phrases said to be unsupported claims."""

    protected: Mapping[str, str] = field(default_factory=dict)
    ungrounded: tuple[str, ...] = ()


def is_judge_request(body: Mapping[str, Any]) -> bool:
    """Whether a request is the rationale judge's (its schema asks for protected_attribute)."""
    schema = request_schema(body) or {}
    properties = schema.get("properties")
    return isinstance(properties, Mapping) and "protected_attribute" in properties


def _rationale_of(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            text = str(message.get("content") or "")
            end = text.rfind("</rationale>")
            start = text.rfind("<rationale>", 0, end) if end >= 0 else -1
            return text[start + len("<rationale>") : end].strip() if start >= 0 else ""
    return ""


def judge_answer(body: Mapping[str, Any], rules: JudgeRules) -> dict[str, Any]:
    """The judge's answer by ``rules``: the first protected phrase and the first claim found in
    the request's rationale, each quoted as the rationale writes it."""
    rationale = _rationale_of(body)
    lowered = rationale.lower()
    answer: dict[str, Any] = {
        "protected_attribute": False,
        "category": None,
        "phrase": None,
        "ungrounded": False,
        "claim": None,
    }
    for phrase, category in rules.protected.items():
        at = lowered.find(phrase.lower())
        if at >= 0:
            answer |= {
                "protected_attribute": True,
                "category": category,
                "phrase": rationale[at : at + len(phrase)],
            }
            break
    for claim in rules.ungrounded:
        at = lowered.find(claim.lower())
        if at >= 0:
            answer |= {"ungrounded": True, "claim": rationale[at : at + len(claim)]}
            break
    return answer


def _quote_from_resume(body: Mapping[str, Any]) -> str:
    """Up to eight words, verbatim, from the first sentence-like line of the resume."""
    texts: list[str] = [
        m["content"]
        for m in body.get("messages") or []
        if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), str)
    ]
    if not texts:
        return ""
    text = texts[-1]
    # The last <resume> block: a prompt may mention the tag in its instructions before it.
    end = text.rfind("</resume>")
    start = text.rfind("<resume>", 0, end) if end >= 0 else -1
    resume = text[start + len("<resume>") : end] if start >= 0 else text
    for line in resume.splitlines():
        if len(line.split()) >= _MIN_QUOTE_WORDS:
            found = _QUOTE_WORDS.search(line)
            if found:
                # Still verbatim without its closing punctuation, and reads better in a sentence.
                return found.group(0).rstrip(".,;:")
    return ""


def _resolve(name: str, order: list[str]) -> str:
    if name == FIRST_CRITERION:
        return order[0] if order else name
    return name


def _build_content(
    reply: Reply, body: Mapping[str, Any], default_score: int, judge: JudgeRules | None = None
) -> str | None:
    if reply.refusal is not None:
        return None
    if reply.content is not None:
        return reply.content
    if is_judge_request(body):
        return json.dumps(judge_answer(body, judge or JudgeRules()))
    answer = default_answer(body, default_score)
    if answer is None:
        return "OK"
    order = list(answer)
    for name in reply.drop:
        answer.pop(_resolve(name, order), None)
    for name, score in reply.scores.items():
        resolved = _resolve(name, order)
        if resolved in answer:
            answer[resolved]["score"] = score
    for name, edits in reply.fields.items():
        for resolved in order if name == ALL_CRITERIA else [_resolve(name, order)]:
            if resolved in answer:
                answer[resolved].update(edits)
    for name, entry in reply.add.items():
        answer[name] = entry
    return json.dumps(answer)


def format_of(body: Mapping[str, Any]) -> str:
    """The response_format type a request asked for, "none" without one."""
    response_format = body.get("response_format")
    if not isinstance(response_format, Mapping):
        return "none"
    return str(response_format.get("type"))


def _rejection(dialect: str, asked: str) -> tuple[int, str]:
    """The status and message a server of this dialect answers an unsupported format with."""
    if dialect == "llama.cpp":
        return 500, LLAMA_CPP_REJECTION
    return 400, f"Invalid parameter: response_format of type '{asked}' is not supported."


def _count_words(body: Mapping[str, Any]) -> int:
    return sum(
        len(m["content"].split())
        for m in body.get("messages") or []
        if isinstance(m, Mapping) and isinstance(m.get("content"), str)
    )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # The default listen backlog (5) drops connects when 30 clients open at once, and a dropped
    # SYN costs a one-second retransmit: a benchmark would measure the backlog, not the client.
    request_queue_size = 256
    chat: ChatServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (its call cancelled or timed out) is not the server's error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, the body waits for the
    # client's delayed ACK of the headers (40 ms on Linux) on every keep-alive answer.
    disable_nagle_algorithm = True
    server: _HTTPServer
    _answering: ChatServer | None = None  # the server whose chat request this one is answering

    def setup(self) -> None:
        super().setup()
        self.server.chat._track(self.connection, opened=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.chat._track(self.connection, opened=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a test run's output is not the place for an access log."""

    def do_GET(self) -> None:
        chat = self.server.chat
        if self.path.rstrip("/") == "/stats":
            self._send_json(200, chat.stats())
            return
        chat._record(self, None)
        if self.path.rstrip("/") == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "screeneval"}
                for m in chat.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_error(404, f"No route for GET {self.path}.")

    def do_POST(self) -> None:
        chat = self.server.chat
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") == "/stats/reset":
            chat.reset_stats()
            self._send_json(200, chat.stats())
            return
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        chat._record(self, body)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_error(404, f"No route for POST {self.path}.")
            return
        if not isinstance(body, dict):
            self._send_error(400, "The request body is not a JSON object.")
            return
        if chat.api_key is not None and self.headers.get("Authorization") != (
            f"Bearer {chat.api_key}"
        ):
            echoed = f": {self._bearer_token()}" if chat.echo_key else ""
            self._send_error(401, f"Incorrect API key provided{echoed}.")
            return
        asked = format_of(body)
        if asked not in DIALECTS[chat.dialect]:
            status, message = _rejection(chat.dialect, asked)
            self._send_error(status, message)
            return
        admitted, limit_headers = chat._admit(body)
        if not admitted:
            self._send_error(429, "Rate limit reached for requests.", limit_headers)
            return
        chat._enter()
        self._answering = chat
        try:
            self._answer(chat, body, limit_headers)
        finally:
            self._answered()

    def _bearer_token(self) -> str:
        return str(self.headers.get("Authorization") or "").removeprefix("Bearer ")

    def _answered(self) -> None:
        # Out of flight before the first byte of the answer goes: a client that has its answer
        # and then asks for the counts must not see its own request still in flight.
        chat, self._answering = self._answering, None
        if chat is not None:
            chat._leave()

    def _answer(
        self, chat: ChatServer, body: dict[str, Any], limit_headers: Mapping[str, str]
    ) -> None:
        try:
            reply = chat._next_reply(body)
        except Exception as error:
            # A broken responder is a bug in the test: say so in the answer, not in stderr.
            self._send_error(500, f"The test responder raised {type(error).__name__}: {error}")
            return
        if reply.delay_s > 0 and chat._closing.wait(reply.delay_s):
            # The server is shutting down: drop the request like a dying server would.
            self.close_connection = True
            return
        headers = {**limit_headers, **reply.headers}
        if reply.raw_body is not None:
            self._send_bytes(reply.status, reply.raw_body, reply.content_type, headers)
            return
        if reply.status != 200:
            message = reply.error_message or "Error."
            if reply.echoes_key:
                message = message.replace("{key}", self._bearer_token())
            self._send_error(reply.status, message, headers, reply.error_code)
            return
        content = _build_content(reply, body, chat.default_score, chat.judge)
        if content is not None and reply.content is None and chat.dialect == "prompt":
            # A model without structured output chats around its JSON.
            content = f"Here is my assessment.\n\n```json\n{content}\n```\n\nI hope this helps."
        if reply.usage is not None:
            prompt_tokens, completion_tokens = reply.usage
        else:
            prompt_tokens = _count_words(body)
            completion_tokens = len((content or reply.refusal or "").split())
        completion = {
            "id": f"chatcmpl-{chat._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or str(body.get("model", "")),
            "system_fingerprint": reply.system_fingerprint or chat._fingerprint(),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        self._send_json(200, completion, headers)

    def _send_error(
        self,
        status: int,
        message: str,
        headers: Mapping[str, str] = _NO_HEADERS,
        code: str | None = None,
    ) -> None:
        if code is not None:
            kind = code
        elif status == 429:
            kind = "rate_limit_error"
        elif status >= 500:
            kind = "server_error"
        else:
            kind = "invalid_request_error"
        error = {"message": message, "type": kind, "code": code, "param": None}
        self._send_json(status, {"error": error}, headers)

    def _send_json(
        self, status: int, payload: object, headers: Mapping[str, str] = _NO_HEADERS
    ) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _send_bytes(
        self, status: int, data: bytes, content_type: str, headers: Mapping[str, str]
    ) -> None:
        self._answered()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout fired during a hang): nothing left to answer.
            self.close_connection = True


class ChatServer:
    """An OpenAI-compatible Chat Completions server on 127.0.0.1 at a free port.

    Use it as a context manager; ``base_url`` ends in ``/v1`` as the ``openai`` client expects.
    ``api_key``, when given, makes the server answer 401 to any other bearer token (with
    ``echo_key``, the 401 says which token it was sent, as OpenAI's does); ``port`` 0
    takes a free one; ``dialect`` is one of :data:`DIALECTS` (which response formats it accepts).
    ``rate_limit`` puts a token bucket in front of the chat endpoint; ``system_fingerprint`` is
    what every completion says served it, and ``fingerprint_change`` = (n, fingerprint) changes
    it from the answer after the n-th on (a backend swapped mid-run). ``judge`` says how it
    answers the rationale judge's requests (:class:`JudgeRules`; by default it finds nothing).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        models: tuple[str, ...] = ("screeneval-test-2024-06-01",),
        default_score: int = 3,
        api_key: str | None = None,
        port: int = 0,
        dialect: str = "openai",
        echo_key: bool = False,
        rate_limit: RateLimit | None = None,
        system_fingerprint: str | None = DEFAULT_FINGERPRINT,
        fingerprint_change: tuple[int, str] | None = None,
        judge: JudgeRules | None = None,
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        self.dialect = dialect
        self.judge = judge or JudgeRules()  # how it answers as a rationale judge
        self.responder = responder
        self.port = port
        self.models = models
        self.default_score = default_score
        self.api_key = api_key
        self.echo_key = echo_key
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._requests: list[ReceivedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._ids = 0
        self._connections: set[socket.socket] = set()
        self._connections_opened = 0
        self._closing = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.system_fingerprint = system_fingerprint
        self.fingerprint_change = fingerprint_change
        self._fingerprinted = 0  # completions that said a fingerprint so far
        self.rate_limit = rate_limit
        self._request_bucket: _Bucket | None = None
        self._token_bucket: _Bucket | None = None
        self._rate_limited = 0
        self._over_limit = 0
        self._set_buckets()

    def _set_buckets(self) -> None:
        limit, now = self.rate_limit, time.monotonic()
        self._request_bucket = self._token_bucket = None
        if limit is not None and limit.requests_per_minute:
            self._request_bucket = _Bucket(limit.requests_per_minute, limit.burst_requests, now)
        if limit is not None and limit.tokens_per_minute:
            self._token_bucket = _Bucket(limit.tokens_per_minute, limit.burst_tokens, now)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> ChatServer:
        if self._httpd is not None:
            return self
        self._closing.clear()
        httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
        httpd.chat = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._closing.set()  # wakes every delayed or hanging answer
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            # Idle keep-alive handlers block on a read: shutting their sockets lets them end.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- what tests read and script ----------------------------------------------------------

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the ChatServer is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[ReceivedRequest]:
        return [r for r in self.requests if r.path.rstrip("/") == "/v1/chat/completions"]

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def stats(self) -> dict[str, int]:
        """Counts for a client in another process: requests, chat requests, in-flight peak, and
        connections opened (a pooling client opens few and keeps them alive)."""
        with self._lock:
            chat = sum(r.path.rstrip("/") == "/v1/chat/completions" for r in self._requests)
            return {
                "requests": len(self._requests),
                "chat_requests": chat,
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
                "connections": self._connections_opened,
                "rate_limited": self._rate_limited,
                "over_limit": self._over_limit,
            }

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next chat requests with these replies, in order, before the responder."""
        with self._lock:
            self._queue.extend(replies)

    def reset_stats(self) -> None:
        """Forget received requests, the in-flight peak and the count of connections opened
        (queued replies stay queued)."""
        with self._lock:
            self._requests.clear()
            self._max_in_flight = self._in_flight
            self._connections_opened = 0
            self._rate_limited = self._over_limit = 0
            self._fingerprinted = 0
            self._set_buckets()  # full buckets: a new measurement starts from a rested limit

    # -- called from handler threads ---------------------------------------------------------

    def _admit(self, body: Mapping[str, Any]) -> tuple[bool, dict[str, str]]:
        """Charge a chat request to the buckets: (admitted, the rate-limit headers to send)."""
        limit = self.rate_limit
        if limit is None:
            return True, {}
        max_tokens = body.get("max_tokens")
        cost_tokens = _count_words(body) + (max_tokens if isinstance(max_tokens, int) else 0)
        charges = [(self._request_bucket, 1.0), (self._token_bucket, float(cost_tokens))]
        with self._lock:
            now = time.monotonic()
            wait = 0.0
            for bucket, cost in charges:
                if bucket is not None:
                    bucket.refill(now)
                    wait = max(wait, bucket.wait_for(cost))
            admitted = wait <= 0.0 or not limit.reject
            if wait > 0.0:
                if limit.reject:
                    self._rate_limited += 1
                else:
                    self._over_limit += 1
            if wait <= 0.0:  # one over the limit is answered, not charged: as if refused
                for bucket, cost in charges:
                    if bucket is not None:
                        bucket.level -= cost
            headers: dict[str, str] = {}
            if limit.headers:
                if self._request_bucket is not None:
                    headers.update(self._request_bucket.headers("requests"))
                if self._token_bucket is not None:
                    headers.update(self._token_bucket.headers("tokens"))
        if not admitted:
            headers["retry-after-ms"] = str(math.ceil(wait * 1000))
            headers["Retry-After"] = str(max(1, math.ceil(wait)))
        return admitted, headers

    def _fingerprint(self) -> str | None:
        with self._lock:
            self._fingerprinted += 1
            change = self.fingerprint_change
            if change is not None and self._fingerprinted > change[0]:
                return change[1]
            return self.system_fingerprint

    def _next_reply(self, body: Any) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Reply()

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request = ReceivedRequest(handler.command, handler.path, headers, body, time.monotonic())
        with self._lock:
            self._requests.append(request)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _track(self, connection: socket.socket, *, opened: bool) -> None:
        with self._lock:
            if opened:
                self._connections.add(connection)
                self._connections_opened += 1
            else:
                self._connections.discard(connection)


# One of each fault the server can send, by name: what a client must survive (a sentence, no
# traceback, no secret shown, no row lost). Made on demand: one is a 10 MB rationale.
FAULTS: Mapping[str, Callable[[], Reply]] = MappingProxyType(
    {
        "cut-off-json-200": Reply.cut_off_body,
        "html-login-page-200": Reply.login_page,
        "401-echoing-the-key": Reply.echo_key,
        "nul-in-rationale": lambda: Reply.with_rationale("Strong SQL\x00 and Python."),
        "lone-surrogate-in-rationale": lambda: Reply.with_rationale("A good fit \ud83d here."),
        "escapes-in-rationale": lambda: Reply.with_rationale(
            "Solid.\x1b[2K\r\x1b[32mPASSED\x1b[0m \x1b]0;owned\x07\x08\x9b"
        ),
        "huge-rationale": lambda: Reply.with_rationale(
            "Long. " * (10 * 1024 * 1024 // 6), FIRST_CRITERION
        ),
        "nul-content": lambda: Reply(content="\x00"),
        "429": lambda: Reply.rate_limited("0"),
        "500": Reply.server_error,
    }
)


def main(argv: list[str] | None = None) -> None:
    """Serve default answers until interrupted: ``python -m pytest_screeneval.testing.chat_server``.

    Run apart from the client (another process, its own GIL) when measuring a client's overhead;
    the first line printed is the base URL, and ``GET /stats`` on the server's root says how many
    chat requests it answered and how many were in flight at most.
    """
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--score", type=int, default=3, help="the score given to every criterion")
    parser.add_argument("--dialect", choices=sorted(DIALECTS), default="openai")
    parser.add_argument("--rpm", type=float, help="requests per minute (a token bucket)")
    parser.add_argument("--tpm", type=float, help="tokens per minute (a token bucket)")
    parser.add_argument("--burst", type=float, help="the request bucket's size (default: rpm)")
    parser.add_argument("--burst-tokens", type=float, help="the token bucket's size")
    parser.add_argument(
        "--limit-mode",
        choices=("reject", "headers", "reject-no-headers"),
        default="reject",
        help="429 with headers, headers only (never a 429), or 429s without headers",
    )
    parser.add_argument("--fingerprint", default=DEFAULT_FINGERPRINT)
    parser.add_argument(
        "--judge-protected",
        action="append",
        default=[],
        metavar="PHRASE=CATEGORY",
        help="as a rationale judge, find this phrase a reference to this category",
    )
    parser.add_argument(
        "--judge-ungrounded",
        action="append",
        default=[],
        metavar="PHRASE",
        help="as a rationale judge, find this phrase an unsupported claim",
    )
    parser.add_argument(
        "--fingerprint-change", help="N:FINGERPRINT, said from the answer after the N-th on"
    )
    args = parser.parse_args(argv)
    latency = Reply(delay_s=args.latency)
    rate_limit = None
    if args.rpm or args.tpm:
        rate_limit = RateLimit(
            requests_per_minute=args.rpm,
            tokens_per_minute=args.tpm,
            burst_requests=args.burst,
            burst_tokens=args.burst_tokens,
            reject=args.limit_mode != "headers",
            headers=args.limit_mode != "reject-no-headers",
        )
    change = None
    if args.fingerprint_change:
        count, _, fingerprint = args.fingerprint_change.partition(":")
        change = (int(count), fingerprint)
    with ChatServer(
        lambda body: latency,
        default_score=args.score,
        port=args.port,
        dialect=args.dialect,
        rate_limit=rate_limit,
        system_fingerprint=args.fingerprint,
        fingerprint_change=change,
        judge=JudgeRules(
            dict(rule.partition("=")[::2] for rule in args.judge_protected),
            tuple(args.judge_ungrounded),
        ),
    ) as server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
