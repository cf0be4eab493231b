"""The ``openai`` scorer: any OpenAI-compatible Chat Completions endpoint, structured output.

One request per resume asks for every criterion at once through a strict JSON schema
(:mod:`.structured_answer`), rendered from a prompt template whose file bytes pin the prompt
(:mod:`.prompt_template`). The model id must be a pinned snapshot (:mod:`.model_pin`).

Retries are explicit and counted, never silent: the client's own retries are off; a connection
error, a timeout, HTTP 408/409/429 or 5xx is retried up to ``max_retries`` times with exponential
back-off and jitter, honouring ``Retry-After`` (capped). An answer that came back, a refusal,
invalid JSON, a missing or extra criterion, a score off the scale, is never retried: it is
raised as a :class:`ScorerError` with the raw text, so the item fails with the real reason.

``openai`` is imported when the first scorer is made, not when this module is imported.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import threading
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.openai.answer import parse_answer, response_format
from pytest_screeneval.scoring.openai.model_pin import check_model_pin
from pytest_screeneval.scoring.openai.options import OpenAISettings, api_key_from_env
from pytest_screeneval.scoring.openai.prompt import PromptTemplate, load_prompt_template
from pytest_screeneval.scoring.protocol import ScoreOutcome, ScorerError, ScorerIdentity

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "MAX_RETRY_AFTER_S",
    "OpenAIScorer",
    "check_model_pin",
    "make_scorer",
    "parse_retry_after",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER_S = 60.0
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 8.0
# Statuses that say "try again later" rather than "this request is wrong".
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# A local server needs no key, but the client insists on one; this is sent instead.
NO_KEY = "screeneval-no-key"


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds:
        try:
            return min(max(float(milliseconds) / 1000.0, 0.0), MAX_RETRY_AFTER_S)
        except ValueError:
            pass
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
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


class _Transient(Exception):
    """A failure worth another attempt, with the server's wish for a wait if it gave one."""

    def __init__(self, description: str, retry_after: float | None = None) -> None:
        super().__init__(description)
        self.description = description
        self.retry_after = retry_after


class OpenAIScorer:
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
        self.settings = settings
        self.template = template
        self.warnings = warnings
        self.identity = ScorerIdentity(
            name="openai",
            model_id=settings.model,
            prompt_sha=template.sha,
            rubric_sha=rubric.sha,
            temperature=settings.temperature,
        )
        self.endpoint = settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.served_model: str | None = None
        self._api_key = api_key
        self._backoff_base_s = backoff_base_s
        # One client per running event loop; a lock, because two threads may each run a loop
        # (a runner scoring in the background while another check scores on the main thread).
        self._clients: dict[asyncio.AbstractEventLoop, _LoopClient] = {}
        self._clients_lock = threading.Lock()

    def __repr__(self) -> str:  # the key stays out of every repr and log line
        return f"OpenAIScorer(model={self.settings.model!r}, endpoint={self.endpoint!r})"

    # -- the client: one per event loop, so connections are pooled across calls ----------------

    async def _client_for_this_loop(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            entry = self._clients.get(loop)
            for ended in [other for other in self._clients if other.is_closed()]:
                del self._clients[ended]  # its closer already closed the client
        if entry is not None:
            return entry.client
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
        with self._clients_lock:
            self._clients[loop] = _LoopClient(client, closer)
        return client

    async def aclose(self) -> None:
        """Close the pooled connections of the running loop now (the loop that made the calls)."""
        with self._clients_lock:
            entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry.closer.aclose()

    # -- scoring ---------------------------------------------------------------------------

    async def score(self, text: str, rubric: Rubric) -> ScoreOutcome:
        client = await self._client_for_this_loop()
        request = self._request(text, rubric)
        attempts = 0
        while True:
            attempts += 1
            try:
                completion = await self._attempt(client, request)
            except _Transient as failure:
                if attempts > self.settings.max_retries:
                    raise ScorerError(
                        f"the request to {self.endpoint} failed after {attempts} "
                        f"attempt{'s' if attempts > 1 else ''}: {failure.description}",
                        attempts=attempts,
                    ) from None
                await asyncio.sleep(self._wait_before_retry(attempts, failure.retry_after))
                continue
            except ScorerError as error:
                error.attempts = attempts
                raise
            return self._outcome(completion, rubric, attempts)

    def _request(self, text: str, rubric: Rubric) -> dict[str, Any]:
        system, user = self.template.render(rubric, text)
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "response_format": response_format(rubric),
            "temperature": self.settings.temperature,
        }
        if self.settings.seed is not None:
            request["seed"] = self.settings.seed
        return request

    async def _attempt(self, client: AsyncOpenAI, request: dict[str, Any]) -> object:
        """One request: a transport failure becomes _Transient, any other failure a ScorerError."""
        import openai

        timeout_s = self.settings.timeout_s
        try:
            # The client's timeout is per read; this bounds the whole exchange as well, so a
            # server trickling bytes cannot hold a slot forever.
            async with asyncio.timeout(timeout_s):
                return await client.chat.completions.create(**request)
        except (TimeoutError, openai.APITimeoutError):
            raise _Transient(f"no answer within {timeout_s:g} s") from None
        except openai.APIConnectionError as error:
            cause = error.__cause__ or error
            raise _Transient(f"connection error ({type(cause).__name__}: {cause})") from None
        except openai.APIStatusError as error:
            status = error.status_code
            described = f"HTTP {status} ({_error_message(error)})"
            if status in RETRYABLE_STATUSES or status >= 500:
                retry_after = parse_retry_after(dict(error.response.headers))
                raise _Transient(described, retry_after) from None
            raise ScorerError(
                f"the endpoint {self.endpoint} refused the request with {described}",
                raw=error.response.text,
            ) from None
        except openai.OpenAIError as error:
            raise ScorerError(f"the openai client failed: {error}") from None

    def _wait_before_retry(self, attempts: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        delay = min(self._backoff_base_s * 2 ** (attempts - 1), BACKOFF_CAP_S)
        # Jitter spreads out the clients that failed together so they do not return together.
        return delay * random.uniform(1.0, 1.25)

    def _outcome(self, completion: object, rubric: Rubric, attempts: int) -> ScoreOutcome:
        from openai.types.chat import ChatCompletion

        if not isinstance(completion, ChatCompletion):
            # A proxy's HTML page or plain text with status 200: the client hands back a str.
            raw = completion if isinstance(completion, str) else repr(completion)
            raise ScorerError(
                "the endpoint's answer is not a chat completion", raw, attempts=attempts
            )
        # Read defensively: a compatible server may leave out what the client models require.
        served = getattr(completion, "model", None) or None
        self.served_model = served
        usage = getattr(completion, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None) or 0
        completion_tokens = getattr(usage, "completion_tokens", None) or 0

        def failed(reason: str, raw: str) -> ScorerError:
            return ScorerError(
                reason,
                raw,
                attempts=attempts,
                served_model=served,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )

        choices = getattr(completion, "choices", None)
        message = getattr(choices[0], "message", None) if choices else None
        if choices is None or message is None:
            raise failed("the endpoint answered with no choices", completion.model_dump_json())
        choice = choices[0]
        if message.refusal:
            raise failed(f"the model refused: {message.refusal}", message.refusal)
        content = message.content or ""
        if choice.finish_reason == "length":
            raise failed("the answer was cut off at the token limit", content)
        if choice.finish_reason == "content_filter":
            raise failed("the endpoint's content filter stopped the answer", content)
        if not content.strip():
            raise failed("the model returned an empty answer", content)
        try:
            scores = parse_answer(content, rubric)
        except ScorerError as error:
            raise failed(error.reason, error.raw) from None
        return ScoreOutcome(
            scores=scores,
            attempts=attempts,
            served_model=served,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            raw=content,
        )


@dataclass(frozen=True)
class _LoopClient:
    client: AsyncOpenAI
    closer: AsyncGenerator[None, None]


async def _close_when_loop_ends(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


def _error_message(error: Any) -> str:
    body = error.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        return str(body["message"])
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
