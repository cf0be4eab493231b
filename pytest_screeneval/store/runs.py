"""Runs, their score rows, acceptances and reviews in the store.

Pure module (no pytest). Score rows are written in batches as they arrive, each batch in one
transaction, idempotent per item; a run is closed ``complete``, ``partial`` or ``interrupted``
and chained with its rows in that transaction; acceptance is compare-and-swap against the
baseline the run was judged against; an accepted run is never modified again.
"""

from __future__ import annotations

import functools
import json
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from pytest_screeneval.errors import StoreError
from pytest_screeneval.golden.model import canonical_json
from pytest_screeneval.scoring.protocol import ScorerIdentity
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.connect import write_transaction
from pytest_screeneval.store.docs import (
    shown_date,
    to_json,
)
from pytest_screeneval.store.lifecycle import (
    StoreBase,
    check_run_id,
    guarded,
    inserted_id,
    utc_now,
)
from pytest_screeneval.store.values import (
    Acceptance,
    Review,
    RunRecord,
    ScoreRow,
    review_from_row,
    run_record,
    score_row,
    score_values,
)

__all__ = ["DEFAULT_STALE_HOURS", "FINISHED_STATUSES", "RunRecords"]

FINISHED_STATUSES = ("complete", "partial", "interrupted")
# A 'running' run started on another host is taken as abandoned after this long.
DEFAULT_STALE_HOURS = 24.0


class RunRecords(StoreBase):
    """Runs, score rows, acceptances and reviews (a part of ``Store``)."""

    @guarded
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
            return inserted_id(result)

    @guarded
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

    @guarded
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
        verdict_text = None if verdict is None else to_json(dict(verdict))
        with write_transaction(self.engine) as conn:
            current = self._run_status(conn, run_id, for_update=True)
            if current == status and _closed_with(conn, run_id, served_model, verdict_text):
                # The same close committed before, and its answer was lost on the way back (a
                # network store): the writer's retry finds its own write, which is done once.
                return
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
                    verdict=verdict_text,
                )
            )
            if not (verdict or {}).get("rows_waiting"):
                # else chained by `screeneval db recover`, with the rows waiting in the spool
                self._chain_run(conn, run_id)

    @guarded
    def mark_abandoned_runs(
        self,
        *,
        stale_hours: float = DEFAULT_STALE_HOURS,
        waiting: Callable[[int], int] | None = None,
    ) -> list[int]:
        """Mark as 'interrupted' the runs left 'running' by a process that is gone.

        On this host a run is abandoned when its process no longer exists; a run from another
        host when it started more than ``stale_hours`` ago (its process cannot be checked).
        ``waiting(run_id)``: its score rows in the spool; such a run is chained only once
        ``screeneval db recover`` has imported them.
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
                spooled = waiting(run_id) if waiting is not None else 0
                values: dict[str, Any] = {"status": "interrupted", "finished_at": utc_now()}
                if spooled:
                    values["verdict"] = to_json({"rows_waiting": spooled})
                updated = conn.execute(
                    t.runs.update()
                    .where((t.runs.c.run_id == run_id) & (t.runs.c.status == "running"))
                    .values(**values)
                ).rowcount
                if updated:
                    if not spooled:
                        self._chain_run(conn, run_id)
                    marked.append(run_id)
        return marked

    @guarded
    def import_spooled(self, run_id: int, rows: Sequence[ScoreRow]) -> str:
        """Store rows kept in the spool for a run, one per item however often; returns the
        run's status. A run still 'running' (its process gone) takes them and ends as
        'interrupted'; a run closed while they waited ('partial' or 'interrupted', unchained)
        takes them; either is chained now, with every row. A run chained without them cannot
        take them: one sentence."""
        with write_transaction(self.engine) as conn:
            status = self._run_status(conn, run_id, for_update=True)
            record = conn.execute(
                sa.select(t.runs.c.verdict, t.runs.c.pid, t.runs.c.host).where(
                    t.runs.c.run_id == run_id
                )
            ).one()
            waiting = store_chain.rows_waiting(record.verdict)
            if status == "running":
                if record.host == socket.gethostname() and _process_alive(record.pid):
                    raise StoreError(
                        f"Run {run_id} is still running (process {record.pid}); import its "
                        "spooled rows once it has ended."
                    )
            elif not waiting:
                raise StoreError(
                    f"Run {run_id} is {status} and was chained without these rows, so they "
                    "cannot be added to it; the spool file is kept."
                )
            unique = {_item_key(row): score_values(row) for row in rows}
            if unique:
                conn.execute(_upsert_scores(self.dialect), list(unique.values()))
            verdict = dict(json.loads(record.verdict)) if record.verdict else {}
            verdict.pop("rows_waiting", None)
            verdict["rows_recovered"] = len(unique)
            values: dict[str, Any] = {"verdict": to_json(verdict)}
            if status == "running":  # its process is gone: it ends now, as interrupted
                status = "interrupted"
                values |= {"status": status, "finished_at": utc_now()}
            conn.execute(t.runs.update().where(t.runs.c.run_id == run_id).values(**values))
            self._chain_run(conn, run_id)
            return status

    @guarded
    def get_run(self, run_id: int) -> RunRecord:
        check_run_id(run_id, self.masked_url)
        with self.engine.connect() as conn:
            found = self._select_runs(conn, sa.true(), run_id=run_id)
        if not found:
            raise StoreError(f"There is no run {run_id} in {self.masked_url}.")
        return found[0]

    @guarded
    def list_runs(self, limit: int = 50) -> list[RunRecord]:
        """The latest runs, newest first."""
        with self.engine.connect() as conn:
            return self._select_runs(conn, sa.true(), limit=limit)

    @guarded
    def scores(self, run_id: int) -> list[ScoreRow]:
        """A run's score rows, ordered by case, variant, repeat, criterion."""
        check_run_id(run_id, self.masked_url)
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.scores).where(t.scores.c.run_id == run_id)).all()
        result = [score_row(row) for row in rows]
        # sorted here, not in SQL, so the order is the same whatever the server's collation
        result.sort(key=lambda r: (r.case_id, r.variant_key, r.repeat_index, r.criterion))
        return result

    @guarded
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

    @guarded
    def accept(self, run_id: int, *, by: str, note: str = "", forced: bool = False) -> Acceptance:
        """Make a complete run the baseline, recording who, when, why and what it replaces.

        Compare-and-swap: the run is accepted only if the current baseline (of its rubric) is
        still the one it was judged against, read and replaced in one serialised transaction
        (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL), so of several concurrent
        acceptances judged against the same baseline exactly one wins. A partial run needs
        ``forced`` (with a note); an interrupted or running one is never accepted.
        """
        check_run_id(run_id, self.masked_url)
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
                ref_id=inserted_id(inserted),
                recorded_at=utc_now(),
                key=self.chain_key,
            )
        return acceptance

    # ---- reviews ---------------------------------------------------------------------------

    @guarded
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
        check_run_id(run_id, self.masked_url)
        check_run_id(baseline_run_id, self.masked_url)
        with write_transaction(self.engine) as conn:
            self._refuse_unkeyed_append(conn)
            self._run_status(conn, run_id)
            self._run_status(conn, baseline_run_id)
            inserted = conn.execute(t.reviews.insert().values(**asdict(review)))
            store_chain.append_entry(
                conn,
                store_chain.STORE_TABLES,
                kind="review",
                ref_id=inserted_id(inserted),
                recorded_at=utc_now(),
                key=self.chain_key,
            )
        return review

    @guarded
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

    @guarded
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

    @guarded
    def scorer_errors(self, run_id: int) -> int:
        """How many of a run's score rows carry a scorer error."""
        check_run_id(run_id, self.masked_url)
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

    @guarded
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


def _closed_with(
    conn: Connection, run_id: int, served_model: str | None, verdict_text: str | None
) -> bool:
    """Whether the run was closed with exactly these values (its status is checked apart)."""
    query = sa.select(t.runs.c.served_model, t.runs.c.verdict).where(t.runs.c.run_id == run_id)
    row = conn.execute(query).one()
    return bool(row.served_model == served_model and row.verdict == verdict_text)


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
