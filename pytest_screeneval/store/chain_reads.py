"""Reading the audit chain through the store: verify it, and its head as artefacts print it.

Pure module (no pytest). The chain itself (payloads, queries, the golden set's entries, the
anchor) is :mod:`pytest_screeneval.store.chain`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.chain.payloads import ChainReport
from pytest_screeneval.store.lifecycle import StoreBase, guarded

__all__ = ["ChainHead", "ChainReads"]


@dataclass(frozen=True)
class ChainHead:
    """The chain's last entry: what an artefact prints so a copy kept elsewhere can anchor it."""

    seq: int
    hash: str
    key_id: str | None  # the id of the chain key that HMAC-ed it, None when unkeyed

    def as_dict(self) -> dict[str, object]:
        return {"seq": self.seq, "hash": self.hash, "key_id": self.key_id}

    def __str__(self) -> str:
        keyed = f", keyed {self.key_id}" if self.key_id else ""
        return f"entry {self.seq} {self.hash}{keyed}"


class ChainReads(StoreBase):
    """The audit chain as the store reads it (a part of ``Store``)."""

    @guarded
    def verify_chain(self) -> ChainReport:
        """Walk the audit chain from its start, recompute every entry from the current rows, and
        report the first entry that no longer matches (or a record missing from the chain)."""
        with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                # one snapshot for the whole walk: a run finishing meanwhile is not a break
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                return store_chain.verify(conn, key=self.chain_key)

    @guarded
    def chain_head(self) -> ChainHead:
        """The chain's last entry, as artefacts print it."""
        with self.engine.connect() as conn:
            seq, entry_hash, head_key = store_chain.chain_head(conn)
        return ChainHead(seq=seq, hash=entry_hash, key_id=head_key)
