"""Settings of the ``openai`` scorer and the options that set them (ini and command line).

Imported when pytest registers options, so it must stay light: it never imports ``openai``.
The plugin registers every :data:`OPTIONS` entry in its one option group (flag with
``default=None`` so "not given" is visible, ini as a plain string) and builds the settings with
:func:`settings_from`, passing a getter that prefers the flag, then the ini. The CLI can share
the same specs.

The API key is never an option: it comes from the environment only (see :func:`api_key_from_env`)
and is never put into settings, logs or messages.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.settings.options import OptionSpec
from pytest_screeneval.settings.validators import (
    boolean,
    http_url,
    integer,
    iso_date,
    non_negative_int,
    pattern_list,
    positive_float,
    positive_int,
    temperature,
)
from pytest_screeneval.settings.validators import non_empty as text

__all__ = [
    "API_KEY_VARIABLES",
    "OPTIONS",
    "OpenAISettings",
    "OptionSpec",
    "api_key_from_env",
    "boolean",
    "http_url",
    "integer",
    "iso_date",
    "non_negative_int",
    "pattern_list",
    "positive_float",
    "positive_int",
    "response_format_choice",
    "settings_from",
    "temperature",
    "text",
]

RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "prompt")

# The first one set wins: a screeneval-specific key lets a team keep a separate, budgeted key.
API_KEY_VARIABLES = ("SCREENEVAL_OPENAI_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class OpenAISettings:
    """How the ``openai`` scorer calls its endpoint. Holds no secret."""

    model: str
    base_url: str | None = None  # None: the openai library's default (or OPENAI_BASE_URL)
    prompt_template: str | None = None  # None: the built-in scoring/openai/prompt.txt
    temperature: float = 0.0
    seed: int | None = None
    # Generous: a small model on a CPU takes tens of seconds per answer, and a one-slot local
    # server (llama.cpp) makes queued calls wait for the ones ahead of them.
    timeout_s: float = 240.0
    max_retries: int = 2  # transport retries after the first attempt
    response_format: str = "auto"  # auto | json_schema | json_object | prompt
    max_tokens: int | None = None  # None: the server's own limit
    stop_after_failures: int = 5  # identical request failures in a row that stop the run; 0 never
    allow_floating_model: bool = False
    floating_aliases: tuple[str, ...] = ()
    model_retires: date | None = None


# --------------------------------------------------------------------------------------------
# Validators: argparse ``type=`` functions, also applied to ini strings by settings_from
# --------------------------------------------------------------------------------------------


def response_format_choice(value: str) -> str:
    choice = value.strip().lower()
    if choice not in RESPONSE_FORMATS:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(RESPONSE_FORMATS)}, got {value!r}"
        )
    return choice


# --------------------------------------------------------------------------------------------
# Option specs
# --------------------------------------------------------------------------------------------


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "screeneval_openai_model",
        "",
        "Model id for the openai scorer; pin a dated snapshot (e.g. gpt-4o-2024-08-06).",
        text,
        "--screeneval-openai-model",
        "model",
    ),
    OptionSpec(
        "screeneval_openai_base_url",
        "",
        "OpenAI-compatible endpoint ending in /v1 (default: the openai library's).",
        http_url,
        "--screeneval-openai-base-url",
        "base_url",
    ),
    OptionSpec(
        "screeneval_openai_prompt_template",
        "",
        "Prompt template file for the openai scorer, relative to the rootdir "
        "(default: the built-in one).",
        text,
        "--screeneval-openai-prompt-template",
        "prompt_template",
    ),
    OptionSpec(
        "screeneval_openai_temperature",
        "0.0",
        "Sampling temperature for the openai scorer, 0 to 2.",
        temperature,
        "--screeneval-openai-temperature",
        "temperature",
    ),
    OptionSpec(
        "screeneval_openai_seed",
        "",
        "Sampling seed sent to the endpoint (default: none).",
        integer,
        "--screeneval-openai-seed",
        "seed",
    ),
    OptionSpec(
        "screeneval_openai_timeout",
        "240",
        "Seconds one request to the endpoint may take, waiting in the server's queue included.",
        positive_float,
        "--screeneval-openai-timeout",
        "timeout_s",
    ),
    OptionSpec(
        "screeneval_openai_max_retries",
        "2",
        "Retries after a connection error, timeout, 429 or 5xx; answers and rejected requests "
        "(4xx, or a 5xx saying the request is invalid) are never retried.",
        non_negative_int,
        "--screeneval-openai-max-retries",
        "max_retries",
    ),
    OptionSpec(
        "screeneval_openai_response_format",
        "auto",
        "How the answer's JSON structure is asked for: json_schema, json_object (with the "
        "schema), prompt (schema in the prompt), or auto (probe once, in that order).",
        response_format_choice,
        "--screeneval-openai-response-format",
        "response_format",
    ),
    OptionSpec(
        "screeneval_openai_max_tokens",
        "",
        "Most tokens one answer may have (sent as max_tokens; default: the server's limit).",
        positive_int,
        "--screeneval-openai-max-tokens",
        "max_tokens",
    ),
    OptionSpec(
        "screeneval_openai_stop_after_failures",
        "5",
        "Stop the run after this many requests in a row fail the same way (0: never).",
        non_negative_int,
        "--screeneval-openai-stop-after-failures",
        "stop_after_failures",
    ),
    OptionSpec(
        "screeneval_openai_allow_floating_model",
        "false",
        "Accept a floating model alias such as gpt-4o or *-latest (true/false); runs may not "
        "be comparable.",
        boolean,
        "--screeneval-openai-allow-floating-model",
        "allow_floating_model",
    ),
    OptionSpec(
        "screeneval_openai_floating_aliases",
        "",
        "More model-id patterns to treat as floating aliases (fnmatch, comma separated).",
        pattern_list,
        "--screeneval-openai-floating-aliases",
        "floating_aliases",
    ),
    OptionSpec(
        "screeneval_openai_model_retires",
        "",
        "The pinned model's retirement date (YYYY-MM-DD): warn 30 days ahead, refuse after.",
        iso_date,
        "--screeneval-openai-model-retires",
        "model_retires",
    ),
)


def settings_from(get: Callable[[str], object | None]) -> OpenAISettings:
    """Build settings from ``get(ini_name)``: texts are parsed, already-parsed values kept.

    A value that is missing or blank takes the spec's default. A missing model or an invalid
    value raises a :class:`ScreenevalError` naming the option.
    """
    values: dict[str, object] = {}
    for spec in OPTIONS:
        raw = get(spec.name)
        if isinstance(raw, list | tuple) and spec.type is pattern_list:
            raw = " ".join(str(item) for item in raw)  # an ini registered as a line list
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            raw = spec.default
        if not isinstance(raw, str):
            values[spec.field] = raw
        elif raw.strip():
            try:
                values[spec.field] = spec.type(raw)
            except (argparse.ArgumentTypeError, ValueError) as error:
                raise ScreenevalError(f"The option {spec.name} is invalid: {error}.") from None
    if not values.get("model"):
        raise ScreenevalError(
            "The openai scorer needs a model id: set screeneval_openai_model in the ini file or "
            "pass --screeneval-openai-model."
        )
    return OpenAISettings(**values)  # type: ignore[arg-type]


def api_key_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The API key from the environment, or None; never from an option, never logged."""
    env = os.environ if environ is None else environ
    for name in API_KEY_VARIABLES:
        key = env.get(name, "").strip()
        if key:
            return key
    return None
