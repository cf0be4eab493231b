"""Where the ``screeneval`` command finds the store: by the rule pytest uses.

pytest puts the default SQLite store under its rootdir and reads ``screeneval_db`` from its ini
file; run from a subfolder, the command must land on the same file, not on ``./.screeneval``.
So this finds the rootdir and the ini file the way pytest does (``_pytest.config.findpaths``,
which is private, so it is mirrored here and a test compares the two): the first folder, from
the current one upwards, holding a pytest configuration file; else the nearest
``pyproject.toml``; else the nearest ``setup.py``; else the current folder.

The URL is then the one the plugin picks: ``--db``, else the ini's ``screeneval_db``, else
``$SCREENEVAL_DB``, else ``<rootdir>/.screeneval/screeneval.db``.
"""

from __future__ import annotations

import configparser
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DB_ENV", "Located", "find_rootdir", "store_url"]

DB_ENV = "SCREENEVAL_DB"
_INI_OPTION = "screeneval_db"


@dataclass(frozen=True)
class Located:
    """The rootdir pytest would use, its ini file (if any) and that file's pytest values."""

    rootdir: Path
    inifile: Path | None
    values: Mapping[str, str]


def _ini_section(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (tomllib.TOMLDecodeError, OSError):
        return {}


def _strings(table: object) -> dict[str, str]:
    if not isinstance(table, dict):
        return {}
    return {str(k): v if isinstance(v, str) else str(v) for k, v in table.items()}


def _pytest_toml(path: Path) -> dict[str, str]:
    return _strings(_toml(path).get("pytest", {}))


def _pytest_ini(path: Path) -> dict[str, str]:
    # pytest.ini counts even without a [pytest] section
    return _ini_section(path, "pytest") or {}


def _pyproject(path: Path) -> dict[str, str] | None:
    tool = _toml(path).get("tool", {})
    pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(pytest_table, dict):
        return None
    values = _strings({k: v for k, v in pytest_table.items() if k != "ini_options"})
    values.update(_strings(pytest_table.get("ini_options", {})))
    return values


def _tox(path: Path) -> dict[str, str] | None:
    return _ini_section(path, "pytest")


def _setup_cfg(path: Path) -> dict[str, str] | None:
    return _ini_section(path, "tool:pytest")


# pytest's order within one folder (CONFIG_LOADERS_BY_NAME); None means "not a pytest config"
_LOADERS: tuple[tuple[str, Callable[[Path], dict[str, str] | None]], ...] = (
    ("pytest.toml", _pytest_toml),
    (".pytest.toml", _pytest_toml),
    ("pytest.ini", _pytest_ini),
    (".pytest.ini", _pytest_ini),
    ("pyproject.toml", _pyproject),
    ("tox.ini", _tox),
    ("setup.cfg", _setup_cfg),
)


def find_rootdir(start: Path | None = None) -> Located:
    """pytest's rootdir and ini file for a run started in ``start`` (default: the cwd)."""
    here = (start or Path.cwd()).resolve()
    first_pyproject: Path | None = None
    for folder in (here, *here.parents):
        for name, load in _LOADERS:
            candidate = folder / name
            if not candidate.is_file():
                continue
            if name == "pyproject.toml" and first_pyproject is None:
                first_pyproject = candidate
            values = load(candidate)
            if values is not None:
                return Located(folder, candidate, values)
    if first_pyproject is not None:
        return Located(first_pyproject.parent, first_pyproject, {})
    for folder in (here, *here.parents):
        if (folder / "setup.py").is_file():
            return Located(folder, None, {})
    return Located(here, None, {})


def store_url(
    explicit: str | None = None,
    *,
    start: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The store's URL by the plugin's rule: flag, ini ``screeneval_db``, env, default file."""
    if explicit:
        return explicit
    located = find_rootdir(start)
    from_ini = located.values.get(_INI_OPTION, "").strip()
    if from_ini:
        return from_ini
    from_env = (os.environ if environ is None else environ).get(DB_ENV, "").strip()
    if from_env:
        return from_env
    from pytest_screeneval.store.connect import default_url

    return default_url(located.rootdir)
