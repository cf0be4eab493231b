"""The spool: score rows the store could not take, kept on disk beside it until they are imported.

When a write still fails after its retries, its rows are appended here as JSON Lines and
fsync'd before the writer goes on, so an answer is never lost to a full disk, a lock or a dropped
connection. ``screeneval db recover`` imports them (one row per run, case, variant, repeat and
criterion, however often it runs) and removes each file once its rows are committed.

One folder per store: beside a SQLite file (``<file>.spool/``), or, for a server database, under
the project's ``.screeneval/`` (named by a hash of the URL without its password). One file per
run and process, so xdist workers never write into the same file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pytest_screeneval.errors import StoreError
from pytest_screeneval.store.connect import mask_url, parse_url, sqlite_path
from pytest_screeneval.store.values import ScoreRow

__all__ = ["Spool", "SpoolFile", "spool_dir"]

_FORMAT = 1
_KEY = ("run_id", "case_id", "variant_key", "repeat_index", "criterion")


def spool_dir(url: str, rootdir: Path) -> Path | None:
    """The spool folder of the store at ``url``; None for an in-memory SQLite database."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(parsed)
        return None if path is None else path.with_name(path.name + ".spool")
    digest = hashlib.sha256(mask_url(url).encode()).hexdigest()[:12]
    return Path(rootdir).resolve() / ".screeneval" / f"spool-{parsed.get_backend_name()}-{digest}"


@dataclass(frozen=True)
class SpoolFile:
    """One spool file and the rows it holds (the last line for an item wins)."""

    path: Path
    rows: tuple[ScoreRow, ...]
    unreadable_lines: int = 0


def _row_line(row: ScoreRow) -> str:
    document = asdict(row)
    document["evidence"] = list(row.evidence)
    document["format"] = _FORMAT
    # ASCII only: a lone surrogate from a scorer is kept as an escape, never a write error
    return json.dumps(document, ensure_ascii=True, sort_keys=True, allow_nan=False) + "\n"


def _line_row(line: str) -> ScoreRow:
    document = json.loads(line)
    document.pop("format", None)
    document["evidence"] = tuple(document.get("evidence") or ())
    return ScoreRow(**document)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Spool:
    """The spool folder of one store, written by one process."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def file_for(self, run_id: int) -> Path:
        return self.directory / f"run-{run_id}-pid-{os.getpid()}.jsonl"

    def append(self, rows: Sequence[ScoreRow]) -> Path:
        """Append the rows and fsync them; a spool that cannot be written is one sentence."""
        if not rows:
            return self.directory
        path = self.file_for(rows[0].run_id)
        data = "".join(_row_line(row) for row in rows).encode("ascii")
        try:
            created = not self.directory.exists()
            self.directory.mkdir(parents=True, exist_ok=True)
            if created:
                _fsync_dir(self.directory.parent)
            new_file = not path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            if new_file:
                _fsync_dir(self.directory)
        except OSError as exc:
            raise StoreError(
                f"Cannot write the spool file {path} either ({exc.strerror or exc}); "
                f"{len(rows)} score rows could be kept in memory only."
            ) from None
        return path

    def files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.glob("run-*.jsonl") if p.is_file())

    def read(self) -> Iterator[SpoolFile]:
        """Every spool file with its rows; a line cut off by a crash is counted, not fatal."""
        for path in self.files():
            rows: dict[tuple[object, ...], ScoreRow] = {}
            bad = 0
            with path.open(encoding="ascii", errors="replace") as handle:
                for line in handle:
                    if not line.strip():
                        continue
                    try:
                        row = _line_row(line)
                    except (ValueError, TypeError):
                        bad += 1
                        continue
                    rows[tuple(getattr(row, name) for name in _KEY)] = row
            yield SpoolFile(path, tuple(rows.values()), bad)

    def waiting(self, run_id: int) -> int:
        """How many distinct score rows of this run wait in the spool."""
        keys: set[tuple[object, ...]] = set()
        for spooled in self.read():
            keys.update(
                tuple(getattr(row, name) for name in _KEY)
                for row in spooled.rows
                if row.run_id == run_id
            )
        return len(keys)
