"""What every ``screeneval`` subcommand shares: the Command record, the store's URL, output."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_screeneval.boundary.secrets import remember, url_secrets
from pytest_screeneval.boundary.terminal import terminal_safe
from pytest_screeneval.cli.locate import DB_ENV, store_url
from pytest_screeneval.settings.validators import positive_int

if TYPE_CHECKING:
    from pytest_screeneval.store.database import Store

__all__ = [
    "DB_ENV",
    "Command",
    "open_store",
    "out",
    "resolve_db_url",
    "run_argument",
    "table",
    "when",
]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``words`` like ("cases", "import"), its arguments and what it runs."""

    words: tuple[str, ...]
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    group_help: dict[str, str] = field(default_factory=dict)


def resolve_db_url(args: argparse.Namespace) -> str:
    """The store by pytest's rule (``cli.locate``): --db, the ini's ``screeneval_db``,
    $SCREENEVAL_DB, else the default SQLite file under pytest's rootdir. Its password, and the
    API key in the environment, are secrets every line printed from here on is redacted of."""
    from pytest_screeneval.scoring.redact import scorer_secrets

    url = store_url(getattr(args, "db", None))
    remember(*url_secrets(url), *scorer_secrets(None))
    return url


def open_store(args: argparse.Namespace, *, create: bool = False, read_only: bool = False) -> Store:
    """The store; ``read_only`` for commands that only read, so a read-only copy works."""
    from pytest_screeneval.store.database import Store

    return Store.open(resolve_db_url(args), create=create, read_only=read_only)


def out(line: str = "") -> None:
    """Print one line: stored text (notes, names, server errors) must not drive the terminal
    or show a secret."""
    print(terminal_safe(line), file=sys.stdout)


def when(timestamp: str | None) -> str:
    """An ISO timestamp shortened for a table: date and minutes, in UTC."""
    if not timestamp:
        return "-"
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%MZ")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), *(line(row) for row in rows)]


def run_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", type=positive_int, help="the run id")
