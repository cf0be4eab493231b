"""The store's schema lifecycle: opening a database, checking or creating the schema, upgrading it.

Pure module (no pytest). ``StoreBase`` holds the URL, the engine and the chain key that every part
of :class:`~pytest_screeneval.store.database.Store` uses, and the one way a database error leaves
a store method (``guarded``: one ``StoreError`` sentence). ``upgrade`` brings an older database to
this version's schema with Alembic (imported only then).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, Self, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, CursorResult

from pytest_screeneval.errors import ScreenevalError, StoreError
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.chain.payloads import CHAIN_KEY_ENV
from pytest_screeneval.store.connect import (
    DEFAULT_BUSY_TIMEOUT,
    WRITE,
    describe,
    make_engine,
    mask_url,
    parse_url,
    sqlite_path,
    store_error,
    write_transaction,
)

__all__ = [
    "ALLOW_FOREIGN_ENV",
    "MIGRATIONS_DIR",
    "SCHEMA_REVISION",
    "StoreBase",
    "chain_key_from_env",
    "check_run_id",
    "guarded",
    "inserted_id",
    "upgrade",
    "utc_now",
]

SCHEMA_REVISION = t.SCHEMA_REVISION
# Set to 1 to let the store add its tables to a database another application already uses.
ALLOW_FOREIGN_ENV = "SCREENEVAL_DB_ALLOW_FOREIGN"
# the largest id an INTEGER column holds on both backends (SQLite raises OverflowError above it)
_MAX_ID = 2**63 - 1
# PostgreSQL advisory lock key serialising schema creation and golden-set syncs.
_PG_LOCK_KEY = 0x5C4EE7A1


def inserted_id(result: CursorResult[Any]) -> int:
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


_P = ParamSpec("_P")
_R = TypeVar("_R")


def guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Database errors leave a Store method as one StoreError sentence, never a traceback."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        store = args[0]
        assert isinstance(store, StoreBase)
        try:
            return method(*args, **kwargs)
        except ScreenevalError:
            raise
        except sa.exc.SQLAlchemyError as exc:
            raise store._error(exc) from None

    return wrapper


class StoreBase:
    """One database URL, its engine and its schema: what every part of the store shares.

    Use :class:`~pytest_screeneval.store.database.Store` (``Store.open``), which is made of this
    and the parts that read and write the records."""

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
    ) -> Self:
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

    def __enter__(self) -> Self:
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

    @guarded
    def schema_revision(self) -> str | None:
        """The Alembic revision the database is at, read without importing Alembic."""
        with self.engine.connect() as conn:
            return _read_revision(conn)

    @guarded
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
        if revision != SCHEMA_REVISION and revision not in known_revisions():
            # written by a newer version: `db upgrade` cannot go forward to what it never knew
            raise StoreError(
                f"The store at {self.masked_url} has schema revision {revision}, which this "
                f"pytest-screeneval (schema {SCHEMA_REVISION}) does not know: a "
                "newer version wrote it, so `screeneval db upgrade` cannot help; install that "
                "version (pip install -U pytest-screeneval) or use another store."
            )
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

    def _refuse_unkeyed_append(self, conn: Connection) -> None:
        """Refuse to extend a keyed chain without its key: the entry would be unkeyed, and a
        key holder's verify would rightly call that a re-write."""
        _, _, head_key = store_chain.chain_head(conn)
        if head_key is not None and self.chain_key is None:
            raise StoreError(
                f"The audit chain of {self.masked_url} is keyed (key id {head_key}); set "
                f"{CHAIN_KEY_ENV} to record in it."
            )


def check_run_id(run_id: int, where: str) -> None:
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


MIGRATIONS_DIR = Path(__file__).with_name("migrations")


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every schema revision this version's migrations know (read from their files, so that
    opening a store never imports Alembic)."""
    found: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        match = re.search(r'^revision: str = "([^"]+)"', path.read_text(encoding="utf-8"), re.M)
        if match:
            found.add(match.group(1))
    return frozenset(found | {SCHEMA_REVISION})


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
