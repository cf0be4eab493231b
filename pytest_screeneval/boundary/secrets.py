"""The one redactor: no secret the run knows, and no URL password, leaves through any sink.

The run knows its secrets: the API key (from the environment, whatever its length), what a
scorer lists in its ``secrets`` attribute, and the passwords in the store's and the endpoint's
URLs. Each is remembered here once, by whoever reads it (:func:`remember`), and every sink
passes its text through :func:`redact`: the terminal (through ``terminal.terminal_safe``), the
text of every ``ScreenevalError``, the score rows and the run config as they are made, and the
JUnit, JSON and HTML files as they are written. So a server that echoes the key in a 401 body,
or a URL printed in an error, cannot carry a secret out, whichever path the text takes.

Besides the known secrets, what looks like a credential is masked wherever it appears: the
password of ``scheme://user:password@host`` and ``password=`` / ``pwd=`` (in a query string or a
libpq conninfo), bearer tokens, and OpenAI-style ``sk-...`` keys.

A secret of 8 characters or more is replaced wherever it appears; a shorter one (a test key,
a weak password) only where it stands alone, not inside a longer word, so that a one-letter key
does not eat every "a" of a rationale and yet "Incorrect API key provided: abc1." loses it.
"""

from __future__ import annotations

import base64
import html
import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

__all__ = [
    "MASK",
    "REDACTED",
    "Redactor",
    "forget",
    "known_secrets",
    "mask_urls",
    "redact",
    "redact_value",
    "remember",
    "url_secrets",
]

REDACTED = "[redacted]"
MASK = "***"  # a URL's password, as SQLAlchemy shows it
# Replaced anywhere from this length; shorter secrets only as a whole token.
_ANYWHERE_CHARS = 8
_WORD = "A-Za-z0-9"

_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*):(?P<pw>[^\s/?#]*)@")
_PASSWORD_FIELD = re.compile(
    r"(?i)(?P<head>(?:^|(?<=[?&;\s]))(?:password|passwd|pwd)\s*=\s*)(?P<pw>[^&\s#'\"<>]+)"
)
_QUERY_TOKEN = re.compile(
    r"(?i)(?P<head>[?&;](?:secret|token|api[_-]?key|access[_-]?token|auth)=)(?P<pw>[^&\s#'\"<>]+)"
)
# an Authorization header's credentials: a bearer token, or HTTP basic auth (base64 of
# user:password, which is what a client sends for a URL with userinfo); a token holds a digit or
# one of _~+/=, so "a basic understanding." or "bearer bonds" in a rationale stay as written
_BEARER = re.compile(
    r"(?P<head>\b(?:Bearer|Basic|bearer)\s+)"
    r"(?P<pw>(?=[A-Za-z.-]*[0-9_~+/=])[A-Za-z0-9._~+/=-]{4,})"
)
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")


def _masked(match: re.Match[str]) -> str:
    return match.group("head") + (MASK if match.group("pw") else "")


def _masked_userinfo(match: re.Match[str]) -> str:
    return f"{match.group('head')}:{MASK}@"


def _masked_token(match: re.Match[str]) -> str:
    return match.group("head") + REDACTED


def mask_urls(text: str) -> str:
    """``text`` with what looks like a credential masked (no known secret needed)."""
    if "://" in text:
        text = _USERINFO.sub(_masked_userinfo, text)
    if "=" in text:
        text = _PASSWORD_FIELD.sub(_masked, text)
        text = _QUERY_TOKEN.sub(_masked_token, text)
    if "earer" in text or "asic" in text:
        text = _BEARER.sub(_masked_token, text)
    if "sk-" in text:
        text = _OPENAI_KEY.sub(REDACTED, text)
    return text


def _spellings(secret: str) -> set[str]:
    """A secret as it may appear in a text: as is, URL-quoted, in a JSON string, in HTML."""
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1], html.escape(secret)}


def _pattern(secrets: Iterable[str]) -> re.Pattern[str] | None:
    spellings = {s for secret in secrets if secret for s in _spellings(secret)}
    if not spellings:
        return None
    parts = []
    for secret in sorted(spellings, key=len, reverse=True):
        escaped = re.escape(secret)
        if len(secret) >= _ANYWHERE_CHARS:
            parts.append(escaped)
        else:
            parts.append(f"(?<![{_WORD}]){escaped}(?![{_WORD}])")
    return re.compile("|".join(parts))


@dataclass(frozen=True)
class Redactor:
    """Replaces each secret in a text by ``[redacted]`` (longest first), and masks what looks
    like a credential (:func:`mask_urls`)."""

    secrets: tuple[str, ...] = ()
    _compiled: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", _pattern(self.secrets))

    def __call__(self, text: str) -> str:
        if self._compiled is not None:
            text = self._compiled.sub(REDACTED, text)
        return mask_urls(text)

    def optional(self, text: str | None) -> str | None:
        return None if text is None else self(text)


class _Known:
    """The secrets this process knows, each held by one or more owners (a session, a command)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[str, int] = {}
        self._redactor = Redactor()

    def remember(self, secrets: Iterable[str | None]) -> tuple[str, ...]:
        added = tuple(dict.fromkeys(s for s in secrets if s))
        if added:
            with self._lock:
                for secret in added:
                    self._holders[secret] = self._holders.get(secret, 0) + 1
                self._redactor = Redactor(tuple(self._holders))
        return added

    def forget(self, secrets: Iterable[str]) -> None:
        with self._lock:
            for secret in secrets:
                count = self._holders.get(secret, 0) - 1
                if count > 0:
                    self._holders[secret] = count
                else:
                    self._holders.pop(secret, None)
            self._redactor = Redactor(tuple(self._holders))

    @property
    def redactor(self) -> Redactor:
        return self._redactor


_KNOWN = _Known()


def remember(*secrets: str | None) -> tuple[str, ...]:
    """Make these secrets known to every sink; returns them, to :func:`forget` later."""
    return _KNOWN.remember(secrets)


def forget(secrets: Iterable[str]) -> None:
    """The owner of these secrets is done with them (a session closed)."""
    _KNOWN.forget(secrets)


def known_secrets() -> tuple[str, ...]:
    return _KNOWN.redactor.secrets


def redact(text: str) -> str:
    """``text`` without any known secret or credential-looking value."""
    return _KNOWN.redactor(text)


def redact_value(value: Any) -> Any:
    """A JSON-like value (a run config, a report document) with every string redacted, keys too."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The password of a URL (userinfo or a ``password=`` query parameter), as written,
    decoded, and as HTTP basic auth sends it with the user, for :func:`remember`."""
    if not url:
        return ()
    found: list[str] = []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        parts, password = None, None
    if password:
        found += [password, unquote(password)]
        user = unquote(parts.username or "") if parts is not None else ""
        basic = f"{user}:{unquote(password)}".encode()
        found.append(base64.b64encode(basic).decode("ascii"))
    query = parts.query if parts is not None else url
    for match in _PASSWORD_FIELD.finditer(query.replace("&", " ")):
        found += [match.group("pw"), unquote(match.group("pw"))]
    return tuple(dict.fromkeys(found))
