"""Model pinning: refuse floating aliases and retired models before a run starts.

A run is only comparable with its baseline when the same model answered both. Provider aliases
such as ``gpt-4o`` or ``*-latest`` are moved to new snapshots without notice, so they are refused
unless the user explicitly accepts unpinned runs; and a model past its retirement date is refused
(it is gone, or about to be silently redirected).
"""

from __future__ import annotations

import fnmatch
from datetime import date

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.scoring.openai.options import OpenAISettings

__all__ = ["FLOATING_ALIASES", "RETIREMENT_WARNING_DAYS", "check_model_pin", "is_floating"]

RETIREMENT_WARNING_DAYS = 30

# fnmatch patterns, matched case-insensitively against the id and against its last path part
# (gateways write "openai/gpt-4o"). Each family here has dated snapshots to pin instead.
FLOATING_ALIASES: tuple[str, ...] = (
    "latest",
    "*-latest",
    "*:latest",
    # OpenAI
    "gpt-3.5-turbo",
    "gpt-3.5-turbo-16k",
    "gpt-4",
    "gpt-4-32k",
    "gpt-4-turbo",
    "gpt-4-turbo-preview",
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4o-audio-preview",
    "gpt-4o-search-preview",
    "gpt-4o-mini-search-preview",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4.5-preview",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5-pro",
    "o1",
    "o1-mini",
    "o1-preview",
    "o1-pro",
    "o3",
    "o3-mini",
    "o3-pro",
    "o3-deep-research",
    "o4-mini",
    "o4-mini-deep-research",
    # Anthropic and Google models, as OpenAI-compatible gateways name them
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-haiku",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-7-sonnet",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-opus-4-1",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "gemini-1.5-pro",
    "gemini-1.5-flash",
    "gemini-2.0-flash",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
)


def is_floating(model: str, extra_patterns: tuple[str, ...] = ()) -> bool:
    """Whether ``model`` matches a built-in or user-added floating-alias pattern."""
    lowered = model.strip().lower()
    candidates = {lowered, lowered.rsplit("/", 1)[-1]}
    patterns = [p.lower() for p in (*FLOATING_ALIASES, *extra_patterns)]
    return any(fnmatch.fnmatchcase(c, p) for c in candidates for p in patterns)


def check_model_pin(settings: OpenAISettings, today: date) -> list[str]:
    """Warnings about the pinned model; a ScreenevalError when it must not be used."""
    warnings: list[str] = []
    model = settings.model
    if is_floating(model, settings.floating_aliases):
        if not settings.allow_floating_model:
            raise ScreenevalError(
                f"The model id '{model}' is a floating alias that its provider can point at a "
                "new snapshot at any time, so pin a dated snapshot in screeneval_openai_model "
                "or set screeneval_openai_allow_floating_model to accept unpinned runs."
            )
        warnings.append(
            f"model '{model}' is a floating alias: runs scored with it may not be comparable "
            "with each other or with the baseline."
        )
    retires = settings.model_retires
    if retires is not None:
        days_left = (retires - today).days
        if days_left < 0:
            raise ScreenevalError(
                f"The model '{model}' retired on {retires.isoformat()} according to "
                "screeneval_openai_model_retires, so pin a current snapshot and accept a new "
                "baseline."
            )
        if days_left <= RETIREMENT_WARNING_DAYS:
            when = "today" if days_left == 0 else f"in {days_left} day(s)"
            warnings.append(
                f"model '{model}' retires on {retires.isoformat()} ({when}): plan the move to "
                "a new snapshot and a new accepted baseline."
            )
    return warnings
