"""The rate-limit headers an OpenAI-compatible server sends, read into :class:`RateLimits`.

OpenAI (and the gateways that copy it) send, on answers and on 429s alike:
``x-ratelimit-limit-requests`` / ``-tokens`` (the limit per minute), ``x-ratelimit-remaining-*``
(what is left after this request) and ``x-ratelimit-reset-*`` (how long until the limit is back
to full), the last in Go's duration format: ``"1s"``, ``"6m0s"``, ``"20ms"``, ``"1h2m3.5s"``.
Anything unreadable is left out (None), never guessed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from pytest_screeneval.scoring.protocol import RateLimits

__all__ = ["parse_duration", "rate_limits_from_headers"]

_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_PREFIX = "x-ratelimit-"


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration (``"6m0s"``, ``"20ms"``), or a bare number of seconds."""
    text = text.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        position, seconds = 0, 0.0
        for part in _PART.finditer(text):
            if part.start() != position:
                return None
            seconds += float(part.group(1)) * _UNIT_S[part.group(2)]
            position = part.end()
        if position != len(text) or position == 0:
            return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def _count(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    return int(number)


def rate_limits_from_headers(headers: Mapping[str, str]) -> RateLimits | None:
    """The rate-limit headers of a response, or None when it sent none."""
    lowered = {k.lower(): v for k, v in headers.items() if k.lower().startswith(_PREFIX)}
    if not lowered:
        return None

    def reset(name: str) -> float | None:
        value = lowered.get(_PREFIX + name)
        return parse_duration(value) if value is not None else None

    limits = RateLimits(
        remaining_requests=_count(lowered.get(_PREFIX + "remaining-requests")),
        remaining_tokens=_count(lowered.get(_PREFIX + "remaining-tokens")),
        reset_requests_s=reset("reset-requests"),
        reset_tokens_s=reset("reset-tokens"),
        limit_requests=_count(lowered.get(_PREFIX + "limit-requests")),
        limit_tokens=_count(lowered.get(_PREFIX + "limit-tokens")),
    )
    return limits if limits.said_anything else None
