"""The run store: the golden set as frozen, and every run as an audit record.

Pure module (no pytest). SQLite by default, PostgreSQL for teams; both through SQLAlchemy Core.
What the store promises:

* a case's text is frozen by its sha256 the first time it is stored; a changed text under the
  same id is refused as a whole (nothing written) and the user retires the id instead;
* expectations and ratings are history: a change is a new row, the latest row is current;
* score rows are written in batches as they arrive, each batch in one transaction, so an
  interrupted run keeps everything it committed and is marked ``interrupted``;
* an accepted run (and its scores) is never modified again, and an interrupted run is never
  accepted;
* every finished run, acceptance and review, and every change to the golden set, appends an
  entry to the audit chain (``eval_chain``) in the same transaction, HMAC-ed when a chain key is
  set (``SCREENEVAL_CHAIN_KEY``); :meth:`Store.verify_chain` recomputes the chain from the rows;
* a run is ``complete`` only when the session says every selected item ran and every row is
  stored, else ``partial`` (or ``interrupted``); score writes are idempotent per item, so a
  re-run of a crashed worker's case replaces its rows instead of colliding with them;
* acceptance is compare-and-swap: a run is accepted only while the baseline it was judged
  against is still the current one.

Every database error leaves a :class:`~pytest_screeneval.errors.StoreError` of one sentence.
"""

from __future__ import annotations

from pytest_screeneval.store.chain.payloads import ChainReport
from pytest_screeneval.store.chain_reads import ChainHead, ChainReads
from pytest_screeneval.store.connect import (
    DEFAULT_BUSY_TIMEOUT,
    DEFAULT_DB_FILENAME,
    default_url,
    mask_url,
)
from pytest_screeneval.store.golden_sync import GoldenSetRecords
from pytest_screeneval.store.lifecycle import (
    ALLOW_FOREIGN_ENV,
    MIGRATIONS_DIR,
    SCHEMA_REVISION,
    upgrade,
    utc_now,
)
from pytest_screeneval.store.runs import DEFAULT_STALE_HOURS, RunRecords
from pytest_screeneval.store.values import Acceptance, Review, RunRecord, ScoreRow, SyncReport

__all__ = [
    "ALLOW_FOREIGN_ENV",
    "DEFAULT_BUSY_TIMEOUT",
    "DEFAULT_DB_FILENAME",
    "DEFAULT_STALE_HOURS",
    "MIGRATIONS_DIR",
    "SCHEMA_REVISION",
    "Acceptance",
    "ChainHead",
    "ChainReport",
    "Review",
    "RunRecord",
    "ScoreRow",
    "Store",
    "SyncReport",
    "default_url",
    "mask_url",
    "upgrade",
    "utc_now",
]


class Store(GoldenSetRecords, RunRecords, ChainReads):
    """The run store at one database URL. Open it with :meth:`Store.open`.

    One object over one engine, made of its parts, each one job: the schema lifecycle
    (``store.lifecycle``), the golden set (``store.golden_sync``), runs, scores, acceptances and
    reviews (``store.runs``) and the audit chain's reads (``store.chain_reads``).
    """
