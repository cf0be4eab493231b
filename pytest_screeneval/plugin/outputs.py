"""Output files checked when the run starts: a path that cannot be written is one sentence
before any scorer call, not a traceback after the whole run."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["unwritable", "unwritable_outputs"]


def unwritable(path: Path) -> str | None:
    """Why ``path`` cannot be written (created, or replaced), or None when it can."""
    if path.is_dir():
        return "it is a folder"
    if path.exists():
        return None if os.access(path, os.W_OK) else "the file is not writable"
    folder = path.parent
    while not folder.exists():  # the writer creates missing folders: the first one that exists
        if folder.is_symlink():
            return f"{folder} is a dangling symlink"
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable"
    return None


def unwritable_outputs(outputs: Iterable[tuple[str, str | None]], rootdir: Path) -> str | None:
    """The sentence for the first output (flag, path) that cannot be written, or None."""
    for flag, value in outputs:
        if not value:
            continue
        path = Path(value)
        problem = unwritable(path if path.is_absolute() else rootdir / path)
        if problem is not None:
            return f"Cannot write {flag} to {value}: {problem}; nothing was scored."
    return None
