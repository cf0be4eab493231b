"""The audit chain: canonical payloads and sha256 hashes that make a quiet rewrite visible.

Pure module (no database, no pytest). Every finished run, acceptance and review becomes one chain
entry whose hash covers a canonical copy of its record (a run's identity and status, an
acceptance's who/when/why, a review's movement and note), for a run also a digest of all its
score rows, and the previous entry's hash. Every change to the golden set (case texts,
expectations with their history, ratings, rubrics, variants, retirements) becomes a ``golden``
entry holding a digest of each row it added or changed (see ``store/chain/golden.py``).
Editing any of those rows afterwards, deleting or re-ordering entries, changes a hash that
:func:`check_entries` recomputes from the current rows.

What it cannot see alone: someone who rewrites the chain's whole tail consistently (the algorithm
is public). Two things close that gap: the head (the last entry's hash) printed in every artefact
and checked with ``screeneval verify --expect-head``, and an optional key (``SCREENEVAL_CHAIN_KEY``)
that turns each entry hash into an HMAC, so that only a key holder can compute a valid chain.

Formats are frozen: entries written by format 1 (no golden entries, no ``golden_seq`` on runs, no
key) must verify forever, so a change to a field list or to the canonical form needs a new format
number, not an edit. Format 2 adds the run's ``golden_seq``, golden entries and the key id.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_screeneval.golden.model import canonical_json

if TYPE_CHECKING:
    from sqlalchemy.engine import RowMapping

__all__ = [
    "ACCEPTANCE_FIELDS",
    "CHAIN_FORMAT",
    "CHAIN_KEY_ENV",
    "FIELDS",
    "FIELDS_BY_FORMAT",
    "GENESIS_HASH",
    "HISTORICAL_FIELDS",
    "JUDGEMENT_FIELDS",
    "KINDS",
    "REVIEW_FIELDS",
    "RUN_FIELDS",
    "RUN_FIELDS_V1",
    "SCORE_FIELDS",
    "ChainEntry",
    "ChainReport",
    "Current",
    "RowsDigest",
    "check_entries",
    "digest_rows",
    "entry_hash",
    "entry_label",
    "key_id",
    "new_entry",
    "record_json",
    "unchained_break",
]

CHAIN_FORMAT = 2
# the previous hash of the first entry
GENESIS_HASH = "0" * 64
KINDS = ("run", "acceptance", "review", "golden", "historical", "judgement")
# The environment variable holding the chain key (any text; HMAC-SHA256 with its UTF-8 bytes).
CHAIN_KEY_ENV = "SCREENEVAL_CHAIN_KEY"

# Every column of a run as of format 1: all of them are fixed once it has finished.
RUN_FIELDS_V1 = (
    "run_id",
    "scorer",
    "model_id",
    "served_model",
    "prompt_sha",
    "rubric_id",
    "rubric_sha",
    "temperature",
    "golden_sha",
    "status",
    "started_at",
    "finished_at",
    "plugin_version",
    "vcs_commit",
    "notes",
    "baseline_run_id",
    "selection",
    "config",
    "host",
    "pid",
    "verdict",
)
# Format 2: also the chain position of the golden set the run used (schema revision 0003).
RUN_FIELDS = (*RUN_FIELDS_V1, "golden_seq")
# Every column of a score row but its surrogate id and its run (the rows are read per run).
SCORE_FIELDS = (
    "case_id",
    "variant_key",
    "repeat_index",
    "criterion",
    "score",
    "rationale",
    "evidence",
    "confidence",
    "latency_ms",
    "attempts",
    "error",
    "input_sha256",
    "prompt_tokens",
    "completion_tokens",
    "reused_from_run",
)
ACCEPTANCE_FIELDS = (
    "id",
    "run_id",
    "accepted_by",
    "accepted_at",
    "note",
    "previous_baseline_run_id",
    "forced",
)
REVIEW_FIELDS = (
    "id",
    "run_id",
    "case_id",
    "target",
    "baseline_run_id",
    "before",
    "after",
    "reviewed_by",
    "reviewed_at",
    "note",
)
# A bias audit on historical data (schema revision 0004): every column, all fixed when written.
HISTORICAL_FIELDS = (
    "id",
    "file_name",
    "file_sha256",
    "file_format",
    "file_size",
    "rows",
    "applicants",
    "bad_rows",
    "first_date",
    "last_date",
    "columns",
    "run_id",
    "audited_by",
    "audited_at",
    "audit_date",
    "valid_until",
)
# A verdict of the rationale judge (schema revision 0006): every column, all fixed when written.
JUDGEMENT_FIELDS = (
    "id",
    "run_id",
    "case_id",
    "criterion",
    "score",
    "input_sha256",
    "rationale_sha256",
    "judge_model",
    "served_model",
    "prompt_sha",
    "temperature",
    "response_format",
    "protected",
    "protected_category",
    "protected_phrase",
    "ungrounded",
    "claim",
    "error",
    "raw",
    "prompt_tokens",
    "completion_tokens",
    "attempts",
    "latency_ms",
    "judged_at",
)
# Format 2 gained the historical kind with revision 0004 and the judgement kind with 0006: new
# kinds, so no entry of the kinds before them hashes differently.
FIELDS_BY_FORMAT: Mapping[int, Mapping[str, tuple[str, ...]]] = {
    1: {"run": RUN_FIELDS_V1, "acceptance": ACCEPTANCE_FIELDS, "review": REVIEW_FIELDS},
    2: {
        "run": RUN_FIELDS,
        "acceptance": ACCEPTANCE_FIELDS,
        "review": REVIEW_FIELDS,
        "historical": HISTORICAL_FIELDS,
        "judgement": JUDGEMENT_FIELDS,
    },
}
FIELDS: Mapping[str, tuple[str, ...]] = FIELDS_BY_FORMAT[CHAIN_FORMAT]

# Drivers may hand back 1 for 1.0 or 1 for True; these are normalised so a value hashes the same
# on SQLite and PostgreSQL. Anything else is hashed as read: a text put into a number column by
# hand hashes differently, as it should.
_FLOAT_FIELDS = frozenset({"temperature", "confidence", "latency_ms"})
_BOOL_FIELDS = frozenset({"forced", "protected", "ungrounded"})
_SCORE_FLOAT_POSITIONS = tuple(i for i, name in enumerate(SCORE_FIELDS) if name in _FLOAT_FIELDS)
# how much of a (case, criterion) digest the entry keeps to say whose rows changed
_INDEX_DIGEST_CHARS = 12
_CASE = SCORE_FIELDS.index("case_id")
_CRITERION = SCORE_FIELDS.index("criterion")
_SHOWN_VALUE_CHARS = 60
_SHOWN_FIELDS = 3


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normal(name: str, value: Any) -> Any:
    if name in _FLOAT_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if name in _BOOL_FIELDS and isinstance(value, int):
        return bool(value)
    return value


def record_json(
    kind: str, fields: Mapping[str, Any] | RowMapping, chain_format: int = CHAIN_FORMAT
) -> str:
    """The canonical JSON of a run, acceptance or review row (the columns of its format)."""
    names = FIELDS_BY_FORMAT[chain_format][kind]
    return canonical_json({name: _normal(name, fields[name]) for name in names})


def key_id(key: bytes) -> str:
    """A short public name of a chain key: says which key keyed an entry, reveals nothing."""
    return hmac.new(key, b"screeneval chain key id", hashlib.sha256).hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Score rows
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowsDigest:
    """A run's score rows in one hash, plus per (case, criterion) a row count and a short digest.

    The index is what lets ``verify`` say whose rows changed and whether rows were deleted or
    added (a case and criterion has one row per variant and repeat); the full-strength
    ``rows_hash``, which covers every row, is what proves it.
    """

    count: int
    rows_hash: str
    index: Mapping[str, Mapping[str, tuple[int, str]]]  # case -> criterion -> (rows, digest)

    @property
    def index_json(self) -> str:
        return canonical_json(
            {
                case: {criterion: list(entry) for criterion, entry in by_criterion.items()}
                for case, by_criterion in self.index.items()
            }
        )


# made once: json.dumps with options builds an encoder on every call (same text)
_ROW_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def digest_rows(rows: Iterable[Sequence[Any]]) -> RowsDigest:
    """Digest score rows given as sequences in ``SCORE_FIELDS`` order, in any order.

    Rows are put in a canonical order in Python (by case, criterion, then the row's canonical
    JSON), so neither the database's collation nor its row order matters.
    """
    lines: list[tuple[str, str, str]] = []
    for row in rows:
        values = list(row)
        for position in _SCORE_FLOAT_POSITIONS:
            value = values[position]
            if isinstance(value, int) and not isinstance(value, bool):
                values[position] = float(value)
        line = _ROW_JSON.encode(values)
        lines.append((str(values[_CASE]), str(values[_CRITERION]), line))
    lines.sort()
    groups: list[list[Any]] = []
    index: dict[str, dict[str, tuple[int, str]]] = {}
    start = 0
    while start < len(lines):
        case, criterion = lines[start][0], lines[start][1]
        end = start + 1
        while end < len(lines) and lines[end][0] == case and lines[end][1] == criterion:
            end += 1
        digest = _sha256("\n".join(line for _, _, line in lines[start:end]))
        groups.append([case, criterion, end - start, digest])
        index.setdefault(case, {})[criterion] = (end - start, digest[:_INDEX_DIGEST_CHARS])
        start = end
    body = {
        "format": 1,  # the rows digest has not changed since format 1
        "fields": list(SCORE_FIELDS),
        "count": len(lines),
        "groups": groups,
    }
    return RowsDigest(count=len(lines), rows_hash=_sha256(canonical_json(body)), index=index)


# --------------------------------------------------------------------------------------------
# Entries
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainEntry:
    """One row of ``eval_chain``."""

    seq: int
    kind: str
    ref_id: int
    record: str  # record_json(kind, row) when the entry was made
    row_count: int | None  # runs only
    rows_hash: str | None
    rows_index: str | None
    prev_hash: str
    entry_hash: str
    recorded_at: str
    backfilled: bool
    format: int = 1
    key_id: str | None = None  # the id of the key that HMAC-ed this entry; None: plain sha256


def entry_hash(
    *,
    seq: int,
    kind: str,
    ref_id: int,
    record: str,
    row_count: int | None,
    rows_hash: str | None,
    rows_index: str | None,
    prev_hash: str,
    recorded_at: str,
    backfilled: bool,
    format: int = 1,
    key_id: str | None = None,
    key: bytes | None = None,
) -> str:
    """The hash of everything an entry holds (so no column of it can change unseen): sha256,
    or HMAC-SHA256 with ``key`` for a keyed entry (``key_id`` names the key and is covered)."""
    body: dict[str, Any] = {
        "format": format,
        "seq": seq,
        "kind": kind,
        "ref_id": ref_id,
        "record": record,
        "row_count": row_count,
        "rows_hash": rows_hash,
        "rows_index": rows_index,
        "prev_hash": prev_hash,
        "recorded_at": recorded_at,
        "backfilled": bool(backfilled),
    }
    if format >= 2:
        body["key_id"] = key_id
    text = canonical_json(body)
    if key_id is None:
        return _sha256(text)
    if key is None:
        raise ValueError("a keyed chain entry needs its key to be hashed")
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def new_entry(
    *,
    seq: int,
    kind: str,
    ref_id: int,
    record: str,
    rows: RowsDigest | None,
    prev_hash: str,
    recorded_at: str,
    backfilled: bool = False,
    chain_format: int = CHAIN_FORMAT,
    key: bytes | None = None,
) -> ChainEntry:
    """The entry that follows ``prev_hash`` at position ``seq`` (HMAC-ed when ``key`` is given)."""
    if kind not in KINDS:
        raise ValueError(f"unknown chain entry kind {kind!r}")
    if key is not None and chain_format < 2:
        raise ValueError("format 1 entries cannot be keyed")
    parts: dict[str, Any] = {
        "seq": seq,
        "kind": kind,
        "ref_id": ref_id,
        "record": record,
        "row_count": rows.count if rows is not None else None,
        "rows_hash": rows.rows_hash if rows is not None else None,
        "rows_index": rows.index_json if rows is not None else None,
        "prev_hash": prev_hash,
        "recorded_at": recorded_at,
        "backfilled": backfilled,
        "format": chain_format,
        "key_id": key_id(key) if key is not None else None,
    }
    return ChainEntry(entry_hash=entry_hash(**parts, key=key), **parts)


def _stored_entry_hash(entry: ChainEntry, key: bytes | None) -> str:
    return entry_hash(
        seq=entry.seq,
        kind=entry.kind,
        ref_id=entry.ref_id,
        record=entry.record,
        row_count=entry.row_count,
        rows_hash=entry.rows_hash,
        rows_index=entry.rows_index,
        prev_hash=entry.prev_hash,
        recorded_at=entry.recorded_at,
        backfilled=entry.backfilled,
        format=entry.format,
        key_id=entry.key_id,
        key=key,
    )


# --------------------------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Current:
    """What the database holds now for an entry's record: None when the row is gone."""

    record: str | None
    rows: RowsDigest | None = None


@dataclass(frozen=True)
class ChainReport:
    """The outcome of walking the chain: intact, or the first place it breaks."""

    ok: bool
    entries: int
    first_break: str | None
    last_hash: str
    backfilled: int = 0  # entries computed at the upgrade that introduced the chain
    # every entry's hash in order: where a head kept outside the database sits in the chain
    hashes: tuple[str, ...] = ()
    keyed: int = 0  # entries HMAC-ed with a chain key
    # keyed entries whose HMAC could not be checked (no SCREENEVAL_CHAIN_KEY given)
    unchecked: int = 0


def _loads(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def entry_label(kind: str, ref_id: int, record: Mapping[str, Any]) -> str:
    """How messages name what an entry stands for: 'run 7', 'the acceptance of run 5', ..."""
    if kind == "run":
        return f"run {ref_id}"
    if kind == "acceptance":
        return f"the acceptance of run {record.get('run_id', '?')}"
    if kind == "golden":
        return f"golden set change {ref_id} ({record.get('reason', 'a sync')})"
    if kind == "historical":
        return f"historical data audit {ref_id} ({record.get('file_name', '?')})"
    if kind == "judgement":
        case, criterion = record.get("case_id", "?"), record.get("criterion", "?")
        return f"rationale judgement {ref_id} (case {case}, {criterion})"
    run, case, target = (record.get(key, "?") for key in ("run_id", "case_id", "target"))
    return f"review {ref_id} of run {run} (case {case}, {target})"


def _when_made(entry: ChainEntry) -> str:
    if entry.backfilled:
        return f"when the chain was backfilled at the upgrade on {entry.recorded_at[:10]}"
    return {
        "run": "when it finished",
        "acceptance": "when it was accepted",
        "review": "when it was made",
        "golden": "when the golden set was stored",
        "historical": "when the audit was recorded",
        "judgement": "when the judge's verdict was recorded",
    }[entry.kind]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_VALUE_CHARS else text[: _SHOWN_VALUE_CHARS - 3] + "..."


def _changed_fields(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    changed = [
        f"{name} was {_shown(recorded.get(name))}, now {_shown(now.get(name))}"
        for name in sorted(set(recorded) | set(now))
        if recorded.get(name) != now.get(name)
    ]
    if not changed:
        return "its content changed"
    more = f", and {len(changed) - _SHOWN_FIELDS} more" if len(changed) > _SHOWN_FIELDS else ""
    return "; ".join(changed[:_SHOWN_FIELDS]) + more


def _flat_index(index: Mapping[str, Any]) -> dict[tuple[str, str], tuple[int, str]]:
    flat: dict[tuple[str, str], tuple[int, str]] = {}
    for case, by_criterion in index.items():
        if isinstance(by_criterion, Mapping):
            for criterion, entry in by_criterion.items():
                if isinstance(entry, Sequence) and len(entry) == 2:
                    flat[(str(case), str(criterion))] = (entry[0], entry[1])
    return flat


def _rows_change(entry: ChainEntry, now: RowsDigest) -> str:
    """Whose score rows differ from the entry's index, and how, as far as it can tell."""
    recorded = _flat_index(_loads(entry.rows_index or ""))
    current = _flat_index(now.index)
    for key in sorted(set(recorded) | set(current)):
        item = f"case {key[0]} / {key[1]}"
        before, after = recorded.get(key), current.get(key)
        if before is None and after is not None:
            return f"{item} has {after[0]} score row(s) it did not have: rows were added"
        if after is None and before is not None:
            return f"{item} had {before[0]} score row(s) and has none now: they were deleted"
        assert before is not None and after is not None
        if before[0] != after[0]:
            how = "a row was deleted" if after[0] < before[0] else "a row was added"
            return f"{item} has {after[0]} score row(s), it had {before[0]}: {how}"
        if before[1] != after[1]:
            which = "the score row" if after[0] == 1 else "a score row"
            return f"{which} for {item} changed"
    if entry.row_count is not None and entry.row_count != now.count:
        how = "rows were deleted" if now.count < entry.row_count else "rows were added"
        return f"it has {now.count} score row(s), it had {entry.row_count}: {how}"
    return "a score row changed"


def _backfill_note(entry: ChainEntry) -> str:
    if not entry.backfilled:
        return ""
    return "; a backfilled entry vouches for the rows as they were at the upgrade"


def _check_hash(entry: ChainEntry, previous: ChainEntry | None, key: bytes | None) -> str | None:
    """The entry's own hash, under the key when it is keyed; None when it holds (or cannot be
    checked without the key, which the report counts)."""
    label = entry_label(entry.kind, entry.ref_id, _loads(entry.record))
    where = f"chain entry {entry.seq} ({label})"
    if entry.key_id is None:
        if key is not None and previous is not None and previous.key_id is not None:
            return (
                f"{where} is not keyed although entry {previous.seq} before it is: the chain "
                "was re-written by someone without the key"
            )
        if _stored_entry_hash(entry, None) != entry.entry_hash:
            return (
                f"{where} was edited: its recorded hash is not the hash of its content "
                "(or two entries' hashes were swapped)"
            )
        return None
    if key is None:
        return None
    if entry.key_id != key_id(key):
        return (
            f"{where} was keyed with another key (key id {entry.key_id}; "
            f"{CHAIN_KEY_ENV} has key id {key_id(key)}): a wrong key, or the chain was re-written"
        )
    if _stored_entry_hash(entry, key) != entry.entry_hash:
        return (
            f"{where} was edited or re-forged: its recorded HMAC is not the HMAC of its content "
            "under the chain key"
        )
    return None


def _check_one(
    entry: ChainEntry, previous: ChainEntry | None, now: Current, key: bytes | None
) -> str | None:
    recorded = _loads(entry.record)
    label = entry_label(entry.kind, entry.ref_id, recorded)
    where = f"chain entry {entry.seq} ({label})"
    if previous is None and entry.prev_hash != GENESIS_HASH:
        return (
            f"{where} starts the chain but does not link to its start: "
            "earlier entries were deleted or entries were re-ordered"
        )
    if previous is not None and entry.prev_hash != previous.entry_hash:
        gap = (
            f" (entries jump from {previous.seq} to {entry.seq})"
            if entry.seq != previous.seq + 1
            else ""
        )
        return (
            f"{where} does not link to chain entry {previous.seq}{gap}: entries were "
            f"re-ordered, deleted or inserted, or entry {previous.seq} was rewritten"
        )
    broken_hash = _check_hash(entry, previous, key)
    if broken_hash is not None:
        return broken_hash
    if entry.kind == "golden":
        return None  # its record is the evidence; the rows it covers are checked at the end
    if now.record is None:
        table = {
            "run": "eval_runs",
            "acceptance": "eval_acceptances",
            "review": "eval_reviews",
            "historical": "eval_historical_audits",
            "judgement": "eval_rationale_judgements",
        }
        return f"{label} was deleted from {table[entry.kind]}, yet chain entry {entry.seq} holds it"
    note = _backfill_note(entry)
    if now.record != entry.record:
        what = {"run": "its run record"}.get(entry.kind, "it")
        changes = _changed_fields(recorded, _loads(now.record))
        return (
            f"{label}: {what} no longer matches the hash recorded {_when_made(entry)} "
            f"({changes}){note}"
        )
    if entry.kind == "run" and now.rows is not None and now.rows.rows_hash != entry.rows_hash:
        return (
            f"{label}: its score rows no longer match the hash recorded {_when_made(entry)} "
            f"({_rows_change(entry, now.rows)}){note}"
        )
    return None


def check_entries(
    entries: Iterable[ChainEntry],
    current: Callable[[ChainEntry], Current],
    key: bytes | None = None,
) -> ChainReport:
    """Walk the entries in order; recompute each from ``current`` and stop at the first break.
    Keyed entries are checked with ``key``; without it they are counted as unchecked."""
    count = 0
    backfilled = 0
    keyed = 0
    unchecked = 0
    hashes: list[str] = []
    previous: ChainEntry | None = None
    first_break: str | None = None
    for entry in entries:
        count += 1
        backfilled += bool(entry.backfilled)
        keyed += entry.key_id is not None
        unchecked += entry.key_id is not None and key is None
        hashes.append(entry.entry_hash)
        if first_break is None:
            first_break = _check_one(entry, previous, current(entry), key)
        previous = entry
    last_hash = previous.entry_hash if previous is not None else GENESIS_HASH
    return ChainReport(
        ok=first_break is None,
        entries=count,
        first_break=first_break,
        last_hash=last_hash,
        backfilled=backfilled,
        hashes=tuple(hashes),
        keyed=keyed,
        unchecked=unchecked,
    )


def unchained_break(kind: str, ref_id: int, record: Mapping[str, Any]) -> str:
    """The break of a record that should have a chain entry and has none."""
    label = entry_label(kind, ref_id, record)
    happened = "finished" if kind == "run" else "recorded"
    return (
        f"{label} is {happened} but has no chain entry: it was written outside "
        "pytest-screeneval or its entry was deleted"
    )
