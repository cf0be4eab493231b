"""Secrets the scorer knows, kept out of everything stored and printed.

A server that echoes the request in an error body (``Incorrect API key provided: sk-...``) puts
the key into the scorer's error, and from there into score rows, JUnit and the terminal; once in
a chained row it could not even be removed without breaking ``verify``. So the session passes
every text a scorer returns (rationale, evidence, error) through a :class:`Redactor` before it is
stored or shown.

The secrets are the API key the ``openai`` scorer reads from the environment (the only place it
takes one from) and whatever a scorer lists in an optional ``secrets`` attribute.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "Redactor", "scorer_secrets"]

REDACTED = "[redacted]"
# Shorter values would redact ordinary words (and no real key is this short).
MIN_SECRET_CHARS = 8


def scorer_secrets(scorer: object, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets a scorer knows: the API key from the environment, and its ``secrets``."""
    from pytest_screeneval.scoring.openai.options import api_key_from_env

    found = [api_key_from_env(environ)]
    declared = getattr(scorer, "secrets", ())
    if isinstance(declared, str):
        declared = (declared,)
    if isinstance(declared, Iterable):
        found.extend(value for value in declared if isinstance(value, str))
    return tuple(sorted({s for s in found if s and len(s) >= MIN_SECRET_CHARS}, key=len))


@dataclass(frozen=True)
class Redactor:
    """Replaces each secret in a text by ``[redacted]`` (longest first)."""

    secrets: tuple[str, ...] = ()

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def optional(self, text: str | None) -> str | None:
        return None if text is None else self(text)
