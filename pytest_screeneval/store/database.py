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

import functools
import json
import os
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, CursorResult

from pytest_screeneval.errors import GoldenSetError, ScreenevalError, StoreError
from pytest_screeneval.golden.model import (
    Case,
    Expectation,
    GoldenSet,
    Rubric,
    Variants,
    canonical_json,
    sha256_text,
)
from pytest_screeneval.scoring.protocol import ScorerIdentity
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.chain.payloads import CHAIN_KEY_ENV, ChainReport
from pytest_screeneval.store.connect import (
    DEFAULT_BUSY_TIMEOUT,
    DEFAULT_DB_FILENAME,
    WRITE,
    default_url,
    describe,
    make_engine,
    mask_url,
    parse_url,
    sqlite_path,
    store_error,
    write_transaction,
)
from pytest_screeneval.store.docs import (
    attributes_from_doc,
    case_fields,
    rubric_from_doc,
    shown_date,
    to_json,
    variants_doc,
    variants_from_doc,
)
from pytest_screeneval.store.values import (
    Acceptance,
    Review,
    RunRecord,
    ScoreRow,
    SyncReport,
    review_from_row,
    run_record,
    score_row,
    score_values,
)

__all__ = [
    "ALLOW_FOREIGN_ENV",
    "DEFAULT_BUSY_TIMEOUT",
    "DEFAULT_DB_FILENAME",
    "DEFAULT_STALE_HOURS",
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

SCHEMA_REVISION = t.SCHEMA_REVISION
# Set to 1 to let the store add its tables to a database another application already uses.
ALLOW_FOREIGN_ENV = "SCREENEVAL_DB_ALLOW_FOREIGN"
FINISHED_STATUSES = ("complete", "partial", "interrupted")
# the largest id an INTEGER column holds on both backends (SQLite raises OverflowError above it)
_MAX_ID = 2**63 - 1
# A 'running' run started on another host is taken as abandoned after this long.
DEFAULT_STALE_HOURS = 24.0
# PostgreSQL advisory lock key serialising schema creation and golden-set syncs.
_PG_LOCK_KEY = 0x5C4EE7A1


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


def _inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of the one row an INSERT just wrote."""
    key = result.inserted_primary_key
    assert key is not None  # only None for statements that are not an INSERT
    return int(key[0])


def chain_key_from_env() -> bytes | None:
    """The chain key from ``SCREENEVAL_CHAIN_KEY`` (its UTF-8 bytes), None when unset or empty."""
    value = os.environ.get(CHAIN_KEY_ENV, "")
    return value.encode("utf-8") if value else None


def utc_now() -> str:
    """Now as ISO-8601 text in UTC: sorts as text and reads back identically on every backend."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


# --------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Database errors leave a Store method as one StoreError sentence, never a traceback."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        store = args[0]
        assert isinstance(store, Store)
        try:
            return method(*args, **kwargs)
        except ScreenevalError:
            raise
        except sa.exc.SQLAlchemyError as exc:
            raise store._error(exc) from None

    return wrapper


class Store:
    """The run store at one database URL. Open it with :meth:`Store.open`."""

    def __init__(
        self,
        url: str,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        chain_key: bytes | None = None,
        read_only: bool = False,
    ) -> None:
        # use Store.open: it also checks the schema
        self.url = url
        # the key that HMACs new chain entries and checks keyed ones (SCREENEVAL_CHAIN_KEY)
        self.chain_key = chain_key if chain_key is not None else chain_key_from_env()
        self.masked_url = mask_url(url)
        self.busy_timeout = busy_timeout
        self._parsed = parse_url(url)
        self.dialect = self._parsed.get_backend_name()
        self.read_only = read_only
        self.engine = make_engine(self._parsed, busy_timeout=busy_timeout, read_only=read_only)

    # ---- opening ----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        url: str,
        *,
        create: bool = True,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        chain_key: bytes | None = None,
        read_only: bool = False,
    ) -> Store:
        """Open the store; an empty database gets the schema when ``create`` is true.

        ``read_only`` (never creates) is for the commands that only read: see ``make_engine``.

        Raises StoreError (one sentence) when the database is unreachable, locked, not a
        database, full, or at another schema revision.
        """
        parsed = parse_url(url)
        path = sqlite_path(parsed) if parsed.get_backend_name() == "sqlite" else None
        if path is not None:
            if create and not read_only:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(
                        f"Cannot create the folder {path.parent} for the SQLite store "
                        f"({exc.strerror})."
                    ) from None
            elif not path.exists():
                raise StoreError(f"There is no SQLite store at {path}.")
        store = cls(url, busy_timeout=busy_timeout, chain_key=chain_key, read_only=read_only)
        try:
            store._check_schema(create=create and not read_only)
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.masked_url!r})"

    def _error(self, exc: Exception) -> StoreError:
        return store_error(exc, self._parsed, busy_timeout=self.busy_timeout)

    def _lock(self, conn: Connection) -> None:
        """Serialise schema creation and syncs (on SQLite, BEGIN IMMEDIATE already does)."""
        if self.dialect == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})

    @_guarded
    def schema_revision(self) -> str | None:
        """The Alembic revision the database is at, read without importing Alembic."""
        with self.engine.connect() as conn:
            return _read_revision(conn)

    @_guarded
    def _check_schema(self, *, create: bool) -> None:
        with self.engine.connect() as conn:
            revision = _read_revision(conn)
            if revision is None:
                # before any write: another application's tables are never ours in the making
                self._refuse_foreign_tables(conn)
                if not create:
                    self._refuse_unstamped(conn)
        if revision is None and not create:
            raise StoreError(
                f"The store at {self.masked_url} has no screeneval schema yet; run "
                f"`screeneval db upgrade --db {self.masked_url}` to create it."
            )
        if revision is None:
            # Decided under the lock that creation holds: a process creating the schema right
            # now is waited for, and what it made is then seen whole. Read outside the lock,
            # its tables could be seen without the revision it stamped a moment later, and the
            # store refused as another tool's.
            with write_transaction(self.engine) as conn:
                self._lock(conn)
                revision = _read_revision(conn)
                if revision is None:
                    self._refuse_unstamped(conn)
                    t.metadata.create_all(conn)
                    t.alembic_version.create(conn)
                    conn.execute(t.alembic_version.insert().values(version_num=SCHEMA_REVISION))
                    return
        if revision != SCHEMA_REVISION:
            raise StoreError(
                f"The store at {self.masked_url} has schema revision {revision}, this "
                f"pytest-screeneval needs {SCHEMA_REVISION}: run "
                f"`screeneval db upgrade --db {self.masked_url}`."
            )

    def _refuse_foreign_tables(self, conn: Connection) -> None:
        foreign = _foreign_tables(conn)
        if foreign and os.environ.get(ALLOW_FOREIGN_ENV, "").strip() not in ("1", "true"):
            shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
            raise StoreError(
                f"The database {self.masked_url} already holds another application's tables "
                f"({shown}); point the store at a database of its own, or set "
                f"{ALLOW_FOREIGN_ENV}=1 to add the screeneval tables beside them."
            )

    def _refuse_unstamped(self, conn: Connection) -> None:
        if _our_tables(conn):
            raise StoreError(
                f"The store at {self.masked_url} has screeneval tables but no schema "
                "revision, so another tool made them; use another database."
            )

    # ---- golden set ------------------------------------------------------------------------

    @_guarded
    def sync_golden_set(self, golden: GoldenSet, *, now: str | None = None) -> SyncReport:
        """Store the golden set; refuse it whole if any frozen case's text changed."""
        now = now or utc_now()
        synced_at = utc_now()
        with write_transaction(self.engine) as conn:
            self._lock(conn)
            self._refuse_unkeyed_append(conn)
            before = store_chain.golden_state(conn, store_chain.STORE_GOLDEN_TABLES)
            stored = {row.case_id: row for row in conn.execute(sa.select(t.cases))}
            _refuse_changed_texts(golden.cases, stored)

            self._store_rubric(conn, golden.rubric, synced_at)
            self._store_variants(conn, golden.variants, synced_at)

            added: list[str] = []
            unchanged: list[str] = []
            retired: list[str] = []
            updated: list[str] = []
            new_cases: list[dict[str, Any]] = []
            tracked: list[Case] = []  # cases whose expectations and ratings are kept current
            for case in golden.cases:
                row = stored.get(case.id)
                if row is None:
                    new_cases.append(
                        {
                            "case_id": case.id,
                            "rubric_id": case.rubric,
                            "input_text": case.input_text,
                            "input_sha256": case.input_sha256,
                            "frozen_at": now,
                            "retired_at": case.retired_at,
                            "retired_by": _file_retirer(case) if case.retired_at else None,
                            **case_fields(case),
                        }
                    )
                    added.append(case.id)
                    if case.retired_at:
                        retired.append(case.id)
                    tracked.append(case)
                    continue
                if row.retired_at is not None:
                    retired.append(case.id)  # stays retired whatever the file says
                    continue
                if case.retired_at is not None:
                    conn.execute(
                        t.cases.update()
                        .where(t.cases.c.case_id == case.id)
                        .values(retired_at=case.retired_at, retired_by=_file_retirer(case))
                    )
                    retired.append(case.id)
                    continue
                unchanged.append(case.id)
                tracked.append(case)
                fields = case_fields(case)
                if any(getattr(row, name) != value for name, value in fields.items()):
                    conn.execute(
                        t.cases.update().where(t.cases.c.case_id == case.id).values(**fields)
                    )
                    updated.append(case.id)
            if new_cases:
                conn.execute(t.cases.insert(), new_cases)
            new_ids = set(added)
            expectations_changed = self._sync_expectations(conn, tracked, new_ids, synced_at)
            ratings_changed = self._sync_ratings(conn, tracked, new_ids, synced_at)
            synced_ids = {case.id for case in golden.cases}
            missing = sorted(
                case_id
                for case_id, row in stored.items()
                if case_id not in synced_ids and row.retired_at is None
            )
            store_chain.append_golden(
                conn,
                store_chain.STORE_TABLES,
                before=before,
                reason=f"a sync of the golden set {golden.root}".rstrip(),
                recorded_at=synced_at,
                key=self.chain_key,
            )
        return SyncReport(
            added=tuple(added),
            unchanged=tuple(unchanged),
            expectations_changed=tuple(expectations_changed),
            ratings_changed=tuple(ratings_changed),
            retired=tuple(retired),
            updated=tuple(updated),
            missing=tuple(missing),
        )

    def _store_rubric(self, conn: Connection, rubric: Rubric, synced_at: str) -> None:
        key = (t.rubrics.c.rubric_id == rubric.id) & (t.rubrics.c.sha == rubric.sha)
        found = conn.execute(t.rubrics.update().where(key).values(synced_at=synced_at)).rowcount
        if not found:
            conn.execute(
                t.rubrics.insert().values(
                    rubric_id=rubric.id,
                    sha=rubric.sha,
                    version=rubric.version,
                    body=canonical_json(rubric.as_dict()),
                    stored_at=synced_at,
                    synced_at=synced_at,
                )
            )

    def _store_variants(self, conn: Connection, variants: Variants, synced_at: str) -> None:
        body = to_json(variants_doc(variants))
        sha = sha256_text(body)
        found = conn.execute(
            t.variants.update().where(t.variants.c.sha == sha).values(synced_at=synced_at)
        ).rowcount
        if not found:
            conn.execute(
                t.variants.insert().values(
                    sha=sha, body=body, stored_at=synced_at, synced_at=synced_at
                )
            )

    def _sync_expectations(
        self, conn: Connection, tracked: Sequence[Case], new_ids: set[str], recorded_at: str
    ) -> list[str]:
        current = _latest_expectations(conn, [c.id for c in tracked if c.id not in new_ids])
        rows: list[dict[str, Any]] = []
        changed: list[str] = []
        for case in tracked:
            before = len(rows)
            for criterion, expectation in case.expected.items():
                if current.get((case.id, criterion)) != expectation:
                    rows.append(
                        {
                            "case_id": case.id,
                            "criterion": criterion,
                            "expected": expectation.score,
                            "set_by": expectation.set_by,
                            "set_at": expectation.set_at,
                            "recorded_at": recorded_at,
                        }
                    )
            if len(rows) > before and case.id not in new_ids:
                changed.append(case.id)
        if rows:
            conn.execute(t.expectations.insert(), rows)
        return changed

    def _sync_ratings(
        self, conn: Connection, tracked: Sequence[Case], new_ids: set[str], recorded_at: str
    ) -> list[str]:
        current = _latest_ratings(conn, [c.id for c in tracked if c.id not in new_ids])
        rows: list[dict[str, Any]] = []
        changed: list[str] = []
        for case in tracked:
            before = len(rows)
            wanted = {
                (criterion, rater): score
                for criterion, raters in case.ratings.items()
                for rater, score in raters.items()
            }
            stored = current.get(case.id, {})
            for (criterion, rater), score in wanted.items():
                if stored.get((criterion, rater)) != score:
                    rows.append(_rating_row(case.id, criterion, rater, score, recorded_at))
            for criterion, rater in stored:
                if (criterion, rater) not in wanted:  # withdrawn from the file: a NULL row
                    rows.append(_rating_row(case.id, criterion, rater, None, recorded_at))
            if len(rows) > before and case.id not in new_ids:
                changed.append(case.id)
        if rows:
            conn.execute(t.ratings.insert(), rows)
        return changed

    @_guarded
    def frozen_cases(self) -> dict[str, tuple[str, str]]:
        """Every stored case (retired too): case id → (input sha256, frozen at)."""
        with self.engine.connect() as conn:
            return {
                row.case_id: (row.input_sha256, row.frozen_at)
                for row in conn.execute(
                    sa.select(t.cases.c.case_id, t.cases.c.input_sha256, t.cases.c.frozen_at)
                )
            }

    @_guarded
    def load_golden_set(self) -> GoldenSet:
        """The golden set as the store holds it: the latest rubric and variants, every case of
        that rubric (retired ones keep ``retired_at``), with current expectations and ratings."""
        with self.engine.connect() as conn:
            body = conn.execute(
                sa.select(t.rubrics.c.body)
                .order_by(t.rubrics.c.synced_at.desc(), t.rubrics.c.stored_at.desc())
                .limit(1)
            ).scalar()
            if body is None:
                raise GoldenSetError(
                    f"The store at {self.masked_url} holds no golden set yet; run "
                    f"`screeneval cases import DIR --db {self.masked_url}` first."
                )
            rubric = rubric_from_doc(json.loads(body))
            variants_body = conn.execute(
                sa.select(t.variants.c.body)
                .order_by(t.variants.c.synced_at.desc(), t.variants.c.id.desc())
                .limit(1)
            ).scalar()
            variants = variants_from_doc(json.loads(variants_body)) if variants_body else Variants()
            case_rows = conn.execute(
                sa.select(t.cases).where(t.cases.c.rubric_id == rubric.id)
            ).all()
            ids = [row.case_id for row in case_rows]
            expected = _latest_expectations(conn, ids)
            ratings = _latest_ratings(conn, ids)
            # a golden set edited in the database is refused before anything is scored with it
            edited = store_chain.golden_break(conn)
        for row in case_rows:
            if sha256_text(row.input_text) != row.input_sha256:
                raise GoldenSetError(
                    f"Case {row.case_id} in the store at {self.masked_url} was frozen with input "
                    f"sha256 {row.input_sha256[:12]} but its stored text now has sha256 "
                    f"{sha256_text(row.input_text)[:12]}: the text was edited in the database, "
                    "so it is not scored."
                )
        if edited is not None:
            raise GoldenSetError(
                f"The golden set in the store at {self.masked_url} was changed outside "
                f"pytest-screeneval, so it is not scored: {edited}."
            )
        cases: list[Case] = []
        for row in sorted(case_rows, key=lambda r: (r.label, r.case_id)):
            case_expected: dict[str, Expectation] = {}
            for name in rubric.criterion_names:
                expectation = expected.get((row.case_id, name))
                if expectation is None:
                    if row.retired_at is None:
                        raise GoldenSetError(
                            f"Case {row.case_id} in the store at {self.masked_url} has no "
                            f"expected score for {name!r}; import its case file again."
                        )
                    continue
                case_expected[name] = expectation
            case_ratings: dict[str, dict[str, int]] = {}
            for (criterion, rater), score in ratings.get(row.case_id, {}).items():
                if criterion in case_expected:
                    case_ratings.setdefault(criterion, {})[rater] = score
            cases.append(
                Case(
                    id=row.case_id,
                    label=row.label,
                    rubric=row.rubric_id,
                    input_text=row.input_text,
                    expected=case_expected,
                    slices=tuple(json.loads(row.slices)),
                    ratings=case_ratings,
                    attributes=attributes_from_doc(json.loads(row.attributes)),
                    demographics=json.loads(row.demographics),
                    xfail=json.loads(row.xfail),
                    retired_at=row.retired_at,
                    source=row.source,
                )
            )
        return GoldenSet(rubric=rubric, variants=variants, cases=tuple(cases), root=self.masked_url)

    @_guarded
    def get_rubric(self, rubric_id: str, sha: str | None = None) -> Rubric | None:
        """A stored rubric by id and sha (the latest synced one of that id without a sha)."""
        query = sa.select(t.rubrics.c.body).where(t.rubrics.c.rubric_id == rubric_id)
        if sha is not None:
            query = query.where(t.rubrics.c.sha == sha)
        query = query.order_by(t.rubrics.c.synced_at.desc(), t.rubrics.c.stored_at.desc())
        with self.engine.connect() as conn:
            body = conn.execute(query.limit(1)).scalar()
        return rubric_from_doc(json.loads(body)) if body is not None else None

    @_guarded
    def retire_case(self, case_id: str, *, by: str, at: str | None = None) -> None:
        """Take a case out of service for good (its rows and past scores stay)."""
        if not by.strip():
            raise StoreError(f"Retiring case {case_id} needs the name of who retires it.")
        with write_transaction(self.engine) as conn:
            self._refuse_unkeyed_append(conn)
            before = store_chain.golden_state(conn, store_chain.STORE_GOLDEN_TABLES)
            row = conn.execute(
                sa.select(t.cases.c.retired_at, t.cases.c.retired_by).where(
                    t.cases.c.case_id == case_id
                )
            ).first()
            if row is None:
                raise StoreError(f"There is no case {case_id} in the store at {self.masked_url}.")
            if row.retired_at is not None:
                raise StoreError(
                    f"Case {case_id} was already retired on {shown_date(row.retired_at)} "
                    f"by {row.retired_by or 'its case file'}."
                )
            conn.execute(
                t.cases.update()
                .where(t.cases.c.case_id == case_id)
                .values(retired_at=at or utc_now(), retired_by=by)
            )
            store_chain.append_golden(
                conn,
                store_chain.STORE_TABLES,
                before=before,
                reason=f"the retirement of case {case_id} by {by}",
                recorded_at=utc_now(),
                key=self.chain_key,
            )

    # ---- runs ----------------------------------------------------------------------------

    @_guarded
    def start_run(
        self,
        *,
        identity: ScorerIdentity,
        rubric_id: str,
        golden_sha: str,
        plugin_version: str,
        vcs_commit: str | None,
        notes: str = "",
        baseline_run_id: int | None = None,
        selection: str = "",
        config: Mapping[str, object] | None = None,
    ) -> int:
        """Record a new run as 'running' and return its id, with the chain position of the
        golden set as it is now (the set the run is about to score)."""
        with write_transaction(self.engine) as conn:
            self._refuse_unkeyed_append(conn)
            result = conn.execute(
                t.runs.insert().values(
                    scorer=identity.name,
                    model_id=identity.model_id,
                    served_model=None,
                    prompt_sha=identity.prompt_sha,
                    rubric_id=rubric_id,
                    rubric_sha=identity.rubric_sha,
                    temperature=float(identity.temperature),
                    golden_sha=golden_sha,
                    status="running",
                    started_at=utc_now(),
                    finished_at=None,
                    plugin_version=plugin_version,
                    vcs_commit=vcs_commit,
                    notes=notes,
                    baseline_run_id=baseline_run_id,
                    selection=selection,
                    config=canonical_json(dict(config or {})),
                    host=socket.gethostname(),
                    pid=os.getpid(),
                    golden_seq=store_chain.golden_seq(conn),
                )
            )
            return _inserted_id(result)

    @_guarded
    def write_scores(self, rows: Sequence[ScoreRow]) -> None:
        """Write a batch of score rows; only runs still 'running' take rows.

        Idempotent per item: a row for a (run, case, variant, repeat, criterion) already stored
        is replaced, so a case re-run after its xdist worker crashed neither collides with the
        rows the dead worker wrote nor duplicates them. The batch goes in one transaction; if
        the database refuses it anyway, each case is written in a transaction of its own so
        one case's refusal cannot drop another case's rows, and the refused cases are named.
        """
        if not rows:
            return
        try:
            self._write_scores(rows)
        except sa.exc.IntegrityError:
            by_case: dict[str, list[ScoreRow]] = {}
            for row in rows:
                by_case.setdefault(row.case_id, []).append(row)
            if len(by_case) == 1:
                raise
            refused: list[str] = []
            first: sa.exc.IntegrityError | None = None
            for case_id, case_rows in by_case.items():
                try:
                    self._write_scores(case_rows)
                except sa.exc.IntegrityError as exc:
                    refused.append(case_id)
                    first = first or exc
            if first is not None:
                raise StoreError(
                    f"The store {self.masked_url} refused the score rows of case(s) "
                    f"{', '.join(refused)} ({str(first.orig).splitlines()[0]}); the other cases' "
                    "rows of the batch are stored."
                ) from None

    def _write_scores(self, rows: Sequence[ScoreRow]) -> None:
        run_ids = sorted({row.run_id for row in rows})
        with write_transaction(self.engine) as conn:
            # FOR SHARE (PostgreSQL): a concurrent finish_run waits for this batch, and this
            # batch, if it came second, sees the run finished and is refused; so a finished
            # run's rows are exactly the rows its chain entry hashed
            query = (
                sa.select(t.runs.c.run_id, t.runs.c.status)
                .where(t.runs.c.run_id.in_(run_ids))
                .order_by(t.runs.c.run_id)
                .with_for_update(read=True)
            )
            statuses = {row.run_id: row.status for row in conn.execute(query)}
            for run_id in run_ids:
                if run_id not in statuses:
                    raise StoreError(f"There is no run {run_id} in {self.masked_url}.")
                if statuses[run_id] != "running":
                    raise StoreError(
                        f"Run {run_id} is {statuses[run_id]}, so no more scores can be "
                        "written to it."
                    )
            # one row per item: the last one given wins (as a later batch's would)
            unique = {_item_key(row): score_values(row) for row in rows}
            conn.execute(_upsert_scores(self.dialect), list(unique.values()))

    @_guarded
    def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        served_model: str | None = None,
        verdict: Mapping[str, Any] | None = None,
    ) -> None:
        """Close a running run as 'complete', 'partial' or 'interrupted' and chain it: its
        record (with the ``verdict``, the gates and crossings decided at the end, and what was
        missing) and all its score rows are hashed with the previous chain entry's hash."""
        if status not in FINISHED_STATUSES:
            raise StoreError(
                f"A run finishes as 'complete', 'partial' or 'interrupted', not {status!r} "
                f"(run {run_id})."
            )
        with write_transaction(self.engine) as conn:
            current = self._run_status(conn, run_id, for_update=True)
            if _is_accepted(conn, run_id):
                raise StoreError(f"Run {run_id} is accepted as a baseline and cannot be changed.")
            if current != "running":
                raise StoreError(f"Run {run_id} is already {current} and cannot be finished again.")
            conn.execute(
                t.runs.update()
                .where((t.runs.c.run_id == run_id) & (t.runs.c.status == "running"))
                .values(
                    status=status,
                    finished_at=utc_now(),
                    served_model=served_model,
                    verdict=None if verdict is None else to_json(dict(verdict)),
                )
            )
            self._chain_run(conn, run_id)

    @_guarded
    def mark_abandoned_runs(self, *, stale_hours: float = DEFAULT_STALE_HOURS) -> list[int]:
        """Mark as 'interrupted' the runs left 'running' by a process that is gone.

        On this host a run is abandoned when its process no longer exists; a run from another
        host when it started more than ``stale_hours`` ago (its process cannot be checked).
        """
        host = socket.gethostname()
        cutoff = datetime.now(UTC) - timedelta(hours=stale_hours)
        with write_transaction(self.engine) as conn:
            if store_chain.chain_head(conn)[2] is not None and self.chain_key is None:
                return []  # a keyed chain: left for a session that holds the key
            running = conn.execute(
                sa.select(t.runs.c.run_id, t.runs.c.host, t.runs.c.pid, t.runs.c.started_at).where(
                    t.runs.c.status == "running"
                )
            ).all()
            abandoned = [
                row.run_id
                for row in running
                if (row.host == host and not _process_alive(row.pid))
                or (row.host != host and _started_before(row.started_at, cutoff))
            ]
            marked: list[int] = []
            for run_id in sorted(abandoned):
                # one at a time: a run its process finished meanwhile is left alone (and chained
                # once, by that process)
                updated = conn.execute(
                    t.runs.update()
                    .where((t.runs.c.run_id == run_id) & (t.runs.c.status == "running"))
                    .values(status="interrupted", finished_at=utc_now())
                ).rowcount
                if updated:
                    self._chain_run(conn, run_id)
                    marked.append(run_id)
        return marked

    @_guarded
    def get_run(self, run_id: int) -> RunRecord:
        _check_run_id(run_id, self.masked_url)
        with self.engine.connect() as conn:
            found = self._select_runs(conn, sa.true(), run_id=run_id)
        if not found:
            raise StoreError(f"There is no run {run_id} in {self.masked_url}.")
        return found[0]

    @_guarded
    def list_runs(self, limit: int = 50) -> list[RunRecord]:
        """The latest runs, newest first."""
        with self.engine.connect() as conn:
            return self._select_runs(conn, sa.true(), limit=limit)

    @_guarded
    def scores(self, run_id: int) -> list[ScoreRow]:
        """A run's score rows, ordered by case, variant, repeat, criterion."""
        _check_run_id(run_id, self.masked_url)
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.scores).where(t.scores.c.run_id == run_id)).all()
        result = [score_row(row) for row in rows]
        # sorted here, not in SQL, so the order is the same whatever the server's collation
        result.sort(key=lambda r: (r.case_id, r.variant_key, r.repeat_index, r.criterion))
        return result

    @_guarded
    def baseline(self, rubric_id: str | None = None) -> RunRecord | None:
        """The latest accepted run (by accepted_at, then acceptance order), maybe per rubric."""
        with self.engine.connect() as conn:
            return self._baseline(conn, rubric_id)

    def _baseline(self, conn: Connection, rubric_id: str | None) -> RunRecord | None:
        query = (
            sa.select(t.acceptances.c.run_id)
            .join(t.runs, t.runs.c.run_id == t.acceptances.c.run_id)
            .order_by(t.acceptances.c.accepted_at.desc(), t.acceptances.c.id.desc())
            .limit(1)
        )
        if rubric_id is not None:
            query = query.where(t.runs.c.rubric_id == rubric_id)
        run_id = conn.execute(query).scalar()
        if run_id is None:
            return None
        return self._select_runs(conn, sa.true(), run_id=run_id)[0]

    @_guarded
    def accept(self, run_id: int, *, by: str, note: str = "", forced: bool = False) -> Acceptance:
        """Make a complete run the baseline, recording who, when, why and what it replaces.

        Compare-and-swap: the run is accepted only if the current baseline (of its rubric) is
        still the one it was judged against, read and replaced in one serialised transaction
        (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL), so of several concurrent
        acceptances judged against the same baseline exactly one wins. A partial run needs
        ``forced`` (with a note); an interrupted or running one is never accepted.
        """
        _check_run_id(run_id, self.masked_url)
        if not by.strip():
            raise StoreError(f"Accepting run {run_id} needs the name of who accepts it.")
        with write_transaction(self.engine) as conn:
            self._lock(conn)
            self._refuse_unkeyed_append(conn)
            status = self._run_status(conn, run_id)
            existing = conn.execute(
                sa.select(t.acceptances).where(t.acceptances.c.run_id == run_id)
            ).first()
            if existing is not None:
                raise StoreError(
                    f"Run {run_id} was already accepted by {existing.accepted_by} on "
                    f"{shown_date(existing.accepted_at)}."
                )
            if status == "interrupted":
                raise StoreError(f"run {run_id} was interrupted and can never become a baseline.")
            if status == "running":
                raise StoreError(
                    f"run {run_id} is still running; only a complete run can become a baseline."
                )
            if status == "partial" and not (forced and note.strip()):
                raise StoreError(
                    f"run {run_id} is partial (it stopped before every selected item ran and was "
                    "stored); only a complete run can become a baseline unless forced with a note."
                )
            rubric_id, judged_against = conn.execute(
                sa.select(t.runs.c.rubric_id, t.runs.c.baseline_run_id).where(
                    t.runs.c.run_id == run_id
                )
            ).one()
            previous = self._baseline(conn, rubric_id)
            current = previous.run_id if previous is not None else None
            if current != judged_against:
                against = f"baseline run {judged_against}" if judged_against else "no baseline"
                now = (
                    f"run {current} (accepted by {previous.accepted.accepted_by})"
                    if previous is not None and previous.accepted is not None
                    else "none"
                )
                raise StoreError(
                    f"Run {run_id} was not accepted: it was judged against {against}, but the "
                    f"baseline is now {now}; run it again against the current baseline."
                )
            acceptance = Acceptance(
                run_id=run_id,
                accepted_by=by,
                accepted_at=utc_now(),
                note=note,
                previous_baseline_run_id=previous.run_id if previous else None,
                forced=forced,
            )
            inserted = conn.execute(t.acceptances.insert().values(**asdict(acceptance)))
            store_chain.append_entry(
                conn,
                store_chain.STORE_TABLES,
                kind="acceptance",
                ref_id=_inserted_id(inserted),
                recorded_at=utc_now(),
                key=self.chain_key,
            )
        return acceptance

    # ---- reviews ---------------------------------------------------------------------------

    @_guarded
    def add_review(
        self,
        *,
        run_id: int,
        case_id: str,
        target: str,
        baseline_run_id: int,
        before: str,
        after: str,
        by: str,
        note: str,
    ) -> Review:
        """Record that a person read one movement of a case against a baseline."""
        if not by.strip():
            raise StoreError(f"A review of case {case_id} needs the name of who reviewed it.")
        review = Review(
            run_id=run_id,
            case_id=case_id,
            target=target,
            baseline_run_id=baseline_run_id,
            before=before,
            after=after,
            reviewed_by=by,
            reviewed_at=utc_now(),
            note=note,
        )
        _check_run_id(run_id, self.masked_url)
        _check_run_id(baseline_run_id, self.masked_url)
        with write_transaction(self.engine) as conn:
            self._refuse_unkeyed_append(conn)
            self._run_status(conn, run_id)
            self._run_status(conn, baseline_run_id)
            inserted = conn.execute(t.reviews.insert().values(**asdict(review)))
            store_chain.append_entry(
                conn,
                store_chain.STORE_TABLES,
                kind="review",
                ref_id=_inserted_id(inserted),
                recorded_at=utc_now(),
                key=self.chain_key,
            )
        return review

    @_guarded
    def reviews(
        self, *, baseline_run_id: int | None = None, run_id: int | None = None
    ) -> list[Review]:
        """Reviews, oldest first, optionally of one baseline and/or one run."""
        query = sa.select(t.reviews).order_by(t.reviews.c.id)
        if baseline_run_id is not None:
            query = query.where(t.reviews.c.baseline_run_id == baseline_run_id)
        if run_id is not None:
            query = query.where(t.reviews.c.run_id == run_id)
        with self.engine.connect() as conn:
            return [review_from_row(row) for row in conn.execute(query)]

    @_guarded
    def find_review(
        self, *, case_id: str, target: str, baseline_run_id: int, before: str, after: str
    ) -> Review | None:
        """The latest review of this same movement against this same baseline, if any."""
        query = (
            sa.select(t.reviews)
            .where(
                (t.reviews.c.case_id == case_id)
                & (t.reviews.c.target == target)
                & (t.reviews.c.baseline_run_id == baseline_run_id)
                & (t.reviews.c.before == before)
                & (t.reviews.c.after == after)
            )
            .order_by(t.reviews.c.id.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return review_from_row(row) if row is not None else None

    # ---- the audit chain ----------------------------------------------------------------

    @_guarded
    def verify_chain(self) -> ChainReport:
        """Walk the audit chain from its start, recompute every entry from the current rows, and
        report the first entry that no longer matches (or a record missing from the chain)."""
        with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                # one snapshot for the whole walk: a run finishing meanwhile is not a break
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                return store_chain.verify(conn, key=self.chain_key)

    @_guarded
    def chain_head(self) -> ChainHead:
        """The chain's last entry, as artefacts print it."""
        with self.engine.connect() as conn:
            seq, entry_hash, head_key = store_chain.chain_head(conn)
        return ChainHead(seq=seq, hash=entry_hash, key_id=head_key)

    @_guarded
    def scorer_errors(self, run_id: int) -> int:
        """How many of a run's score rows carry a scorer error."""
        _check_run_id(run_id, self.masked_url)
        query = (
            sa.select(sa.func.count())
            .select_from(t.scores)
            .where((t.scores.c.run_id == run_id) & t.scores.c.error.is_not(None))
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def _chain_run(self, conn: Connection, run_id: int) -> None:
        """Append a just-finished run's chain entry (in its finishing transaction)."""
        tables = store_chain.STORE_TABLES
        # hashed before taking the chain lock: other runs finishing need not wait for this read
        rows = store_chain.run_rows_digest(conn, tables, run_id)
        store_chain.append_entry(
            conn,
            tables,
            kind="run",
            ref_id=run_id,
            recorded_at=utc_now(),
            rows=rows,
            key=self.chain_key,
        )

    def _refuse_unkeyed_append(self, conn: Connection) -> None:
        """Refuse to extend a keyed chain without its key: the entry would be unkeyed, and a
        key holder's verify would rightly call that a re-write."""
        _, _, head_key = store_chain.chain_head(conn)
        if head_key is not None and self.chain_key is None:
            raise StoreError(
                f"The audit chain of {self.masked_url} is keyed (key id {head_key}); set "
                f"{CHAIN_KEY_ENV} to record in it."
            )

    # ---- reuse -----------------------------------------------------------------------------

    @_guarded
    def latest_complete_run(self, *, identity: ScorerIdentity) -> RunRecord | None:
        """The newest complete run of exactly this scorer identity (for reusing its scores)."""
        condition = (
            (t.runs.c.scorer == identity.name)
            & (t.runs.c.model_id == identity.model_id)
            & (t.runs.c.prompt_sha == identity.prompt_sha)
            & (t.runs.c.rubric_sha == identity.rubric_sha)
            & (t.runs.c.temperature == float(identity.temperature))
            & (t.runs.c.status == "complete")
        )
        with self.engine.connect() as conn:
            found = self._select_runs(conn, condition, limit=1)
        return found[0] if found else None

    # ---- helpers ---------------------------------------------------------------------------

    def _run_status(self, conn: Connection, run_id: int, *, for_update: bool = False) -> str:
        query = sa.select(t.runs.c.status).where(t.runs.c.run_id == run_id)
        if for_update:  # PostgreSQL: hold the run row until this transaction ends
            query = query.with_for_update()
        status = conn.execute(query).scalar()
        if status is None:
            raise StoreError(f"There is no run {run_id} in {self.masked_url}.")
        return str(status)

    def _select_runs(
        self,
        conn: Connection,
        condition: sa.ColumnElement[bool],
        *,
        run_id: int | None = None,
        limit: int | None = None,
    ) -> list[RunRecord]:
        query = (
            sa.select(t.runs, t.acceptances)
            .outerjoin(t.acceptances, t.acceptances.c.run_id == t.runs.c.run_id)
            .where(condition)
            .order_by(t.runs.c.run_id.desc())
        )
        if run_id is not None:
            query = query.where(t.runs.c.run_id == run_id)
        if limit is not None:
            query = query.limit(limit)
        return [run_record(row) for row in conn.execute(query).mappings()]


# --------------------------------------------------------------------------------------------
# Row helpers
# --------------------------------------------------------------------------------------------


def _check_run_id(run_id: int, where: str) -> None:
    """A run id no column can hold is a run that does not exist (not a driver overflow)."""
    if not 0 < run_id <= _MAX_ID:
        raise StoreError(f"There is no run {run_id} in {where}.")


def _read_revision(conn: Connection) -> str | None:
    if not sa.inspect(conn).has_table(t.ALEMBIC_VERSION_TABLE):
        return None
    return conn.execute(sa.select(t.alembic_version.c.version_num)).scalar() or "(none)"


def _foreign_tables(conn: Connection) -> list[str]:
    """Tables that are neither ours nor Alembic's: another application's database."""
    names = set(sa.inspect(conn).get_table_names())
    return sorted(names - set(t.metadata.tables) - {"alembic_version"})


def _our_tables(conn: Connection) -> list[str]:
    names = set(sa.inspect(conn).get_table_names())
    return sorted(names & set(t.metadata.tables))


def _refuse_changed_texts(cases: Iterable[Case], stored: Mapping[str, Any]) -> None:
    changed = [
        case
        for case in cases
        if (row := stored.get(case.id)) is not None
        and row.retired_at is None
        and case.retired_at is None
        and row.input_sha256 != case.input_sha256
    ]
    if not changed:
        return
    first = changed[0]
    row = stored[first.id]
    where = f"{first.path}: " if first.path else ""
    more = ""
    if len(changed) > 1:
        others = ", ".join(c.id for c in changed[1:6]) + (", ..." if len(changed) > 6 else "")
        more = f" ({len(changed) - 1} more changed case(s): {others})"
    raise GoldenSetError(
        f"{where}case {first.id} was frozen on {shown_date(row.frozen_at)} with input sha256 "
        f"{row.input_sha256[:12]} but its text now has sha256 {first.input_sha256[:12]}; "
        f"retire it (screeneval cases retire {first.id} --by NAME) and add the new text "
        f"under a new id{more}."
    )


def _file_retirer(case: Case) -> str:
    return f"case file {case.path}" if case.path else "case file"


def _latest_expectations(conn: Connection, case_ids: Sequence[str]) -> dict[Any, Expectation]:
    latest: dict[tuple[str, str], Expectation] = {}
    for chunk in _chunks(case_ids):
        rows = conn.execute(
            sa.select(t.expectations)
            .where(t.expectations.c.case_id.in_(chunk))
            .order_by(t.expectations.c.id)
        )
        for row in rows:
            latest[(row.case_id, row.criterion)] = Expectation(
                criterion=row.criterion, score=row.expected, set_by=row.set_by, set_at=row.set_at
            )
    return latest


def _latest_ratings(
    conn: Connection, case_ids: Sequence[str]
) -> dict[str, dict[tuple[str, str], int]]:
    latest: dict[str, dict[tuple[str, str], int | None]] = {}
    for chunk in _chunks(case_ids):
        rows = conn.execute(
            sa.select(t.ratings).where(t.ratings.c.case_id.in_(chunk)).order_by(t.ratings.c.id)
        )
        for row in rows:
            latest.setdefault(row.case_id, {})[(row.criterion, row.rater)] = row.score
    return {
        case_id: {key: score for key, score in by_key.items() if score is not None}
        for case_id, by_key in latest.items()
    }


def _chunks(values: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    # bounded IN lists: SQLite limits the number of bound parameters per statement
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _rating_row(
    case_id: str, criterion: str, rater: str, score: int | None, recorded_at: str
) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "criterion": criterion,
        "rater": rater,
        "score": score,
        "recorded_at": recorded_at,
    }


_ITEM_KEY = ("run_id", "case_id", "variant_key", "repeat_index", "criterion")


def _item_key(row: ScoreRow) -> tuple[object, ...]:
    return tuple(getattr(row, name) for name in _ITEM_KEY)


@functools.cache  # built once per dialect: its 20 excluded columns cost ~3 ms
def _upsert_scores(dialect: str) -> sa.Insert:
    """An INSERT of score rows that replaces a row already stored for the same item."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        statement: Any = pg_insert(t.scores)
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        statement = sqlite_insert(t.scores)
    else:  # no portable upsert: a duplicate is refused, per case (see write_scores)
        return t.scores.insert()
    replaced = {
        column.name: statement.excluded[column.name]
        for column in t.scores.c
        if column.name not in ("id", *_ITEM_KEY)
    }
    upsert: sa.Insert = statement.on_conflict_do_update(
        index_elements=list(_ITEM_KEY), set_=replaced
    )
    return upsert


def _is_accepted(conn: Connection, run_id: int) -> bool:
    query = sa.select(t.acceptances.c.id).where(t.acceptances.c.run_id == run_id)
    return conn.execute(query).first() is not None


def _process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


def _started_before(started_at: str, cutoff: datetime) -> bool:
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return False
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return started < cutoff


# --------------------------------------------------------------------------------------------
# Migrations
# --------------------------------------------------------------------------------------------

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def upgrade(url: str, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> tuple[str | None, str]:
    """Bring the database at ``url`` to this version's schema with Alembic.

    Returns (revision before, revision after). Used by ``screeneval db upgrade``.
    """
    from alembic import command  # imported here: opening a store must not pay for Alembic
    from alembic.config import Config
    from alembic.util import CommandError

    parsed = parse_url(url)
    path = sqlite_path(parsed) if parsed.get_backend_name() == "sqlite" else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = make_engine(parsed, busy_timeout=busy_timeout)
    where = describe(parsed)
    try:
        with engine.connect() as conn:
            before = _read_revision(conn)
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with engine.connect() as conn:
            sqlite = parsed.get_backend_name() == "sqlite"
            if sqlite:
                # SQLite's documented way to copy a table others refer to (revision 0003 copies
                # eval_runs to change its CHECK): foreign keys off outside the transaction, and
                # checked before it commits
                conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
            writing = conn.execution_options(**{WRITE: True})
            with writing.begin():
                config.attributes["connection"] = writing
                command.upgrade(config, "head")
                if sqlite and writing.exec_driver_sql("PRAGMA foreign_key_check").first():
                    raise StoreError(
                        f"Cannot upgrade the store {where}: a foreign key no longer holds after "
                        "the migration; nothing was changed."
                    )
        with engine.connect() as conn:
            after = _read_revision(conn) or SCHEMA_REVISION
    except CommandError as exc:
        raise StoreError(
            f"Cannot upgrade the store {where}: {str(exc).rstrip('.')} "
            "(was it written by a newer pytest-screeneval?)."
        ) from None
    except sa.exc.SQLAlchemyError as exc:
        raise store_error(exc, parsed, busy_timeout=busy_timeout) from None
    finally:
        engine.dispose()
    return before, after
