"""The values a scorer returns and the identity that pins it.

Kept apart from the runner so that scorers, the store and the reports can share these types
without importing asyncio machinery.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric

__all__ = [
    "MAX_RAW_CHARS",
    "CriterionScore",
    "RateLimited",
    "RateLimits",
    "ScoreOutcome",
    "Scorer",
    "ScorerError",
    "ScorerIdentity",
    "ScorerUnavailable",
    "errors_with_raw",
    "prepare_scorer",
    "runner_waits_on_limits",
    "set_runner_waits_on_limits",
]

# The raw answer kept with an error row: enough to see what the model said, bounded so that a
# model rambling to its token limit does not bloat the store.
MAX_RAW_CHARS = 2000


@dataclass(frozen=True)
class CriterionScore:
    """One criterion's score and the scorer's reasons for it."""

    criterion: str
    score: int
    rationale: str
    evidence: tuple[str, ...] = ()
    confidence: float | None = None


@dataclass(frozen=True)
class ScorerIdentity:
    """What makes two runs comparable: the exact model, prompt, rubric and sampling."""

    name: str
    model_id: str
    prompt_sha: str
    rubric_sha: str
    temperature: float = 0.0
    # How the answer's structure was asked for (the openai scorer's dialect); "" when the
    # scorer has no such choice. A scorer that has one also puts it in ``name``, which the run
    # record keeps, so runs in different dialects never count as the same identity.
    response_format: str = ""

    def as_dict(self) -> dict[str, object]:
        values: dict[str, object] = {
            "name": self.name,
            "model_id": self.model_id,
            "prompt_sha": self.prompt_sha,
            "rubric_sha": self.rubric_sha,
            "temperature": self.temperature,
        }
        if self.response_format:
            values["response_format"] = self.response_format
        return values


@dataclass(frozen=True)
class RateLimits:
    """What a provider's rate-limit headers said with one answer (None: not said).

    ``remaining_*`` count what is left after this call; ``reset_*_s`` is how long until the
    limit is back to full; ``limit_*`` is the limit itself, per minute (OpenAI's convention).
    """

    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests_s: float | None = None
    reset_tokens_s: float | None = None
    limit_requests: int | None = None
    limit_tokens: int | None = None

    @property
    def said_anything(self) -> bool:
        return any(value is not None for value in vars(self).values())


class RateLimited(Exception):
    """The provider refused this call for its rate limit (an HTTP 429): try it again later.

    Raised by a scorer call that runs under the session's runner (see
    :func:`runner_waits_on_limits`): the runner waits ``retry_after_s`` (or its own estimate),
    lowers its concurrency and sends the same call again. A rate limit is not an attempt, not
    part of the call's latency, and never a failure of the scorer.
    """

    def __init__(
        self, reason: str, retry_after_s: float | None = None, limits: RateLimits | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s
        self.limits = limits


# Set by the runner around each scorer call it makes: the call may raise RateLimited instead
# of waiting on a rate limit itself, because the runner waits for every call at once.
_RUNNER_WAITS_ON_LIMITS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "screeneval_runner_waits_on_limits", default=False
)


def runner_waits_on_limits() -> bool:
    """Whether this scorer call runs under the runner, which waits on rate limits for it."""
    return _RUNNER_WAITS_ON_LIMITS.get()


def set_runner_waits_on_limits(value: bool) -> None:
    """Called by the runner in the context of each call it makes (a task, a scorer thread)."""
    _RUNNER_WAITS_ON_LIMITS.set(value)


class ScorerError(Exception):
    """The scorer's answer cannot be used: a refusal, garbage, a missing criterion, off scale.

    ``raw`` keeps what the scorer actually said, so the failure shows the real reason; a scorer that
    calls a service also says how many attempts the call took and what it cost.
    """

    def __init__(
        self,
        reason: str,
        raw: str = "",
        *,
        attempts: int = 1,
        served_model: str | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        system_fingerprint: str | None = None,
        limits: RateLimits | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw
        self.attempts = attempts
        self.served_model = served_model
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.system_fingerprint = system_fingerprint
        self.limits = limits


class ScorerUnavailable(ScreenevalError):
    """The scorer cannot work at all (its server rejects or drops every call): stop the run.

    Unlike :class:`ScorerError`, which fails one answer's items, this ends the scoring; the
    message is the one sentence the user sees, naming the cause and the server.
    """


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores a resume text against a rubric.

    ``score`` may be a plain function or a coroutine function; the runner awaits it when needed.
    A scorer may also set ``served_model`` after a call (the model the provider says it used),
    and return a :class:`ScoreOutcome` instead of a list to report attempts and token usage.
    A scorer may define ``prepare()``, called once before the run is recorded (see
    :func:`prepare_scorer`), and raise :class:`ScorerUnavailable` to stop the run.
    """

    identity: ScorerIdentity

    def score(
        self, text: str, rubric: Rubric
    ) -> (
        Sequence[CriterionScore] | ScoreOutcome | Awaitable[Sequence[CriterionScore] | ScoreOutcome]
    ): ...


@dataclass(frozen=True)
class ScoreOutcome:
    """A scorer's answer with what it cost: used by scorers that call a service."""

    scores: Sequence[CriterionScore]
    attempts: int = 1
    served_model: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw: str = ""
    extra: dict[str, object] = field(default_factory=dict)
    # criterion -> why that criterion's part of the answer is unusable; the other criteria of
    # the same answer keep their scores (see errors_with_raw for the raw answer kept once).
    errors: Mapping[str, str] = field(default_factory=dict)
    # the provider's record of the backend configuration that served the call
    system_fingerprint: str | None = None
    # what the provider's rate-limit headers said with the answer: the runner paces by them
    limits: RateLimits | None = None


def errors_with_raw(reasons: Mapping[str, str], raw: str, order: Sequence[str]) -> dict[str, str]:
    """Error texts per criterion that keep the raw answer once, not once per row.

    The first failed criterion in ``order`` carries the raw answer (bounded); every other failed
    criterion names the row that carries it. Criteria without a reason get no entry.
    """
    failed = [name for name in order if name in reasons]
    failed += [name for name in reasons if name not in failed]
    if not raw or not failed:
        return dict(reasons)
    holder = failed[0]
    shown = raw if len(raw) <= MAX_RAW_CHARS else raw[:MAX_RAW_CHARS]
    rest = len(raw) - len(shown)
    tail = f" [{rest} more characters]" if rest else ""
    texts = {holder: f"{reasons[holder]} (raw answer: {shown!r}{tail})"}
    for name in failed[1:]:
        texts[name] = f"{reasons[name]} (the raw answer is on the row of {holder})"
    return texts


def prepare_scorer(scorer: object) -> None:
    """Let a scorer settle what it must before the run is recorded (e.g. the openai scorer's
    response format, which is part of its identity); a no-op for scorers without ``prepare``."""
    prepare = getattr(scorer, "prepare", None)
    if callable(prepare):
        prepare()
