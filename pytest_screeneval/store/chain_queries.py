"""The audit chain's queries: append an entry in the writer's transaction, walk and verify it.

The hashing is in :mod:`pytest_screeneval.store.chain`; this module reads the rows it hashes
and writes ``eval_chain``. The tables come in as a :class:`ChainTables` so that the migration which
introduced the chain (revision 0002) can backfill with its own snapshot of the tables, and keep
working when later revisions change them.

Appends are serialised: on PostgreSQL by a transaction-scoped advisory lock taken just before the
last entry is read, on SQLite by the writer's ``BEGIN IMMEDIATE``. The primary key on ``seq`` and
the unique ``prev_hash`` refuse a fork even if that lock were ever skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import (
    FIELDS,
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
    "STORE_TABLES",
    "ChainTables",
    "append_entry",
    "backfill",
    "current_record",
    "lock_chain",
    "run_rows_digest",
    "verify",
]

# PostgreSQL advisory lock key serialising chain appends (the store's other lock is 0x5C4EE7A1).
CHAIN_LOCK_KEY = 0x5C4EE7A2
FINISHED = ("complete", "interrupted")


@dataclass(frozen=True)
class ChainTables:
    """The tables the chain reads and writes (any table objects with these columns)."""

    runs: sa.TableClause
    scores: sa.TableClause
    acceptances: sa.TableClause
    reviews: sa.TableClause
    chain: sa.TableClause

    def of(self, kind: str) -> tuple[sa.TableClause, sa.ColumnElement[Any]]:
        """The table of a kind of record and its id column."""
        if kind == "run":
            return self.runs, self.runs.c.run_id
        if kind == "acceptance":
            return self.acceptances, self.acceptances.c.id
        return self.reviews, self.reviews.c.id


STORE_TABLES = ChainTables(
    runs=t.runs, scores=t.scores, acceptances=t.acceptances, reviews=t.reviews, chain=t.chain
)


def lock_chain(conn: Connection) -> None:
    """Hold the chain for this transaction (PostgreSQL; SQLite writers are serialised already)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": CHAIN_LOCK_KEY})


def current_record(conn: Connection, tables: ChainTables, kind: str, ref_id: int) -> str | None:
    """The canonical JSON of a run, acceptance or review as it is now; None if it is gone."""
    table, id_column = tables.of(kind)
    columns = [table.c[name] for name in FIELDS[kind]]
    row = conn.execute(sa.select(*columns).where(id_column == ref_id)).mappings().first()
    return record_json(kind, row) if row is not None else None


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
) -> ChainEntry:
    """Append the entry of a record as it is now in ``conn``'s transaction (read back, so the
    hash covers exactly what later reads will see). ``rows`` is the digest of a run's rows."""
    record = current_record(conn, tables, kind, ref_id)
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
    )
    conn.execute(tables.chain.insert().values(**_entry_values(entry)))
    return entry


def _entry_values(entry: ChainEntry) -> dict[str, Any]:
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
        )


def verify(conn: Connection, tables: ChainTables = STORE_TABLES) -> ChainReport:
    """Walk the chain from its start against the current rows, then look for records that
    should be in it and are not (a run finished, or an acceptance or review added, by hand)."""

    def now(entry: ChainEntry) -> Current:
        record = current_record(conn, tables, entry.kind, entry.ref_id)
        rows = None
        if record is not None and entry.kind == "run":
            rows = run_rows_digest(conn, tables, entry.ref_id)
        return Current(record=record, rows=rows)

    entries = list(_entries(conn, tables))
    report = check_entries(entries, now)
    if not report.ok:
        return report
    chained = {(entry.kind, entry.ref_id) for entry in entries}
    for kind, ref_id, record in _records_to_chain(conn, tables):
        if (kind, ref_id) not in chained:
            return ChainReport(
                ok=False,
                entries=report.entries,
                first_break=unchained_break(kind, ref_id, record),
                last_hash=report.last_hash,
                backfilled=report.backfilled,
            )
    return report


def _records_to_chain(
    conn: Connection, tables: ChainTables
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Every record that belongs in the chain: finished runs, acceptances, reviews (by id)."""
    runs, acceptances, reviews = tables.runs, tables.acceptances, tables.reviews
    for row in conn.execute(
        sa.select(runs.c.run_id).where(runs.c.status.in_(FINISHED)).order_by(runs.c.run_id)
    ):
        yield "run", int(row.run_id), {}
    for row in conn.execute(
        sa.select(acceptances.c.id, acceptances.c.run_id).order_by(acceptances.c.id)
    ):
        yield "acceptance", int(row.id), {"run_id": row.run_id}
    for row in conn.execute(
        sa.select(reviews.c.id, reviews.c.run_id, reviews.c.case_id, reviews.c.target).order_by(
            reviews.c.id
        )
    ):
        yield "review", int(row.id), dict(row._mapping)


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


def backfill(conn: Connection, tables: ChainTables, *, recorded_at: str) -> int:
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
    for row in conn.execute(sa.select(acceptances.c.id, acceptances.c.accepted_at)):
        events.append((_moment(row.accepted_at), 1, row.id, "acceptance"))
    for row in conn.execute(sa.select(reviews.c.id, reviews.c.reviewed_at)):
        events.append((_moment(row.reviewed_at), 2, row.id, "review"))
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
        )
    return len(events)
