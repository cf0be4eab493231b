"""Bias audits on historical data in the store: each one recorded with the export's sha256, rows
and dates, and chained in the same transaction, so ``screeneval verify`` names a record changed
afterwards (schema revision 0004).

The audit's figures are not stored: they are recomputed from the export, and the recorded hash
says whether the file given again is the one that was audited.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from pytest_screeneval.errors import StoreError
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.connect import write_transaction

if TYPE_CHECKING:
    from pytest_screeneval.store.database import Store

__all__ = ["HistoricalRecord", "historical_audits", "record_historical_audit"]


@dataclass(frozen=True)
class HistoricalRecord:
    """One recorded historical audit (``id`` is None until it is stored)."""

    file_name: str
    file_sha256: str
    file_format: str
    file_size: int
    rows: int
    applicants: int
    bad_rows: int
    first_date: str | None
    last_date: str | None
    columns: str  # canonical JSON: how the export was read
    run_id: int | None
    audited_by: str
    audited_at: str
    audit_date: str
    valid_until: str
    id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def record_historical_audit(store: Store, record: HistoricalRecord) -> HistoricalRecord:
    """Store ``record`` and its chain entry in one transaction; the stored record, with its id."""
    values = {k: v for k, v in record.as_dict().items() if k != "id"}
    try:
        with write_transaction(store.engine) as conn:
            store._refuse_unkeyed_append(conn)
            if record.run_id is not None:
                found = conn.execute(
                    sa.select(t.runs.c.run_id).where(t.runs.c.run_id == record.run_id)
                ).first()
                if found is None:
                    raise StoreError(f"There is no run {record.run_id} in {store.masked_url}.")
            inserted = conn.execute(t.historical_audits.insert().values(**values))
            key = inserted.inserted_primary_key
            assert key is not None
            audit_id = int(key[0])
            store_chain.append_entry(
                conn,
                store_chain.STORE_TABLES,
                kind="historical",
                ref_id=audit_id,
                recorded_at=record.audited_at,
                key=store.chain_key,
            )
    except sa.exc.SQLAlchemyError as exc:
        raise store._error(exc) from None
    return dataclasses.replace(record, id=audit_id)


def historical_audits(store: Store, *, sha256: str | None = None) -> list[HistoricalRecord]:
    """The recorded historical audits, oldest first (of one file's hash, when given)."""
    table = t.historical_audits
    query = sa.select(table).order_by(table.c.id)
    if sha256 is not None:
        query = query.where(table.c.file_sha256 == sha256)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
    except sa.exc.SQLAlchemyError as exc:
        raise store._error(exc) from None
    names = {f.name for f in dataclasses.fields(HistoricalRecord)}
    return [HistoricalRecord(**{k: v for k, v in row.items() if k in names}) for row in rows]
