"""The values a scorer returns and the identity that pins it (DESIGN §6).

Kept apart from the runner so that scorers, the store and the reports can share these types
without importing asyncio machinery.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pytest_screeneval.golden.model import Rubric

__all__ = [
    "CriterionScore",
    "ScoreOutcome",
    "Scorer",
    "ScorerError",
    "ScorerIdentity",
]


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

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "model_id": self.model_id,
            "prompt_sha": self.prompt_sha,
            "rubric_sha": self.rubric_sha,
            "temperature": self.temperature,
        }


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
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw
        self.attempts = attempts
        self.served_model = served_model
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores a resume text against a rubric.

    ``score`` may be a plain function or a coroutine function; the runner awaits it when needed.
    A scorer may also set ``served_model`` after a call (the model the provider says it used),
    and return a :class:`ScoreOutcome` instead of a list to report attempts and token usage.
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
