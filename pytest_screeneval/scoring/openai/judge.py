"""The rationale judge: an OpenAI-compatible chat model asked about one rationale at a time.

It is an :class:`~pytest_screeneval.scoring.openai.scorer.ChatEndpoint` like the scorer: the
same client per event loop, explicit retries, the same dialects probed the same way
(``json_schema``, then ``json_object``, then the schema in the prompt), with a prompt of its own
(``judge_prompt.txt``, pinned by the sha256 of its bytes) and an answer checked on our side
(:mod:`.judge_answer`). A call never raises for a bad answer or a failed request: the outcome
carries the error and the raw text, so a judgement that failed is recorded as failed, never as
"no finding".

Its identity (the model asked for, the prompt's sha, the temperature) keys the store's cache of
verdicts; the model that served each answer is recorded beside it. ``openai`` is imported when
the first call is made, not when this module is imported.
"""

from __future__ import annotations

import hashlib
import os
import string
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.scoring.openai.judge_answer import (
    JudgeAnswerError,
    JudgeFinding,
    judge_response_format,
    judge_schema_instruction,
    parse_judge_answer,
)
from pytest_screeneval.scoring.openai.model_pin import is_floating
from pytest_screeneval.scoring.openai.options import OpenAISettings
from pytest_screeneval.scoring.openai.scorer import NO_KEY, ChatEndpoint
from pytest_screeneval.scoring.protocol import MAX_RAW_CHARS, ScorerError, ScorerUnavailable

__all__ = [
    "JUDGE_PROMPT",
    "JudgeIdentity",
    "JudgeOutcome",
    "JudgeQuestion",
    "RationaleJudgeClient",
    "judge_api_key",
    "make_judge",
]

JUDGE_PROMPT = Path(__file__).with_name("judge_prompt.txt")
_SECTION_SYSTEM = "=== system ==="
_SECTION_USER = "=== user ==="
PROBE_QUESTION_RATIONALE = "Probe: no rationale."


@dataclass(frozen=True)
class JudgeQuestion:
    """What the judge reads: the resume, the criterion, the score and its rationale."""

    resume: str
    criterion: str
    score: int
    rationale: str


@dataclass(frozen=True)
class JudgeIdentity:
    """What makes two verdicts comparable: the model asked for, the prompt, the temperature."""

    model: str
    prompt_sha: str
    temperature: float

    @property
    def label(self) -> str:
        """How messages name the judge."""
        return f"the LLM judge {self.model}"


@dataclass(frozen=True)
class JudgeOutcome:
    """One judgement: a finding, or the error that kept it from one (with the raw answer)."""

    finding: JudgeFinding | None
    error: str | None
    raw: str
    served_model: str | None
    response_format: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1
    latency_ms: float = 0.0
    # the judge stopped after failing the same way again and again: ask it nothing more
    unavailable: bool = False


@dataclass(frozen=True)
class _Prompt:
    sha: str
    system: string.Template
    user: string.Template


def _load_prompt(path: Path = JUDGE_PROMPT) -> _Prompt:
    data = path.read_bytes()
    text = data.decode("utf-8")
    _, _, rest = text.partition(f"\n{_SECTION_SYSTEM}\n")
    system, _, user = rest.partition(f"\n{_SECTION_USER}\n")
    return _Prompt(
        hashlib.sha256(data).hexdigest(),
        string.Template(system.strip("\n")),
        string.Template(user.strip("\n")),
    )


class RationaleJudgeClient(ChatEndpoint):
    """Asks one chat model about one rationale per call."""

    role = "rationale judge"

    def __init__(self, settings: OpenAISettings, api_key: str) -> None:
        super().__init__(settings, api_key)
        self._prompt = _load_prompt()
        self.identity = JudgeIdentity(settings.model, self._prompt.sha, settings.temperature)
        # a dialect that is fixed (not auto) is used as is
        if settings.response_format != "auto":
            self._use_format(settings.response_format)

    def _probe_request(self, dialect: str) -> dict[str, Any]:
        question = JudgeQuestion("Probe: no resume.", "probe", 1, PROBE_QUESTION_RATIONALE)
        return self._request(question, dialect)

    def _request(self, question: JudgeQuestion, dialect: str) -> dict[str, Any]:
        values = {
            "resume": question.resume,
            "criterion": question.criterion,
            "score": str(question.score),
            "rationale": question.rationale,
        }
        system = self._prompt.system.safe_substitute(values)
        if dialect != "json_schema":
            system = f"{system}\n\n{judge_schema_instruction()}"
        user = self._prompt.user.safe_substitute(values)
        return self.chat_request(system, user, judge_response_format(dialect))

    async def judge(self, question: JudgeQuestion) -> JudgeOutcome:
        """The judge's finding about one rationale, or the error that kept it from one."""
        started = time.monotonic()
        dialect = self.response_format or "auto"
        try:
            dialect = await self.resolve_format()
            answer, limits, attempts = await self._complete(self._request(question, dialect))
            read = self._read(answer, attempts, limits)
        except (ScorerError, ScorerUnavailable) as error:
            reason = error.reason if isinstance(error, ScorerError) else str(error)
            raw = error.raw if isinstance(error, ScorerError) else ""
            served = error.served_model if isinstance(error, ScorerError) else None
            return JudgeOutcome(
                None,
                reason,
                raw[:MAX_RAW_CHARS],
                served,
                dialect,
                attempts=getattr(error, "attempts", 1),
                latency_ms=(time.monotonic() - started) * 1000,
                unavailable=isinstance(error, ScorerUnavailable),
            )
        error_text: str | None = None
        finding: JudgeFinding | None = None
        if read.finish_reason == "length":
            error_text = "the judge's answer was cut off at the token limit"
        else:
            try:
                finding = parse_judge_answer(read.content, question.rationale)
            except JudgeAnswerError as error:
                error_text = error.reason
        return JudgeOutcome(
            finding,
            error_text,
            read.content[:MAX_RAW_CHARS],
            read.served_model,
            dialect,
            read.prompt_tokens,
            read.completion_tokens,
            read.attempts,
            (time.monotonic() - started) * 1000,
        )


def judge_api_key(api_key_env: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The judge's own API key, from the environment variable its settings name; never logged."""
    env = os.environ if environ is None else environ
    return env.get(api_key_env, "").strip() or None


def make_judge(
    *,
    model: str,
    base_url: str,
    api_key_env: str,
    temperature: float,
    timeout_s: float,
    max_tokens: int | None,
    environ: Mapping[str, str] | None = None,
    response_format: str = "auto",
) -> RationaleJudgeClient:
    """The rationale judge as configured; ScreenevalError (one sentence) when it cannot be used."""
    if not model.strip():
        raise ScreenevalError(
            "The rationale judge needs a model id: set screeneval_rationale_judge_model "
            "(or pass --screeneval-rationale-judge-model)."
        )
    if is_floating(model):
        raise ScreenevalError(
            f"The rationale judge's model id '{model}' is a floating alias that its provider can "
            "point at a new snapshot at any time; pin a dated snapshot in "
            "screeneval_rationale_judge_model."
        )
    key = judge_api_key(api_key_env, environ)
    if key is None:
        if not base_url:
            raise ScreenevalError(
                "The rationale judge needs an API key in the environment variable "
                f"{api_key_env} (screeneval_rationale_judge_api_key_env), or a base URL of a "
                "local server."
            )
        key = NO_KEY
    try:
        import openai  # noqa: F401 (fail here, once, with a sentence)
    except ImportError:
        raise ScreenevalError(
            "The rationale judge needs the openai package: pip install openai."
        ) from None
    settings = OpenAISettings(
        model=model.strip(),
        base_url=base_url or None,
        temperature=temperature,
        timeout_s=timeout_s,
        max_tokens=max_tokens,
        response_format=response_format,
        # a failing judge records an error on each judgement; it never stops the run itself
        stop_after_failures=5,
    )
    return RationaleJudgeClient(settings, key)
