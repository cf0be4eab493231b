"""The ``openai`` scorer: any OpenAI-compatible Chat Completions endpoint, structured output.

One request per resume asks for every criterion at once through a JSON schema (:mod:`.answer`),
rendered from a prompt template whose file bytes pin the prompt (:mod:`.prompt`). The model id
must be a pinned snapshot (:mod:`.model_pin`).

Dialects: servers ask for structure differently (:mod:`.answer`). With ``auto`` the scorer
probes once, before the run is recorded, with one real-shaped request per dialect, strictest
first, and keeps the first the server accepts; the dialect is part of the scorer identity.

Retries are explicit and counted, never silent: the client's own retries are off; a connection
error, a timeout, HTTP 408/409 or a 5xx is retried up to ``max_retries`` times with
exponential back-off and jitter, honouring ``Retry-After`` (capped). A 429 is a rate limit, not
a failure: under the session's runner the call raises :class:`RateLimited` with the server's
``Retry-After`` and rate-limit headers, and the runner waits for every call at once (see
``scoring.pacing``); called on its own, the scorer waits it out itself. Either way the wait is
not an attempt and never counts towards ``stop_after_failures``. A 429 saying the quota is
used up (``insufficient_quota``) is a rejection: waiting cannot cure it. A rejection is not retried:
a 4xx, or a 5xx whose body says the request is invalid (llama.cpp answers a schema it cannot
take with HTTP 500 and a validation error), fails the same way every time. After
``stop_after_failures`` identical request failures in a row the scorer raises
:class:`ScorerUnavailable`, which stops the run with one sentence. An answer that came back is
never retried either: a refusal or unreadable JSON fails the whole answer's items, a bad field
fails its own criterion only, each with the raw text.

``openai`` is imported when the first scorer is made, not when this module is imported.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import re
import threading
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_screeneval.boundary.numbers import is_finite_number
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.openai.answer import (
    DIALECTS,
    parse_answer,
    parse_cut_off_answer,
    response_format,
    schema_instruction,
)
from pytest_screeneval.scoring.openai.model_pin import check_model_pin
from pytest_screeneval.scoring.openai.options import OpenAISettings, api_key_from_env
from pytest_screeneval.scoring.openai.prompt import PromptTemplate, load_prompt_template
from pytest_screeneval.scoring.openai.rate_headers import rate_limits_from_headers
from pytest_screeneval.scoring.protocol import (
    RateLimited,
    RateLimits,
    ScoreOutcome,
    ScorerError,
    ScorerIdentity,
    ScorerUnavailable,
    errors_with_raw,
    runner_waits_on_limits,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "MAX_RETRY_AFTER_S",
    "PROBE_TEXT",
    "OpenAIScorer",
    "check_model_pin",
    "is_rejection",
    "make_scorer",
    "parse_retry_after",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER_S = 60.0
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 8.0
# Statuses that say "try again later" rather than "this request is wrong".
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# A 5xx whose message says this is a bad request, not a bad moment: a validation error
# (llama.cpp's Python server, FastAPI/pydantic), an unsupported parameter or format.
INVALID_REQUEST = re.compile(
    r"validation error|input should be|invalid[_ ]request|not supported|unsupported|"
    r"extra inputs are not permitted|unrecognized|literal_error",
    re.IGNORECASE,
)
# Rejections that no response format can cure: the key, the permission, the model or the URL.
NOT_ABOUT_FORMAT = frozenset({401, 403, 404})
# Rejections of this one input (too long for the model's context, refused by a content policy):
# another resume may well pass, so they fail their case's items and never stop the run.
INPUT_DEPENDENT = re.compile(
    r"context[_ ]length|maximum context|too many tokens|prompt is too long|input is too long|"
    r"string_above_max_length|content[_ ]policy|content[_ ]filter|content management policy|"
    r"responsible ?ai|safety system",
    re.IGNORECASE,
)
# A local server needs no key, but the client insists on one; this is sent instead.
NO_KEY = "screeneval-no-key"
# The resume of the one probe request per dialect that ``auto`` sends before the run.
PROBE_TEXT = "Probe: no resume. Score every criterion at the lowest level."
PROBE_MAX_TOKENS = 1
MAX_MESSAGE_CHARS = 300
# Rate-limit waits in a row one call takes on its own (outside the runner) before it gives up.
MAX_LIMIT_WAITS = 20
# Error codes of a 429 that says the account's quota is spent: no wait can cure it.
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


def is_rejection(status: int, message: str) -> bool:
    """Whether an HTTP error says "this request is wrong", so sending it again cannot help."""
    if status in RETRYABLE_STATUSES:
        return False
    if 400 <= status < 500:
        return True
    return status == 500 and bool(INVALID_REQUEST.search(message))


def _input_dependent(rejection: _Rejected) -> bool:
    """A 400-class rejection of this input, not of every request: see INPUT_DEPENDENT."""
    return rejection.status in (400, 413, 422) and bool(
        INPUT_DEPENDENT.search(f"{rejection.description} {rejection.raw}")
    )


def _is_chat_completion(answer: object) -> bool:
    from openai.types.chat import ChatCompletion

    return isinstance(answer, ChatCompletion)


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds:
        try:
            waited = float(milliseconds) / 1000.0
        except ValueError:
            pass
        else:
            if is_finite_number(waited):  # "nan" parses, and would wait forever or raise
                return min(max(waited, 0.0), MAX_RETRY_AFTER_S)
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not is_finite_number(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


class _Transient(Exception):
    """A failure worth another attempt, with the server's wish for a wait if it gave one."""

    def __init__(self, description: str, retry_after: float | None = None) -> None:
        super().__init__(description)
        self.description = description
        self.retry_after = retry_after


class _RateLimit(Exception):
    """An HTTP 429: the server wants fewer calls, not a different one."""

    def __init__(
        self, description: str, retry_after: float | None, limits: RateLimits | None
    ) -> None:
        super().__init__(description)
        self.description = description
        self.retry_after = retry_after
        self.limits = limits


class _Rejected(Exception):
    """The server rejected the request itself: sending it again fails the same way."""

    def __init__(self, status: int, description: str, raw: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.raw = raw


class _GaveUp(Exception):
    """Transient failures used up every attempt."""

    def __init__(self, description: str, attempts: int, *, rate_limited: bool = False) -> None:
        super().__init__(description)
        self.description = description
        self.attempts = attempts
        self.rate_limited = rate_limited  # never counted towards stop_after_failures


class ChatEndpoint:
    """One OpenAI-compatible Chat Completions endpoint: the client per event loop, the dialect
    probe, explicit retries, the failure streak. What it asks for and how it reads the answer
    belong to its subclass: the scorer (:class:`OpenAIScorer`) and the rationale judge
    (``scoring.openai.judge``) share this, so neither has a client of its own."""

    # how messages name it: "The openai scorer stopped the run after ..."
    role = "openai scorer"

    def chat_request(
        self, system: str, user: str, response_format: dict[str, Any] | None
    ) -> dict[str, Any]:
        """One Chat Completions request of this endpoint's settings.

        The messages and the response format go in ``extra_body``, as they are: passed as the
        typed arguments, openai-python walks them through its TypedDict transform on every
        call, a walk that changes nothing in plain JSON and was half of the client's CPU per
        request here (held under the GIL the session's items need too). ``messages`` must
        still be given; the body's list replaces the empty one.
        """
        body: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ]
        }
        if response_format is not None:
            body["response_format"] = response_format
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [],
            "temperature": self.settings.temperature,
            "extra_body": body,
        }
        if self.settings.max_tokens is not None:
            request["max_tokens"] = self.settings.max_tokens
        return request

    def __init__(
        self,
        settings: OpenAISettings,
        api_key: str,
        *,
        backoff_base_s: float = BACKOFF_BASE_S,
    ) -> None:
        self.settings = settings
        # The dialect in use; None until ``auto`` has probed the server.
        self.response_format: str | None = None
        self.probe_calls = 0
        self.probe_rejections: tuple[str, ...] = ()
        self.endpoint = settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.served_model: str | None = None
        self._api_key = api_key
        self._backoff_base_s = backoff_base_s
        # One client per running event loop; a lock, because two threads may each run a loop
        # (a runner scoring in the background while another check scores on the main thread).
        self._clients: dict[asyncio.AbstractEventLoop, _LoopClient] = {}
        self._clients_lock = threading.Lock()
        # The run of identical request failures that stops the run at stop_after_failures.
        self._streak_cause = ""
        self._streak = 0

    def __repr__(self) -> str:  # the key stays out of every repr and log line
        return f"{type(self).__name__}(model={self.settings.model!r}, endpoint={self.endpoint!r})"

    def _use_format(self, dialect: str) -> None:
        self.response_format = dialect

    def _probe_request(self, dialect: str) -> dict[str, Any]:
        """A real-shaped request in ``dialect`` (cut to one token by the probe)."""
        raise NotImplementedError

    # -- the client: one per event loop, so connections are pooled across calls ----------------

    async def _loop_client(self) -> _LoopClient:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            entry = self._clients.get(loop)
            for ended in [other for other in self._clients if other.is_closed()]:
                del self._clients[ended]  # its closer already closed the client
        if entry is not None:
            return entry
        from openai import AsyncOpenAI

        # A client's connections belong to the loop that opened them; a new loop (a second
        # asyncio.run) gets a new client instead of a pool it cannot use.
        client = AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.settings.base_url,
            max_retries=0,  # our retries are explicit and counted
            timeout=self.settings.timeout_s,
        )
        # The loop finalises started async generators before it closes (asyncio.run does, via
        # shutdown_asyncgens): this one closes the pool then, so no socket outlives its loop
        # even when nobody calls aclose(). Nothing here suspends between the lookup above and
        # the store below, so concurrent first calls on one loop cannot both make a client.
        closer = _close_when_loop_ends(client)
        await closer.__anext__()
        entry = _LoopClient(client, closer, asyncio.Lock())
        with self._clients_lock:
            self._clients[loop] = entry
        return entry

    async def aclose(self) -> None:
        """Close the pooled connections of the running loop now (the loop that made the calls)."""
        with self._clients_lock:
            entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry.closer.aclose()

    # -- the dialect -------------------------------------------------------------------------

    def prepare(self) -> None:
        """Settle the response format before the run is recorded (one probe per dialect tried
        with ``auto``; nothing otherwise). ScorerUnavailable when no dialect can work."""
        if self.response_format is None:
            asyncio.run(self.resolve_format())

    async def resolve_format(self) -> str:
        """The dialect in use, probing the server first if ``auto`` has not chosen yet."""
        if self.response_format is not None:
            return self.response_format
        entry = await self._loop_client()
        async with entry.format_lock:  # concurrent first calls wait for one probe
            if self.response_format is None:
                self._use_format(await self._probe(entry.client))
        return self.response_format  # type: ignore[return-value]

    async def _probe(self, client: AsyncOpenAI) -> str:
        rejections: list[str] = []
        for dialect in DIALECTS:
            try:
                await self._send_probe(client, dialect)
            except _Rejected as rejection:
                if rejection.status in NOT_ABOUT_FORMAT:
                    raise ScorerUnavailable(
                        f"The endpoint {self.endpoint} rejected the {self.role}'s first "
                        f"request with {rejection.description}."
                    ) from None
                rejections.append(f"{dialect}: {rejection.description}")
                continue
            except _GaveUp as failure:
                raise ScorerUnavailable(
                    f"The {self.role} could not reach {self.endpoint} to choose a response "
                    f"format: {failure.description} after {failure.attempts} attempt(s)."
                ) from None
            self.probe_rejections = tuple(rejections)
            return dialect
        raise ScorerUnavailable(
            f"The endpoint {self.endpoint} rejected every response format the {self.role} "
            f"can ask for ({'; '.join(rejections)})."
        )

    async def _send_probe(self, client: AsyncOpenAI, dialect: str) -> None:
        """One request in ``dialect``, cut to one token: only its acceptance matters, and a
        small model on a CPU would take minutes to write a whole answer."""
        probe = self._probe_request(dialect) | {"max_tokens": PROBE_MAX_TOKENS}
        self.probe_calls += 1
        try:
            await self._call_with_retries(client, probe)
        except _Rejected as rejection:
            if "max_tokens" not in rejection.raw + rejection.description:
                raise
            # A model that takes max_completion_tokens only (OpenAI's reasoning models): the
            # limit was rejected, not the format, so ask again without it.
            del probe["max_tokens"]
            if self.settings.max_tokens is not None:
                probe["max_tokens"] = self.settings.max_tokens
            self.probe_calls += 1
            await self._call_with_retries(client, probe)

    # -- requests ---------------------------------------------------------------------------

    async def _complete(self, request: dict[str, Any]) -> tuple[object, RateLimits | None, int]:
        """One request, retried as the settings say: (the answer, its rate limits, attempts).
        A rejection or a give-up is a ScorerError, counted towards ``stop_after_failures``."""
        entry = await self._loop_client()
        try:
            completion, attempts = await self._call_with_retries(entry.client, request)
        except _Rejected as rejection:
            if not _input_dependent(rejection):
                self._note_failure(rejection.description, rejection.status)
            raise ScorerError(
                f"the endpoint {self.endpoint} rejected the request with "
                f"{rejection.description} (not retried: it would fail the same way)",
                raw=rejection.raw,
            ) from None
        except _GaveUp as failure:
            if not failure.rate_limited:
                self._note_failure(failure.description, None)
            raise ScorerError(
                f"the request to {self.endpoint} failed after {failure.attempts} "
                f"attempt{'s' if failure.attempts > 1 else ''}: {failure.description}",
                attempts=failure.attempts,
            ) from None
        answer, limits = completion
        if _is_chat_completion(answer):
            self._note_success()
        else:
            # an HTML login page or a proxy's text with status 200: the same for every case
            # (one cause, whatever the page says: a login page's token changes every time)
            self._note_failure("HTTP 200 with an answer that is not a chat completion", 200)
        return answer, limits, attempts

    async def _call_with_retries(
        self, client: AsyncOpenAI, request: dict[str, Any]
    ) -> tuple[tuple[object, RateLimits | None], int]:
        attempts = 0
        limit_waits = 0
        while True:
            attempts += 1
            try:
                return await self._attempt(client, request), attempts
            except _Transient as failure:
                if attempts > self.settings.max_retries:
                    raise _GaveUp(failure.description, attempts) from None
                await asyncio.sleep(self._wait_before_retry(attempts, failure.retry_after))
            except _RateLimit as limit:
                attempts -= 1  # a wait on a rate limit is not an attempt
                if runner_waits_on_limits():
                    # the runner waits for every call at once and sends this one again
                    raise RateLimited(
                        f"the endpoint {self.endpoint} answered {limit.description}",
                        limit.retry_after,
                        limit.limits,
                    ) from None
                limit_waits += 1
                if limit_waits > MAX_LIMIT_WAITS:
                    raise _GaveUp(
                        f"{limit.description}, {MAX_LIMIT_WAITS} waits on the rate limit in a row",
                        max(attempts, 1),
                        rate_limited=True,
                    ) from None
                await asyncio.sleep(self._wait_before_retry(limit_waits, limit.retry_after))
            except ScorerError as error:
                error.attempts = attempts
                raise

    def _note_failure(self, cause: str, status: int | None) -> None:
        """Count identical request failures in a row; stop the run at the limit."""
        with self._clients_lock:
            if cause == self._streak_cause:
                self._streak += 1
            else:
                self._streak_cause, self._streak = cause, 1
            count = self._streak
        limit = self.settings.stop_after_failures
        if not limit or count < limit:
            return
        hint = ""
        if (
            status is not None
            and status not in NOT_ABOUT_FORMAT
            and self.settings.response_format not in ("auto", "prompt")
        ):
            hint = (
                "; set screeneval_openai_response_format = auto to fall back to a format it accepts"
            )
        raise ScorerUnavailable(
            f"The {self.role} stopped the run after {count} requests in a row to "
            f"{self.endpoint} failed the same way: {cause}{hint}."
        )

    def _note_success(self) -> None:
        with self._clients_lock:
            self._streak_cause, self._streak = "", 0

    async def _attempt(
        self, client: AsyncOpenAI, request: dict[str, Any]
    ) -> tuple[object, RateLimits | None]:
        """One request and the rate-limit headers of its answer: a transport failure becomes
        _Transient, a 429 _RateLimit, a rejection _Rejected, any other failure a ScorerError."""
        import openai

        timeout_s = self.settings.timeout_s
        try:
            # The client's timeout is per read; this bounds the whole exchange as well, so a
            # server trickling bytes cannot hold a slot forever.
            async with asyncio.timeout(timeout_s):
                # the raw response for its headers (the rate limits); parsed as create() would
                raw = await client.chat.completions.with_raw_response.create(**request)
                return raw.parse(), rate_limits_from_headers(raw.headers)
        except (TimeoutError, openai.APITimeoutError):
            raise _Transient(f"no answer within {timeout_s:g} s") from None
        except openai.APIConnectionError as error:
            cause = error.__cause__ or error
            raise _Transient(f"connection error ({type(cause).__name__}: {cause})") from None
        except openai.APIStatusError as error:
            status = error.status_code
            message = _error_message(error)
            described = f"HTTP {status} ({message})"
            headers = dict(error.response.headers)
            if status == 429 and not _quota_spent(error):
                limits = rate_limits_from_headers(headers)
                raise _RateLimit(described, parse_retry_after(headers), limits) from None
            if status == 429 or is_rejection(status, f"{message} {error.response.text}"):
                raise _Rejected(status, described, error.response.text) from None
            raise _Transient(described, parse_retry_after(headers)) from None
        except openai.OpenAIError as error:
            raise ScorerError(f"the openai client failed: {error}") from None
        except ValueError as error:
            # a 200 whose body is cut off or is not JSON: the client's json.loads raised
            raise ScorerError(
                f"the endpoint's answer is not a complete JSON document ({error})"
            ) from None

    def _wait_before_retry(self, attempts: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        delay = min(self._backoff_base_s * 2.0 ** (attempts - 1), BACKOFF_CAP_S)
        # Jitter spreads out the clients that failed together so they do not return together.
        return delay * random.uniform(1.0, 1.25)

    def _read(
        self, completion: object, attempts: int, limits: RateLimits | None = None
    ) -> Completion:
        """The message text of a chat completion; a ScorerError when there is none to read (not
        a completion, no choices, a refusal, a content filter, an empty answer)."""
        from openai.types.chat import ChatCompletion

        if not isinstance(completion, ChatCompletion):
            # A proxy's HTML page or plain text with status 200: the client hands back a str.
            raw = completion if isinstance(completion, str) else repr(completion)
            raise ScorerError(
                "the endpoint's answer is not a chat completion",
                raw,
                attempts=attempts,
                limits=limits,
            )
        # Read defensively: a compatible server may leave out what the client models require.
        served = getattr(completion, "model", None) or None
        self.served_model = served
        fingerprint = getattr(completion, "system_fingerprint", None) or None
        usage = getattr(completion, "usage", None)
        choices = getattr(completion, "choices", None)
        message = getattr(choices[0], "message", None) if choices else None
        finish = getattr(choices[0], "finish_reason", None) if choices else None
        read = Completion(
            content=(getattr(message, "content", None) or "") if message is not None else "",
            finish_reason=finish,
            served_model=served,
            system_fingerprint=fingerprint,
            prompt_tokens=getattr(usage, "prompt_tokens", None) or 0,
            completion_tokens=getattr(usage, "completion_tokens", None) or 0,
            attempts=attempts,
            limits=limits,
        )
        if choices is None or message is None:
            raise read.failed("the endpoint answered with no choices", completion.model_dump_json())
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise read.failed(f"the model refused: {refusal}", str(refusal))
        if finish == "content_filter":
            raise read.failed("the endpoint's content filter stopped the answer", read.content)
        if not read.content.strip():
            raise read.failed("the model returned an empty answer", read.content)
        return read


class OpenAIScorer(ChatEndpoint):
    """Scores a resume with one structured-output chat request per call."""

    def __init__(
        self,
        rubric: Rubric,
        settings: OpenAISettings,
        template: PromptTemplate,
        api_key: str,
        *,
        warnings: tuple[str, ...] = (),
        backoff_base_s: float = BACKOFF_BASE_S,
    ) -> None:
        super().__init__(settings, api_key, backoff_base_s=backoff_base_s)
        self.template = template
        self.warnings = warnings
        self.rubric = rubric
        self._base_identity = ScorerIdentity(
            name="openai",
            model_id=settings.model,
            prompt_sha=template.sha,
            rubric_sha=rubric.sha,
            temperature=settings.temperature,
        )
        self.identity = self._base_identity
        if settings.response_format != "auto":
            self._use_format(settings.response_format)
        else:
            self.identity = replace(self._base_identity, response_format="auto")
        self._formats: dict[tuple[str, str], dict[str, Any] | None] = {}

    def __repr__(self) -> str:  # the key stays out of every repr and log line
        return f"OpenAIScorer(model={self.settings.model!r}, endpoint={self.endpoint!r})"

    def _use_format(self, dialect: str) -> None:
        self.response_format = dialect
        # In the name too: the run record keeps the name, and runs in different dialects
        # (the schema stated in the prompt is a different prompt) are not the same identity.
        self.identity = replace(
            self._base_identity, name=f"openai[{dialect}]", response_format=dialect
        )

    def _probe_request(self, dialect: str) -> dict[str, Any]:
        return self._request(PROBE_TEXT, self.rubric, dialect)

    # -- scoring ---------------------------------------------------------------------------

    async def score(self, text: str, rubric: Rubric) -> ScoreOutcome:
        dialect = await self.resolve_format()
        request = self._request(text, rubric, dialect)
        answer, limits, attempts = await self._complete(request)
        return self._outcome(answer, rubric, attempts, dialect, limits)

    def _response_format(self, rubric: Rubric, dialect: str) -> dict[str, Any] | None:
        """The response format of a dialect, built once per rubric (it never changes)."""
        key = (rubric.sha, dialect)
        if key not in self._formats:
            self._formats[key] = response_format(rubric, dialect)
        return self._formats[key]

    def _request(self, text: str, rubric: Rubric, dialect: str) -> dict[str, Any]:
        system, user = self.template.render(rubric, text)
        if dialect != "json_schema":
            # Not bound by a strict schema, the model is told the shape in words as well.
            system = f"{system}\n\n{schema_instruction(rubric)}"
        request = self.chat_request(system, user, self._response_format(rubric, dialect))
        if self.settings.seed is not None:
            request["seed"] = self.settings.seed
        return request

    def _outcome(
        self,
        completion: object,
        rubric: Rubric,
        attempts: int,
        dialect: str,
        limits: RateLimits | None = None,
    ) -> ScoreOutcome:
        read = self._read(completion, attempts, limits)
        content = read.content
        if read.finish_reason == "length":
            # The criteria written out in full before the cut are still answers.
            parsed = parse_cut_off_answer(content, rubric)
            if not parsed.scores:
                raise read.failed("the answer was cut off at the token limit", content)
        else:
            try:
                parsed = parse_answer(content, rubric)
            except ScorerError as error:
                raise read.failed(error.reason, error.raw) from None
        return ScoreOutcome(
            scores=parsed.scores,
            attempts=attempts,
            served_model=read.served_model,
            prompt_tokens=read.prompt_tokens,
            completion_tokens=read.completion_tokens,
            raw=content,
            extra={"response_format": dialect},
            errors=errors_with_raw(parsed.problems, content, rubric.criterion_names),
            system_fingerprint=read.system_fingerprint,
            limits=limits,
        )


@dataclass(frozen=True)
class Completion:
    """A chat completion's message text and what the provider said with it."""

    content: str
    finish_reason: str | None
    served_model: str | None
    system_fingerprint: str | None
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    limits: RateLimits | None

    def failed(self, reason: str, raw: str) -> ScorerError:
        """An error about this answer, carrying what it cost and who served it."""
        return ScorerError(
            reason,
            raw,
            attempts=self.attempts,
            served_model=self.served_model,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            system_fingerprint=self.system_fingerprint,
            limits=self.limits,
        )


@dataclass(frozen=True)
class _LoopClient:
    client: AsyncOpenAI
    closer: AsyncGenerator[None, None]
    format_lock: asyncio.Lock


async def _close_when_loop_ends(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


def _quota_spent(error: Any) -> bool:
    """Whether a 429 says the account's quota is used up (OpenAI's ``insufficient_quota``)."""
    body = error.body
    if not isinstance(body, Mapping):
        return False
    return bool({body.get("code"), body.get("type")} & QUOTA_CODES)


def _error_message(error: Any) -> str:
    """The server's message, on one line and bounded (llama.cpp appends a stack location)."""
    body = error.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        message = str(body["message"]).split("\n\n  File ")[0]
        message = " ".join(message.split())
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 1] + "…"
        return message
    return error.response.reason_phrase or "no message"


def make_scorer(
    rubric: Rubric,
    settings: OpenAISettings,
    *,
    root: str | Path | None = None,
    today: date | None = None,
    environ: Mapping[str, str] | None = None,
) -> OpenAIScorer:
    """The ``openai`` scorer for a rubric; ScreenevalError when it cannot be used as configured.

    ``root`` resolves a relative prompt-template path (the plugin passes pytest's rootdir);
    ``today`` and ``environ`` default to the real date and environment.
    """
    warnings = check_model_pin(settings, today or date.today())
    template_path: Path | None = None
    if settings.prompt_template is not None:
        template_path = Path(settings.prompt_template)
        if root is not None and not template_path.is_absolute():
            template_path = Path(root) / template_path
    template = load_prompt_template(template_path)
    env = os.environ if environ is None else environ
    api_key = api_key_from_env(env)
    if api_key is None:
        if settings.base_url is None and not env.get("OPENAI_BASE_URL"):
            raise ScreenevalError(
                "The openai scorer needs an API key in the environment variable "
                "SCREENEVAL_OPENAI_API_KEY or OPENAI_API_KEY."
            )
        api_key = NO_KEY
    try:
        import openai  # noqa: F401 (fail here, once, with a sentence rather than per item)
    except ImportError:
        raise ScreenevalError(
            "The openai scorer needs the openai package: pip install openai."
        ) from None
    return OpenAIScorer(rubric, settings, template, api_key, warnings=tuple(warnings))
