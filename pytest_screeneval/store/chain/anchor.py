"""Anchors: the chain head kept outside the database, and how ``verify`` checks it.

Pure module (no database, no pytest). An anchor is what Certificate Transparency calls a signed
tree head: the position and hash of the chain's last entry at a moment, written where the
database's owner cannot rewrite it (a CI log, a git commit, a ticket). Because every entry's
hash covers the one before it, the chain at any later time must still hold that hash at that
position: a chain that was truncated, wiped or re-forged cannot.

``screeneval anchor`` writes one as JSON. With ``SCREENEVAL_CHAIN_KEY`` set it carries an
HMAC-SHA256 over its other fields, so a later reader holding the key knows a key holder made it.
That is a shared-key signature, not a public one: anyone with the key can make one, and nobody
without it can check it. Publishing the head where others see it (like a git signed tag or a
Sigstore log entry) is what makes it evidence for outsiders.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import canonical_json
from pytest_screeneval.store.chain.payloads import CHAIN_KEY_ENV, GENESIS_HASH, key_id

__all__ = [
    "ANCHOR_FORMAT",
    "ExpectedHead",
    "head_problem",
    "make_anchor",
    "parse_expected_head",
]

ANCHOR_FORMAT = "screeneval-anchor/1"
_HASH_CHARS = 64


@dataclass(frozen=True)
class ExpectedHead:
    """A head kept outside the database: its hash and, when known, its position."""

    hash: str
    seq: int | None = None
    signed: bool = False  # an anchor whose HMAC was checked with the chain key


def _signature(fields: Mapping[str, Any], key: bytes) -> str:
    body = canonical_json({name: value for name, value in fields.items() if name != "signature"})
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def make_anchor(
    *, store: str, seq: int, head: str, at: str, head_key_id: str | None, key: bytes | None
) -> dict[str, Any]:
    """The anchor document of a verified chain's head (signed when ``key`` is given)."""
    fields: dict[str, Any] = {
        "format": ANCHOR_FORMAT,
        "store": store,
        "seq": seq,
        "head": head,
        "head_key_id": head_key_id,
        "made_at": at,
        "signed_with_key_id": key_id(key) if key is not None else None,
    }
    fields["signature"] = _signature(fields, key) if key is not None else None
    return fields


def _is_hash(text: str) -> bool:
    return len(text) == _HASH_CHARS and all(c in "0123456789abcdef" for c in text)


def parse_expected_head(value: str, key: bytes | None) -> ExpectedHead:
    """``HASH``, ``SEQ:HASH`` or the path of an anchor file; one sentence when it is none."""
    text = value.strip().lower()
    if _is_hash(text):
        return ExpectedHead(hash=text)
    seq_text, _, hash_text = text.partition(":")
    if seq_text.isdigit() and _is_hash(hash_text):
        return ExpectedHead(hash=hash_text, seq=int(seq_text))
    path = Path(value)
    if not path.is_file():
        raise ScreenevalError(
            f"--expect-head {value!r} is neither a chain hash (64 hex digits, optionally "
            "preceded by its entry number and a colon) nor an anchor file."
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ScreenevalError(f"Cannot read the anchor file {path}: {exc}.") from None
    return _from_anchor(document, path, key)


def _from_anchor(document: object, path: Path, key: bytes | None) -> ExpectedHead:
    if (
        not isinstance(document, dict)
        or document.get("format") != ANCHOR_FORMAT
        or not isinstance(document.get("seq"), int)
        or not _is_hash(str(document.get("head", "")))
    ):
        raise ScreenevalError(f"The file {path} is not a screeneval anchor ({ANCHOR_FORMAT}).")
    signed_with = document.get("signed_with_key_id")
    signed = False
    if signed_with is not None:
        if key is None:
            raise ScreenevalError(
                f"The anchor {path} is signed (key id {signed_with}); set {CHAIN_KEY_ENV} to "
                "check its signature."
            )
        if signed_with != key_id(key):
            raise ScreenevalError(
                f"The anchor {path} was signed with another key (key id {signed_with}; "
                f"{CHAIN_KEY_ENV} has key id {key_id(key)})."
            )
        if not hmac.compare_digest(str(document.get("signature")), _signature(document, key)):
            raise ScreenevalError(
                f"The anchor {path} does not match its signature: it was edited after it was made."
            )
        signed = True
    return ExpectedHead(hash=str(document["head"]), seq=int(document["seq"]), signed=signed)


def head_problem(hashes: Sequence[str], expected: ExpectedHead) -> str | None:
    """Why the chain (its entry hashes in order) cannot have grown from the expected head;
    None when the head is in it at its position."""
    short = expected.hash[:16]
    if expected.seq == 0 or expected.hash == GENESIS_HASH:
        return None  # an anchor of the empty chain pins nothing
    if expected.hash in hashes:
        position = hashes.index(expected.hash) + 1
        if expected.seq is None or expected.seq == position:
            return None
        return (
            f"the head kept outside ({short}..., entry {expected.seq}) is entry {position} now: "
            "entries before it were deleted or inserted"
        )
    if not hashes:
        return f"the chain is empty but the head kept outside is {short}...: the chain was wiped"
    if expected.seq is not None and expected.seq > len(hashes):
        return (
            f"the chain has {len(hashes)} entries but the head kept outside ({short}...) is "
            f"entry {expected.seq}: the newest entries were deleted (truncated), or the chain "
            "was re-written"
        )
    if expected.seq is not None:
        return (
            f"entry {expected.seq} is not the head kept outside ({short}...): the chain was "
            "re-written (re-forged) from that entry or before it"
        )
    return (
        f"the head kept outside ({short}...) is not in the chain: the chain was truncated, "
        "wiped or re-written (re-forged)"
    )
