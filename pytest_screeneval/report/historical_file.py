"""Reading an export of the screener's real use (CSV or JSON Lines) into a historical audit,
streamed: one row in memory at a time, the file's sha256 computed from the same bytes as they
are read, so the hash recorded is the hash of exactly what was audited.

CSV: a header row names the columns; line numbers are the file's own (a quoted field spanning
lines counts every line). JSON Lines: one JSON object per line; blank lines are skipped. A
mapped column missing from the CSV header is refused before any row is read (one sentence
naming the column and the columns there are); in JSON Lines it is a bad row of that line.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.historical import HistoricalAudit

__all__ = ["FORMATS", "ExportFile", "read_export"]

FORMATS = ("csv", "jsonl")
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ExportFile:
    """The file as audited: its name, format, size and sha256 (of every byte read)."""

    name: str
    format: str
    size: int
    sha256: str


class _Hashing(io.RawIOBase):
    """A raw binary reader that hashes what passes through it."""

    def __init__(self, handle: io.BufferedReader) -> None:
        self._handle = handle
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._handle.readinto(buffer)
        if count:
            view = memoryview(buffer)[:count]
            self.digest.update(view)
            self.size += count
        return count or 0

    def finish(self) -> None:
        """Hash whatever the parser did not need to read (there is never meant to be any)."""
        while chunk := self._handle.read(_CHUNK):
            self.digest.update(chunk)
            self.size += len(chunk)


def file_format(path: Path, given: str | None) -> str:
    if given:
        return given
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise ScreenevalError(
            f"Cannot tell the format of {path} from its name: give --format csv or --format jsonl."
        )
    return found


def _csv_rows(text: io.TextIOWrapper, path: Path, audit: HistoricalAudit) -> None:
    reader = csv.reader(text)
    try:
        header = next(reader)
    except StopIteration:
        raise ScreenevalError(f"{path} is empty: it has no header row.") from None
    names = [name.strip() for name in header]
    if names and names[0].startswith("\ufeff"):
        names[0] = names[0][1:]
    missing = [c for c in audit.order if c not in names]
    if missing:
        shown = ", ".join(repr(n) for n in names[:30])
        raise ScreenevalError(
            f"{path} has no column {missing[0]!r} (its header, line 1, has {shown})."
        )
    width = len(names)
    positions = [names.index(c) for c in audit.order]
    add = audit.add_values
    for row in reader:
        if len(row) != width:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            audit.bad(
                reader.line_num,
                f"wrong number of fields: {len(row)} where the header has {width}",
            )
            continue
        add(reader.line_num, [row[i] for i in positions])


def _jsonl_rows(text: io.TextIOWrapper, audit: HistoricalAudit) -> None:
    for line, raw in enumerate(text, start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            audit.bad(line, "not JSON: the line is not one JSON object")
            continue
        if not isinstance(value, dict):
            audit.bad(line, f"not JSON: the line is a JSON {type(value).__name__}, not an object")
            continue
        audit.add(line, value)


def read_export(path: Path, audit: HistoricalAudit, *, fmt: str | None = None) -> ExportFile:
    """Feed every row of the export at ``path`` to ``audit``; the file's facts."""
    kind = file_format(path, fmt)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ScreenevalError(f"Cannot read {path} ({exc.strerror}).") from None
    with handle:
        hashing = _Hashing(handle)
        text = io.TextIOWrapper(
            io.BufferedReader(hashing, _CHUNK), encoding="utf-8-sig", newline=""
        )
        try:
            if kind == "csv":
                _csv_rows(text, path, audit)
            else:
                _jsonl_rows(text, audit)
        except UnicodeDecodeError as exc:
            raise ScreenevalError(
                f"{path} is not UTF-8 text (a byte {exc.object[exc.start]:#04x} near byte "
                f"{hashing.size - len(exc.object) + exc.start} cannot be read)."
            ) from None
        except csv.Error as exc:
            raise ScreenevalError(f"{path} is not readable CSV ({exc}).") from None
        hashing.finish()
    return ExportFile(
        name=path.name, format=kind, size=hashing.size, sha256=hashing.digest.hexdigest()
    )
