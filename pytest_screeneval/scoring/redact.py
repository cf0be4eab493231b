"""The secrets a scorer knows, for the one redactor (:mod:`pytest_screeneval.boundary.secrets`).

A server that echoes the request in an error body (``Incorrect API key provided: sk-...``) puts
the key into the scorer's error, and from there into score rows, JUnit and the terminal; once in
a chained row it could not even be removed without breaking ``verify``. So the session remembers
these secrets as soon as it has the scorer, and every sink redacts them, whatever their length.

The secrets are the API key the ``openai`` scorer reads from the environment (the only place it
takes one from), the password in its endpoint URL, and whatever a scorer lists in an optional
``secrets`` attribute. The rationale judge has secrets of its own: the key in the environment
variable its settings name, and the password in its endpoint URL (:func:`judge_secrets`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from pytest_screeneval.boundary.secrets import REDACTED, Redactor, url_secrets

__all__ = ["REDACTED", "Redactor", "judge_secrets", "scorer_secrets"]


def scorer_secrets(scorer: object, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets a scorer knows: the API key from the environment, the password of its
    endpoint, and its ``secrets``."""
    from pytest_screeneval.scoring.openai.options import api_key_from_env

    env = os.environ if environ is None else environ
    found: list[str | None] = [api_key_from_env(env)]
    endpoint = getattr(scorer, "endpoint", None) or env.get("OPENAI_BASE_URL")
    if isinstance(endpoint, str):
        found.extend(url_secrets(endpoint))
    declared = getattr(scorer, "secrets", ())
    if isinstance(declared, str):
        declared = (declared,)
    if isinstance(declared, Iterable):
        found.extend(value for value in declared if isinstance(value, str))
    return tuple(sorted({s for s in found if s}, key=len))


def judge_secrets(
    api_key_env: str, base_url: str, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """The rationale judge's secrets: its own API key (from the variable its settings name)
    and the password of its endpoint."""
    from pytest_screeneval.scoring.openai.judge import judge_api_key

    found: list[str | None] = [judge_api_key(api_key_env, environ)]
    found.extend(url_secrets(base_url))
    return tuple(sorted({s for s in found if s}, key=len))
