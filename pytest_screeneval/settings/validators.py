"""argparse ``type=`` functions shared by the plugin's options, the ``openai`` scorer's options and
the ``screeneval`` command, so a value is judged and worded the same wherever it is given.

Each takes the text as typed (ini values are text too) and raises
:class:`argparse.ArgumentTypeError` with a short phrase: "expected …, got '…'".
"""

from __future__ import annotations

import argparse
import math
import re
from datetime import date

__all__ = [
    "boolean",
    "call_budget",
    "flag_policy",
    "fraction",
    "http_url",
    "integer",
    "iso_date",
    "non_empty",
    "non_negative_float",
    "non_negative_int",
    "pattern_list",
    "percentage",
    "positive_float",
    "positive_int",
    "source_kind",
    "step_summary_policy",
    "temperature",
    "text_value",
]


def _refuse(expected: str, value: object) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")


def integer(value: str | int) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise _refuse("a whole number", value) from None


def _number(value: str | float) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise _refuse("a number", value) from None
    if math.isnan(number) or math.isinf(number):
        raise _refuse("a finite number", value)
    return number


def positive_int(value: str | int) -> int:
    number = integer(value)
    if number < 1:
        raise _refuse("a whole number of at least 1", value)
    return number


def non_negative_int(value: str | int) -> int:
    number = integer(value)
    if number < 0:
        raise _refuse("a whole number of at least 0", value)
    return number


def positive_float(value: str | float) -> float:
    number = _number(value)
    if not number > 0:
        raise _refuse("a number above 0", value)
    return number


def non_negative_float(value: str | float) -> float:
    number = _number(value)
    if number < 0:
        raise _refuse("a number of at least 0", value)
    return number


def fraction(value: str | float) -> float:
    number = _number(value)
    if not 0 <= number <= 1:
        raise _refuse("a number from 0 to 1", value)
    return number


def percentage(value: str | float) -> float:
    number = _number(value)
    if not 0 <= number <= 100:
        raise _refuse("a number from 0 to 100", value)
    return number


def temperature(value: str | float) -> float:
    number = _number(value)
    if not 0.0 <= number <= 2.0:
        raise _refuse("a temperature from 0 to 2", value)
    return number


def text_value(value: str) -> str:
    return str(value)


def non_empty(value: str) -> str:
    stripped = str(value).strip()
    if not stripped:
        raise _refuse("a non-empty value", value)
    return stripped


def source_kind(value: str) -> str:
    if value not in ("yaml", "db"):
        raise _refuse("'yaml' or 'db'", value)
    return value


def flag_policy(value: str) -> str:
    if value not in ("fail", "warn"):
        raise _refuse("'fail' or 'warn'", value)
    return value


def step_summary_policy(value: str) -> str:
    if value not in ("auto", "off"):
        raise _refuse("'auto' or 'off'", value)
    return value


def call_budget(value: str | int | None) -> int | None:
    """A number of scorer calls, or ``auto`` (None: the plugin sizes it from the run)."""
    if value is None or str(value).strip().lower() in ("", "auto"):
        return None
    number = integer(value) if str(value).strip().lstrip("-").isdigit() else None
    if number is None or number < 0:
        raise _refuse("'auto' or a whole number of calls of at least 0", value)
    return number


def iso_date(value: str) -> date:
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise _refuse("a date like 2026-01-31", value) from None


def http_url(value: str) -> str:
    stripped = str(value).strip().rstrip("/")
    if not stripped.startswith(("http://", "https://")):
        raise _refuse("an http:// or https:// URL", value)
    return stripped


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def boolean(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _refuse("true or false", value)


def pattern_list(value: str) -> tuple[str, ...]:
    """Model-id patterns separated by commas or whitespace (fnmatch, case-insensitive)."""
    return tuple(p for p in value.replace(",", " ").split() if p)


def judge_choice(value: str) -> str:
    """The rationale judge: '' (off) or 'openai' (any OpenAI-compatible chat model)."""
    choice = str(value).strip().lower()
    if choice in ("", "off", "none"):
        return ""
    if choice != "openai":
        raise _refuse("'openai', or empty for no judge", value)
    return choice


def judge_scope(value: str) -> str:
    if value not in ("unflagged", "all"):
        raise _refuse("'unflagged' or 'all'", value)
    return value


def optional_http_url(value: str) -> str:
    """An http(s) URL, or '' for unset."""
    return http_url(value) if str(value).strip() else ""


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def env_name(value: str) -> str:
    """The name of an environment variable (never its value)."""
    stripped = str(value).strip()
    if not _ENV_NAME.match(stripped):
        raise _refuse("the name of an environment variable, such as MY_JUDGE_KEY", value)
    return stripped
