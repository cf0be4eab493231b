"""A store fault injector for tests: the Nth score write fails, the disk fills, the connection
drops, on SQLite and on PostgreSQL.

:func:`install` hooks SQLAlchemy's ``Engine`` class, so every store a process opens is covered
(a ``pytest --screeneval`` run gets it from a line in its conftest). What to break is read from a
small JSON plan file at every statement, so a test can start or end an outage while the run goes
on::

    {"kind": "fail-nth", "at": 3, "times": 2}     # the 3rd and 4th score writes fail
    {"kind": "disk-full", "at": 2, "seconds": 3}  # from the 2nd score write, writes fail for 3 s
    {"kind": "drop", "at": 1, "seconds": null}     # from the 1st score write, connection gone
    {"kind": "lost-ack", "at": 2, "table": "eval_chain"}  # the 2nd chain write commits unheard

``at`` counts score writes (batches into ``eval_scores``) of this process; with ``"table"`` it
counts (and ``fail-nth`` fails) the writes into that table instead, e.g.
``{"kind": "fail-nth", "table": "eval_rationale_judgements", "at": 1, "times": null}``.
``seconds`` (or ``times``) bound the outage; null means for good. A failure is the driver's own
exception with the database's own wording, raised where the driver would raise it, so
SQLAlchemy, the store and the plugin see what they would see in production:

- ``fail-nth``: that write fails once (an I/O error on SQLite, a closed connection on PostgreSQL);
- ``disk-full``: every write fails as the database does when its disk is full (reads work);
- ``drop``: the connection is lost: on PostgreSQL the server really terminates this session
  (``pg_terminate_backend``) and new connections are refused while the outage lasts; on SQLite
  the file cannot be opened. Reads fail too;
- ``lost-ack`` (PostgreSQL only: a local SQLite file has no connection to lose between a commit
  and its answer): the write's transaction really commits, then the server ends the session
  before the client hears so, and the commit fails as a lost connection. The writer cannot tell
  it from a commit that never happened, so its retry meets its own committed write.

A plan file that is missing or says ``{"kind": "none"}`` changes nothing. Every fault injected is
appended to ``<plan>.log`` (one line each), so a test can check that its fault really happened.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FAULT_KINDS", "FaultPlan", "injected", "install", "uninstall", "write_plan"]

FAULT_KINDS = ("fail-nth", "disk-full", "drop", "lost-ack")
_WRITES = ("insert", "update", "delete")


@dataclass(frozen=True)
class FaultPlan:
    kind: str = "none"
    at: int = 1
    times: int | None = 1  # fail-nth, lost-ack: how many counted writes in a row fail; None: all
    seconds: float | None = None  # disk-full, drop: how long the outage lasts; None: for good
    table: str = "eval_scores"  # the writes ``at`` counts and ``fail-nth`` fails

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))


def write_plan(path: Path, plan: FaultPlan) -> None:
    """Write the plan atomically (a run reads it at every statement)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(plan.as_json(), encoding="utf-8")
    temporary.replace(path)


class _Injector:
    def __init__(self, plan_path: Path) -> None:
        self.plan_path = plan_path
        self.log_path = plan_path.with_name(plan_path.name + ".log")
        self.lock = threading.Lock()
        self.counted_writes = 0
        self.outage_started: float | None = None
        self.failed_writes = 0
        # connections whose next commit is to commit and then lose its answer (lost-ack)
        self.unheard_commits: set[int] = set()

    def plan(self) -> FaultPlan:
        try:
            document = json.loads(self.plan_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return FaultPlan()
        if not isinstance(document, dict) or document.get("kind") not in FAULT_KINDS:
            return FaultPlan()
        return FaultPlan(
            kind=str(document["kind"]),
            at=int(document.get("at") or 1),
            times=document.get("times", 1),
            seconds=document.get("seconds"),
            table=str(document.get("table") or "eval_scores"),
        )

    def _log(self, what: str) -> None:
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(what + "\n")

    def _in_outage(self, plan: FaultPlan) -> bool:
        if self.outage_started is None:
            return False
        if plan.seconds is None:
            return True
        return time.monotonic() - self.outage_started < plan.seconds

    # -- the events ---------------------------------------------------------------------------

    def before_execute(self, conn: Any, statement: str, dialect: str) -> None:
        plan = self.plan()
        if plan.kind == "none":
            return
        lowered = statement.lstrip().lower()
        counted = lowered.startswith(f"insert into {plan.table.lower()} ")  # the plan's table
        is_write = lowered.startswith(_WRITES)
        with self.lock:
            if counted:
                self.counted_writes += 1
                if self.counted_writes == plan.at:
                    self.outage_started = time.monotonic()
            if plan.kind in ("fail-nth", "lost-ack"):
                if not counted or self.outage_started is None:
                    return
                if plan.times is not None and self.failed_writes >= plan.times:
                    return
                self.failed_writes += 1
                if plan.kind == "lost-ack":
                    if dialect == "postgresql":
                        self.unheard_commits.add(id(conn))
                    return
                fail = True
            elif plan.kind == "disk-full":
                fail = is_write and self._in_outage(plan)
            else:  # drop
                fail = self._in_outage(plan)
            if not fail:
                return
            self._log(f"{plan.kind} {dialect} write {self.counted_writes}: {lowered[:40]}")
        _raise(plan.kind, conn, dialect)

    def before_commit(self, conn: Any, dialect: str) -> None:
        """A lost-ack write: commit it for real, then end the server's session, so that the
        commit the client goes on to ask for fails as a lost connection."""
        with self.lock:
            if id(conn) not in self.unheard_commits:
                return
            self.unheard_commits.discard(id(conn))
            self._log(f"lost-ack {dialect} write {self.counted_writes}: committed, answer lost")
        raw = conn.connection.dbapi_connection
        raw.commit()
        import psycopg

        with suppress(psycopg.Error):
            raw.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    def before_connect(self, dialect: str) -> None:
        plan = self.plan()
        if plan.kind == "drop" and self._in_outage(plan):
            self._log(f"drop {dialect} connect refused")
            _raise_connect(dialect)


def _raise(kind: str, conn: Any, dialect: str) -> None:
    if dialect == "sqlite":
        import sqlite3

        message = {
            "fail-nth": "disk I/O error",
            "disk-full": "database or disk is full",
            "drop": "unable to open database file",
        }[kind]
        raise sqlite3.OperationalError(message)
    import psycopg

    if kind == "disk-full":
        raise psycopg.errors.DiskFull(
            'could not extend file "base/16384/16385": No space left on device'
        )
    if kind == "drop":
        # the server really ends this session: the statement then fails as it would
        raw = conn.connection.dbapi_connection
        # "terminating connection due to administrator command": what we want
        with suppress(psycopg.Error):
            raw.execute("SELECT pg_terminate_backend(pg_backend_pid())")
    raise psycopg.OperationalError("server closed the connection unexpectedly")


def _raise_connect(dialect: str) -> None:
    if dialect == "sqlite":
        import sqlite3

        raise sqlite3.OperationalError("unable to open database file")
    import psycopg

    raise psycopg.OperationalError(
        'connection failed: connection to server at "127.0.0.1", port 5432 failed: '
        "Connection refused"
    )


_installed: dict[Path, tuple[Callable[..., None], ...]] = {}


def install(plan_path: Path) -> None:
    """Break every store of this process as the plan file says (idempotent per path)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    plan_path = Path(plan_path)
    if plan_path in _installed:
        return
    injector = _Injector(plan_path)

    def before_cursor_execute(
        conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        injector.before_execute(conn, statement, conn.dialect.name)

    def do_connect(dialect: Any, conn_rec: Any, cargs: Any, cparams: Any) -> None:
        injector.before_connect(dialect.name)

    def commit(conn: Any) -> None:
        injector.before_commit(conn, conn.dialect.name)

    event.listen(Engine, "before_cursor_execute", before_cursor_execute)
    event.listen(Engine, "do_connect", do_connect)
    event.listen(Engine, "commit", commit)
    _installed[plan_path] = (before_cursor_execute, do_connect, commit)


def uninstall(plan_path: Path) -> None:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    listeners = _installed.pop(Path(plan_path), None)
    if listeners is not None:
        for name, listener in zip(
            ("before_cursor_execute", "do_connect", "commit"), listeners, strict=True
        ):
            event.remove(Engine, name, listener)


@contextmanager
def injected(plan_path: Path, plan: FaultPlan) -> Iterator[Path]:
    """Within the block, this process's stores fail as ``plan`` says (a test of the store)."""
    write_plan(plan_path, plan)
    install(plan_path)
    try:
        yield plan_path
    finally:
        uninstall(plan_path)
