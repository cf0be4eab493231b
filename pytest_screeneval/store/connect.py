"""Connecting to the run store: URLs, engines, SQLite pragmas, and database errors in one sentence.

Kept apart from the queries (``lifecycle.py``, ``golden_sync.py``, ``runs.py``) so that the
migration command and the store share one way to open a database, and so every driver error is
worded once, here.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import StaticPool

from pytest_screeneval.boundary.secrets import mask_urls
from pytest_screeneval.errors import StoreError, StoreUnavailable

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "DEFAULT_DB_FILENAME",
    "WRITE",
    "default_url",
    "describe",
    "is_transient",
    "make_engine",
    "mask_url",
    "missing_sqlite_folder",
    "parse_url",
    "sqlite_path",
    "store_error",
    "write_transaction",
]

DEFAULT_DB_FILENAME = ".screeneval/screeneval.db"
# Seconds a SQLite writer waits for another writer before giving up with a clear sentence.
DEFAULT_BUSY_TIMEOUT = 5.0
# Execution option marking a transaction that will write: on SQLite it starts BEGIN IMMEDIATE,
# so a writer queues for the lock up front instead of failing half-way through a read-then-write.
WRITE = "screeneval_write"


def default_url(rootdir: Path) -> str:
    """``sqlite:///<rootdir>/.screeneval/screeneval.db`` (the folder is created on open)."""
    return f"sqlite:///{(Path(rootdir).resolve() / DEFAULT_DB_FILENAME).as_posix()}"


def mask_url(url: str) -> str:
    """The URL with its password replaced by ``***``, safe to print in messages and reports:
    the userinfo's, and a ``?password=`` query parameter's, which SQLAlchemy leaves as is."""
    try:
        rendered = make_url(url).render_as_string(hide_password=True)
    except Exception:
        # not a URL SQLAlchemy can parse: still never print what looks like a password
        rendered = url
    return mask_urls(rendered)


def parse_url(url: str) -> URL:
    """Parse a store URL; a bare ``postgresql://`` means the psycopg (3) driver we depend on."""
    try:
        parsed = make_url(url)
    except Exception:
        raise StoreError(
            f"{mask_url(url)!r} is not a database URL "
            "(expected e.g. sqlite:///path/screeneval.db or postgresql://user@host/db)."
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(
            f"The store URL {mask_url(url)} names {parsed.get_backend_name()}, but "
            "pytest-screeneval keeps its runs in SQLite or PostgreSQL only."
        )
    return parsed


def sqlite_path(parsed: URL) -> Path | None:
    """The file of a SQLite URL, or None for an in-memory database."""
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def missing_sqlite_folder(url: str) -> Path | None:
    """The folder of a SQLite store that does not exist yet (opening the store creates it);
    None for another backend, an existing folder, or a URL ``Store.open`` will refuse itself."""
    try:
        parsed = parse_url(url)
    except StoreError:
        return None  # Store.open says why, in its own sentence
    path = sqlite_path(parsed) if parsed.get_backend_name() == "sqlite" else None
    if path is None or path.parent.exists():
        return None
    return path.parent


def describe(parsed: URL) -> str:
    """How messages name a store: the SQLite file, or the masked URL."""
    path = sqlite_path(parsed) if parsed.get_backend_name() == "sqlite" else None
    return str(path) if path is not None else mask_url(parsed.render_as_string(hide_password=False))


def make_engine(
    parsed: URL, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT, read_only: bool = False
) -> Engine:
    """An engine for the store; SQLite gets WAL, ``synchronous=NORMAL``, foreign keys, a timeout.

    ``read_only`` (the commands that only read: runs, show, diff, report, verify) opens a SQLite
    file with ``mode=ro`` and leaves its journal mode alone, so an auditor can read a copy they
    may not write; PostgreSQL sessions start with ``default_transaction_read_only``.
    """
    backend = parsed.get_backend_name()
    try:
        if backend == "sqlite":
            path = sqlite_path(parsed)
            kwargs: dict[str, Any] = {
                "connect_args": {"timeout": busy_timeout, "check_same_thread": False}
            }
            if path is None:
                kwargs["poolclass"] = StaticPool
            elif read_only:
                kwargs["creator"] = _read_only_sqlite(path, busy_timeout)
            engine = sa.create_engine(parsed, **kwargs)
            on_connect = _sqlite_on_connect_read_only if read_only else _sqlite_on_connect
            event.listen(engine, "connect", on_connect)
            event.listen(engine, "begin", _sqlite_on_begin)
            return engine
        if backend == "postgresql":
            connect_args: dict[str, Any] = {"connect_timeout": 10}
            if read_only:
                # added to the URL's own options (a search_path, say), which this replaces
                given = parsed.query.get("options", "")
                given = given if isinstance(given, str) else " ".join(given)
                connect_args["options"] = f"{given} -c default_transaction_read_only=on".strip()
            return sa.create_engine(parsed, connect_args=connect_args)
        return sa.create_engine(parsed)
    except ModuleNotFoundError as exc:
        raise StoreError(
            f"The store {describe(parsed)} needs the Python package {exc.name!r}, which is not "
            "installed: install pytest-screeneval[postgres]."
        ) from None
    except sa.exc.NoSuchModuleError:
        raise StoreError(
            f"The store URL {describe(parsed)} names an unknown database dialect "
            f"{parsed.drivername!r}; use sqlite:/// or postgresql://."
        ) from None


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # SQLAlchemy emits BEGIN itself (see _sqlite_on_begin); the driver must not.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # WAL lets readers and one writer work at once; NORMAL keeps every committed batch
        # across a process crash (only an OS crash can lose the last commits).
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _read_only_sqlite(path: Path, busy_timeout: float) -> Callable[[], Any]:
    """A connection factory opening ``path`` read-only.

    ``mode=ro`` still needs to create the ``-shm`` file of a WAL database, which a read-only
    folder forbids; a file or folder nobody may write cannot change under us either, so it is
    opened ``immutable`` (no locks, no shared memory).
    """
    resolved = path.resolve()
    writable = os.access(resolved, os.W_OK) and os.access(resolved.parent, os.W_OK)
    flags = "mode=ro" if writable else "mode=ro&immutable=1"
    uri = f"file:{quote(resolved.as_posix())}?{flags}"

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(uri, uri=True, timeout=busy_timeout, check_same_thread=False)

    return connect


def _sqlite_on_connect_read_only(dbapi_connection: Any, _record: Any) -> None:
    # no journal-mode switch: that is a write, and the file may be someone else's copy
    dbapi_connection.isolation_level = None


def _sqlite_on_begin(connection: Connection) -> None:
    immediate = connection.get_execution_options().get(WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction that will write: committed on success, rolled back on any error."""
    with engine.connect() as connection:
        connection = connection.execution_options(**{WRITE: True})
        with connection.begin():
            yield connection


# --------------------------------------------------------------------------------------------
# Driver errors, worded for people
# --------------------------------------------------------------------------------------------


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip()
    first = text.splitlines()[0].strip() if text else type(orig).__name__
    return first.rstrip(".")


def store_error(exc: Exception, parsed: URL, *, busy_timeout: float) -> StoreError:
    """Translate a SQLAlchemy/driver error into one sentence naming the store.

    A fault of the database's state (a lost connection, a lock, a full disk) is a
    :class:`StoreUnavailable`, which a writer may retry; a refusal of the write itself is not.
    """
    error = _store_error(exc, parsed, busy_timeout=busy_timeout)
    if is_transient(exc):
        return StoreUnavailable(str(error))
    return error


def is_transient(exc: BaseException) -> bool:
    """Whether the same statement may succeed later: the database was unreachable, locked,
    full or read-only, rather than refusing the values themselves."""
    if getattr(exc, "connection_invalidated", False):
        return True
    transient = (
        sa.exc.OperationalError,
        sa.exc.InterfaceError,
        sa.exc.DisconnectionError,
        sa.exc.TimeoutError,
    )
    return isinstance(exc, transient)


def _store_error(exc: Exception, parsed: URL, *, busy_timeout: float) -> StoreError:
    where = describe(parsed)
    reason = _reason(exc)
    lowered = reason.lower()
    backend = parsed.get_backend_name()
    sqlstate = getattr(getattr(exc, "orig", None), "sqlstate", None) or ""
    if backend == "sqlite":
        if "database is locked" in lowered or "database table is locked" in lowered:
            return StoreError(
                f"The SQLite store {where} is locked by another process; waited "
                f"{busy_timeout:g} s for it, try again when the other run has finished."
            )
        if "not a database" in lowered:
            return StoreError(
                f"The file {where} is not a SQLite database; point the store at another file."
            )
        if "unable to open database file" in lowered:
            return StoreError(
                f"Cannot open the SQLite store {where}; check that its folder exists "
                "and is writable."
            )
    if "disk is full" in lowered or "no space left" in lowered or sqlstate == "53100":
        return StoreError(
            f"The store {where} is out of space ({reason}); free some space and run again, "
            "nothing already committed is lost."
        )
    if "readonly" in lowered or "read-only" in lowered or sqlstate == "25006":
        return StoreError(f"The store {where} is read-only ({reason}); it cannot record runs.")
    if backend == "postgresql" and _is_connection_failure(lowered):
        address = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
        cause, advice = _connection_cause(str(getattr(exc, "orig", exc)))
        return StoreError(f"Cannot reach the PostgreSQL store at {address} ({cause}); {advice}.")
    if isinstance(exc, sa.exc.IntegrityError):
        return StoreError(f"The store {where} refused a write ({reason}).")
    return StoreError(f"The store {where} failed: {reason}.")


def _is_connection_failure(lowered: str) -> bool:
    return any(
        sign in lowered
        for sign in (
            "connection failed",
            "connection refused",
            "connection to server",
            "timeout expired",
            "timed out",
            "resolve host",
            "translate host name",
            "name or service not known",
        )
    )


def _connection_cause(message: str) -> tuple[str, str]:
    """Why a PostgreSQL connection failed, and what to do about it."""
    lowered = message.lower()
    check_server = "check that the server is running and the URL's host and port are right"
    if "connection refused" in lowered:
        return "connection refused", check_server
    if "timeout expired" in lowered or "timed out" in lowered:
        return "connection timed out", check_server
    if "resolve host" in lowered or "translate host name" in lowered or "not known" in lowered:
        return "unknown host name", "check the host in the URL"
    role = re.search(r'role "([^"]+)" does not exist', message)
    if role:
        return f"role {role.group(1)!r} does not exist", "check the user in the URL"
    if "does not exist" in lowered:
        found = re.search(r'database "([^"]+)" does not exist', message)
        what = f"database {found.group(1)!r}" if found else "the database"
        return f"{what} does not exist", "create it or fix the database name in the URL"
    if "authentication" in lowered or "password" in lowered:
        return "authentication failed", "check the user and password in the URL"
    tail = message.strip().splitlines()[0]
    return tail.split("failed:", 1)[-1].strip().rstrip(".") or "connection failed", check_server
