"""The audit chain's queries: append an entry in the writer's transaction, walk and verify it.

The hashing is in :mod:`pytest_screeneval.store.chain.payloads`; this module reads the rows it
hashes and writes ``eval_chain``. The tables come in as a :class:`ChainTables` so that the
migration which introduced the chain (revision 0002) can backfill with its own snapshot of the
tables, and keep working when later revisions change them.

Appends are serialised: on PostgreSQL by a transaction-scoped advisory lock taken just before the
last entry is read, on SQLite by the writer's ``BEGIN IMMEDIATE``. The primary key on ``seq`` and
the unique ``prev_hash`` refuse a fork even if that lock were ever skipped.

Golden-set changes are chained here too: :func:`golden_state` reads a digest of every golden row,
:func:`append_golden` chains what a sync or a retirement changed, and :func:`verify` checks the
rows against the chain with :func:`pytest_screeneval.store.chain.golden.check_golden`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain.golden import (
    RowState,
    check_golden,
    golden_changes,
    golden_record,
    row_state,
)
from pytest_screeneval.store.chain.payloads import (
    CHAIN_FORMAT,
    FIELDS_BY_FORMAT,
    GENESIS_HASH,
    SCORE_FIELDS,
    ChainEntry,
    ChainReport,
    Current,
    RowsDigest,
    check_entries,
    digest_rows,
    new_entry,
    record_json,
    unchained_break,
)

__all__ = [
    "CHAIN_LOCK_KEY",
    "STORE_GOLDEN_TABLES",
    "STORE_TABLES",
    "ChainTables",
    "GoldenTables",
    "append_entry",
    "append_golden",
    "backfill",
    "chain_head",
    "current_record",
    "golden_break",
    "golden_seq",
    "golden_state",
    "lock_chain",
    "rows_waiting",
    "run_rows_digest",
    "verify",
]

# PostgreSQL advisory lock key serialising chain appends (the store's other lock is 0x5C4EE7A1).
CHAIN_LOCK_KEY = 0x5C4EE7A2
FINISHED = ("complete", "partial", "interrupted")


@dataclass(frozen=True)
class GoldenTables:
    """The golden-set tables the chain covers (any table objects with these columns)."""

    cases: sa.TableClause
    expectations: sa.TableClause
    ratings: sa.TableClause
    rubrics: sa.TableClause
    variants: sa.TableClause


@dataclass(frozen=True)
class ChainTables:
    """The tables the chain reads and writes (any table objects with these columns)."""

    runs: sa.TableClause
    scores: sa.TableClause
    acceptances: sa.TableClause
    reviews: sa.TableClause
    chain: sa.TableClause
    golden: GoldenTables | None = None  # None before revision 0003 (no golden entries)
    historical: sa.TableClause | None = None  # None before revision 0004
    judgements: sa.TableClause | None = None  # None before revision 0006

    def of(self, kind: str) -> tuple[sa.TableClause, sa.ColumnElement[Any]]:
        """The table of a kind of record and its id column."""
        if kind == "run":
            return self.runs, self.runs.c.run_id
        if kind == "acceptance":
            return self.acceptances, self.acceptances.c.id
        if kind == "historical":
            if self.historical is None:
                raise LookupError("historical audits are chained from schema revision 0004")
            return self.historical, self.historical.c.id
        if kind == "judgement":
            if self.judgements is None:
                raise LookupError("rationale judgements are chained from schema revision 0006")
            return self.judgements, self.judgements.c.id
        return self.reviews, self.reviews.c.id


STORE_GOLDEN_TABLES = GoldenTables(
    cases=t.cases,
    expectations=t.expectations,
    ratings=t.ratings,
    rubrics=t.rubrics,
    variants=t.variants,
)
STORE_TABLES = ChainTables(
    runs=t.runs,
    scores=t.scores,
    acceptances=t.acceptances,
    reviews=t.reviews,
    chain=t.chain,
    golden=STORE_GOLDEN_TABLES,
    historical=t.historical_audits,
    judgements=t.judgements,
)


def lock_chain(conn: Connection) -> None:
    """Hold the chain for this transaction (PostgreSQL; SQLite writers are serialised already)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": CHAIN_LOCK_KEY})


def current_record(
    conn: Connection,
    tables: ChainTables,
    kind: str,
    ref_id: int,
    chain_format: int = CHAIN_FORMAT,
) -> str | None:
    """The canonical JSON of a run, acceptance or review as it is now; None if it is gone."""
    table, id_column = tables.of(kind)
    columns = [table.c[name] for name in FIELDS_BY_FORMAT[chain_format][kind]]
    row = conn.execute(sa.select(*columns).where(id_column == ref_id)).mappings().first()
    return record_json(kind, row, chain_format) if row is not None else None


def run_rows_digest(conn: Connection, tables: ChainTables, run_id: int) -> RowsDigest:
    """The digest of every score row of a run, as they are now."""
    scores = tables.scores
    query = sa.select(*[scores.c[name] for name in SCORE_FIELDS]).where(scores.c.run_id == run_id)
    return digest_rows(conn.execute(query))


def _last_entry(conn: Connection, tables: ChainTables) -> tuple[int, str]:
    chain = tables.chain
    row = conn.execute(
        sa.select(chain.c.seq, chain.c.entry_hash).order_by(chain.c.seq.desc()).limit(1)
    ).first()
    return (0, GENESIS_HASH) if row is None else (int(row.seq), str(row.entry_hash))


def chain_head(conn: Connection, tables: ChainTables = STORE_TABLES) -> tuple[int, str, str | None]:
    """The last entry: (seq, its hash, the id of the key that keyed it); (0, genesis, None)."""
    chain = tables.chain
    columns = [chain.c.seq, chain.c.entry_hash]
    if "key_id" in chain.c:
        columns.append(chain.c.key_id)
    row = conn.execute(sa.select(*columns).order_by(chain.c.seq.desc()).limit(1)).first()
    if row is None:
        return 0, GENESIS_HASH, None
    return int(row[0]), str(row[1]), (row[2] if len(row) > 2 else None)


def append_entry(
    conn: Connection,
    tables: ChainTables,
    *,
    kind: str,
    ref_id: int,
    recorded_at: str,
    rows: RowsDigest | None = None,
    backfilled: bool = False,
    locked: bool = False,
    chain_format: int = CHAIN_FORMAT,
    key: bytes | None = None,
    record: str | None = None,
) -> ChainEntry:
    """Append the entry of a record as it is now in ``conn``'s transaction (read back, so the
    hash covers exactly what later reads will see). ``rows`` is the digest of a run's rows;
    ``record`` is given for a golden entry (whose record is the evidence itself)."""
    if record is None:
        record = current_record(conn, tables, kind, ref_id, chain_format)
    if record is None:  # the caller has just written it in this transaction
        raise LookupError(f"no {kind} {ref_id} to chain")
    if not locked:
        lock_chain(conn)
    seq, prev_hash = _last_entry(conn, tables)
    entry = new_entry(
        seq=seq + 1,
        kind=kind,
        ref_id=ref_id,
        record=record,
        rows=rows,
        prev_hash=prev_hash,
        recorded_at=recorded_at,
        backfilled=backfilled,
        chain_format=chain_format,
        key=key,
    )
    conn.execute(tables.chain.insert().values(**_entry_values(entry, tables)))
    return entry


def _entry_values(entry: ChainEntry, tables: ChainTables) -> dict[str, Any]:
    values = _base_entry_values(entry)
    if "format" in tables.chain.c:  # revision 0003 and later
        values["format"] = entry.format
        values["key_id"] = entry.key_id
    return values


def _base_entry_values(entry: ChainEntry) -> dict[str, Any]:
    return {
        "seq": entry.seq,
        "kind": entry.kind,
        "ref_id": entry.ref_id,
        "record": entry.record,
        "row_count": entry.row_count,
        "rows_hash": entry.rows_hash,
        "rows_index": entry.rows_index,
        "prev_hash": entry.prev_hash,
        "entry_hash": entry.entry_hash,
        "recorded_at": entry.recorded_at,
        "backfilled": entry.backfilled,
    }


def _entries(conn: Connection, tables: ChainTables) -> Iterator[ChainEntry]:
    chain = tables.chain
    for row in conn.execute(sa.select(chain).order_by(chain.c.seq)).mappings():
        chain_format = row.get("format")
        yield ChainEntry(
            seq=row["seq"],
            kind=row["kind"],
            ref_id=row["ref_id"],
            record=row["record"],
            row_count=row["row_count"],
            rows_hash=row["rows_hash"],
            rows_index=row["rows_index"],
            prev_hash=row["prev_hash"],
            entry_hash=row["entry_hash"],
            recorded_at=row["recorded_at"],
            backfilled=bool(row["backfilled"]),
            format=int(chain_format) if chain_format is not None else 1,
            key_id=row.get("key_id"),
        )


def verify(
    conn: Connection, tables: ChainTables = STORE_TABLES, key: bytes | None = None
) -> ChainReport:
    """Walk the chain from its start against the current rows, then look for records that
    should be in it and are not (a run finished, or an acceptance or review added, by hand),
    then check every golden-set row against the golden entries."""

    def now(entry: ChainEntry) -> Current:
        if entry.kind == "golden":
            return Current(record=entry.record)
        record = current_record(conn, tables, entry.kind, entry.ref_id, entry.format)
        rows = None
        if record is not None and entry.kind == "run":
            rows = run_rows_digest(conn, tables, entry.ref_id)
        return Current(record=record, rows=rows)

    entries = list(_entries(conn, tables))
    report = check_entries(entries, now, key)
    if not report.ok:
        return report
    chained = {(entry.kind, entry.ref_id) for entry in entries}
    first_break: str | None = None
    for kind, ref_id, record in _records_to_chain(conn, tables):
        if (kind, ref_id) not in chained:
            first_break = unchained_break(kind, ref_id, record)
            break
    if first_break is None and tables.golden is not None:
        golden = [(entry.seq, entry.record) for entry in entries if entry.kind == "golden"]
        first_break = check_golden(golden, golden_state(conn, tables.golden))
    if first_break is None:
        return report
    return dataclasses.replace(report, ok=False, first_break=first_break)


# --------------------------------------------------------------------------------------------
# The golden set
# --------------------------------------------------------------------------------------------

_CASE_COLUMNS = (
    "case_id",
    "label",
    "slices",
    "rubric_id",
    "input_text",
    "input_sha256",
    "source",
    "attributes",
    "demographics",
    "xfail",
    "frozen_at",
    "retired_at",
    "retired_by",
)
_EXPECTATION_COLUMNS = ("id", "case_id", "criterion", "expected", "set_by", "set_at", "recorded_at")
_RATING_COLUMNS = ("id", "case_id", "criterion", "rater", "score", "recorded_at")
# synced_at is left out: every sync moves it, it says nothing a verdict depends on
_RUBRIC_COLUMNS = ("rubric_id", "sha", "version", "body", "stored_at")
_VARIANTS_COLUMNS = ("id", "sha", "body", "stored_at")


def _rows(conn: Connection, table: sa.TableClause, names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [dict(row) for row in conn.execute(sa.select(*[table.c[n] for n in names])).mappings()]


def golden_state(conn: Connection, tables: GoldenTables) -> dict[str, RowState]:
    """A digest of every golden-set row as the database holds it now, by key."""
    state: dict[str, RowState] = {}
    for row in _rows(conn, tables.cases, _CASE_COLUMNS):
        state[f"case:{row['case_id']}"] = row_state(f"case {row['case_id']}", row)
    for row in _rows(conn, tables.expectations, _EXPECTATION_COLUMNS):
        label = (
            f"the expectation of case {row['case_id']} / {row['criterion']} "
            f"set by {row['set_by']} (row {row['id']})"
        )
        state[f"expectation:{row['id']}"] = row_state(label, row)
    for row in _rows(conn, tables.ratings, _RATING_COLUMNS):
        label = (
            f"the rating of case {row['case_id']} / {row['criterion']} by {row['rater']} "
            f"(row {row['id']})"
        )
        state[f"rating:{row['id']}"] = row_state(label, row)
    for row in _rows(conn, tables.rubrics, _RUBRIC_COLUMNS):
        label = f"rubric {row['rubric_id']} (sha {str(row['sha'])[:12]})"
        state[f"rubric:{row['rubric_id']}@{row['sha']}"] = row_state(label, row)
    for row in _rows(conn, tables.variants, _VARIANTS_COLUMNS):
        label = f"the variants (sha {str(row['sha'])[:12]})"
        state[f"variants:{row['id']}"] = row_state(label, row)
    return state


def golden_break(conn: Connection, tables: ChainTables = STORE_TABLES) -> str | None:
    """The first edit to the golden set that its chain entries expose, or None (no walk of the
    rest of the chain: this is the quick check before a run scores the store's golden set)."""
    assert tables.golden is not None
    chain = tables.chain
    entries = conn.execute(
        sa.select(chain.c.seq, chain.c.record).where(chain.c.kind == "golden").order_by(chain.c.seq)
    ).all()
    return check_golden(
        [(int(seq), str(record)) for seq, record in entries], golden_state(conn, tables.golden)
    )


def golden_seq(conn: Connection, tables: ChainTables = STORE_TABLES) -> int | None:
    """The chain position of the latest golden-set change, None before the first."""
    chain = tables.chain
    value = conn.execute(sa.select(sa.func.max(chain.c.seq)).where(chain.c.kind == "golden"))
    found = value.scalar()
    return None if found is None else int(found)


def append_golden(
    conn: Connection,
    tables: ChainTables,
    *,
    before: dict[str, RowState],
    reason: str,
    recorded_at: str,
    key: bytes | None = None,
    backfilled: bool = False,
) -> ChainEntry | None:
    """Chain what changed in the golden set since ``before`` (read at the start of the same
    transaction); None when nothing changed."""
    assert tables.golden is not None
    changes = golden_changes(before, golden_state(conn, tables.golden))
    if not changes:
        return None
    lock_chain(conn)
    chain = tables.chain
    count = conn.execute(
        sa.select(sa.func.count()).select_from(chain).where(chain.c.kind == "golden")
    ).scalar_one()
    return append_entry(
        conn,
        tables,
        kind="golden",
        ref_id=int(count) + 1,
        recorded_at=recorded_at,
        backfilled=backfilled,
        locked=True,
        key=key,
        record=golden_record(reason, changes),
    )


def _records_to_chain(
    conn: Connection, tables: ChainTables
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Every record that belongs in the chain: finished runs, acceptances, reviews (by id)."""
    runs, acceptances, reviews = tables.runs, tables.acceptances, tables.reviews
    query = sa.select(runs.c.run_id, runs.c.verdict).where(runs.c.status.in_(FINISHED))
    finished = conn.execute(query.order_by(runs.c.run_id)).all()
    for run_id, verdict in finished:
        if not rows_waiting(verdict):
            yield "run", int(run_id), {}
    for row in conn.execute(
        sa.select(acceptances.c.id, acceptances.c.run_id).order_by(acceptances.c.id)
    ):
        yield "acceptance", int(row.id), {"run_id": row.run_id}
    for review in conn.execute(
        sa.select(reviews.c.id, reviews.c.run_id, reviews.c.case_id, reviews.c.target).order_by(
            reviews.c.id
        )
    ):
        yield "review", int(review.id), dict(review._mapping)
    if tables.historical is not None:
        historical = tables.historical
        for row in conn.execute(
            sa.select(historical.c.id, historical.c.file_name).order_by(historical.c.id)
        ):
            yield "historical", int(row.id), dict(row._mapping)
    if tables.judgements is not None:
        judgements = tables.judgements
        for judged in conn.execute(
            sa.select(judgements.c.id, judgements.c.case_id, judgements.c.criterion).order_by(
                judgements.c.id
            )
        ):
            yield "judgement", int(judged.id), dict(judged._mapping)


def rows_waiting(verdict: str | None) -> int:
    """Score rows a finished run waits for in the spool (``screeneval db recover`` imports them
    and chains the run then, with every row): its verdict says how many."""
    if not verdict:
        return 0
    try:
        document = json.loads(verdict)
    except ValueError:
        return 0
    waiting = document.get("rows_waiting") if isinstance(document, dict) else None
    return waiting if isinstance(waiting, int) and waiting > 0 else 0


# --------------------------------------------------------------------------------------------
# Backfill (the upgrade that introduced the chain)
# --------------------------------------------------------------------------------------------


def _moment(timestamp: str | None) -> tuple[int, str]:
    """A sort key for stored ISO timestamps, in UTC; odd or missing values sort last."""
    if not timestamp:
        return (1, "")
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return (1, timestamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (0, moment.astimezone(UTC).isoformat(timespec="microseconds"))


def backfill(
    conn: Connection, tables: ChainTables, *, recorded_at: str, chain_format: int = CHAIN_FORMAT
) -> int:
    """Chain every finished run, acceptance and review already in the database, in the order
    they happened (finished_at, accepted_at, reviewed_at), each flagged as backfilled.

    Returns the number of entries appended.
    """
    runs, acceptances, reviews = tables.runs, tables.acceptances, tables.reviews
    events: list[tuple[tuple[int, str], int, int, str]] = []
    for row in conn.execute(
        sa.select(runs.c.run_id, runs.c.finished_at, runs.c.started_at).where(
            runs.c.status.in_(FINISHED)
        )
    ):
        events.append((_moment(row.finished_at or row.started_at), 0, row.run_id, "run"))
    for acceptance in conn.execute(sa.select(acceptances.c.id, acceptances.c.accepted_at)):
        events.append((_moment(acceptance.accepted_at), 1, acceptance.id, "acceptance"))
    for review in conn.execute(sa.select(reviews.c.id, reviews.c.reviewed_at)):
        events.append((_moment(review.reviewed_at), 2, review.id, "review"))
    events.sort()
    if events:
        lock_chain(conn)
    for _, _, ref_id, kind in events:
        rows = run_rows_digest(conn, tables, ref_id) if kind == "run" else None
        append_entry(
            conn,
            tables,
            kind=kind,
            ref_id=ref_id,
            recorded_at=recorded_at,
            rows=rows,
            backfilled=True,
            locked=True,
            chain_format=chain_format,
        )
    return len(events)
