"""The ``screeneval`` command finds the store pytest wrote (from any
subfolder), and the commands that only read work on a copy nobody may write."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from _pytest.config.findpaths import determine_setup
from support.golden_factory import make_golden
from support.plugin_project import write_project
from test_commands import all_three, run_cli, scored_run

from pytest_screeneval.cli.locate import find_rootdir, store_url
from pytest_screeneval.store.database import Store

pytest_plugins = ["pytester"]

LAYOUTS: dict[str, dict[str, str]] = {
    "pytest.ini": {"pytest.ini": "[pytest]\n"},
    "pytest.ini without a section": {"pytest.ini": ""},
    "pyproject table": {"pyproject.toml": "[tool.pytest.ini_options]\nx = 1\n"},
    "pyproject without table": {"pyproject.toml": "[project]\nname = 'x'\n"},
    "tox.ini with [pytest]": {"tox.ini": "[pytest]\n"},
    "tox.ini without [pytest]": {"tox.ini": "[tox]\n"},
    "setup.cfg": {"setup.cfg": "[tool:pytest]\n"},
    "setup.py": {"setup.py": ""},
    "nothing": {},
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_rootdir_is_the_one_pytest_finds(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "project"
    deep = root / "tests" / "unit"
    deep.mkdir(parents=True)
    for name, text in LAYOUTS[layout].items():
        (root / name).write_text(text, encoding="utf-8")
    expected, inifile, _, _ = determine_setup(
        inifile=None, override_ini=None, args=[], rootdir_cmd_arg=None, invocation_dir=deep
    )
    found = find_rootdir(deep)
    assert (found.rootdir, found.inifile) == (expected, inifile)


def test_store_url_follows_the_plugin_rule(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").write_text("[pytest]\nscreeneval_db = sqlite:///ini.db\n")
    sub = tmp_path / "tests"
    sub.mkdir()
    env = {"SCREENEVAL_DB": "sqlite:///env.db"}
    assert store_url("sqlite:///flag.db", start=sub, environ=env) == "sqlite:///flag.db"
    assert store_url(None, start=sub, environ=env) == "sqlite:///ini.db"
    (tmp_path / "tox.ini").write_text("[pytest]\n")
    assert store_url(None, start=sub, environ=env) == "sqlite:///env.db"
    assert store_url(None, start=sub, environ={}) == (
        f"sqlite:///{tmp_path.resolve().as_posix()}/.screeneval/screeneval.db"
    )


def test_cli_from_a_subfolder_finds_the_run_pytest_recorded(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = write_project(pytester)
    # the default store: no screeneval_db in the ini, none in the environment
    ini = root / "tox.ini"
    ini.write_text(
        "\n".join(line for line in ini.read_text().splitlines() if "screeneval_db" not in line)
    )
    monkeypatch.delenv("SCREENEVAL_DB", raising=False)
    sub = root / "tests"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = pytester.runpytest_inprocess("--screeneval", "-p", "no:cacheprovider")
    assert (root / ".screeneval" / "screeneval.db").is_file(), result.stdout.str()
    assert not (sub / ".screeneval").exists()
    capsys.readouterr()
    code, out, err = run_cli(capsys, "runs")
    assert (code, err) == (0, "")
    assert out.splitlines()[1].startswith("1 ")


# --------------------------------------------------------------------------------------------
# read-only copies
# --------------------------------------------------------------------------------------------


def _sqlite_header(path: Path) -> bytes:
    # bytes 18 and 19: file format write/read versions, 1 legacy journal, 2 WAL
    return path.read_bytes()[18:20]


@pytest.fixture
def read_only_copy(tmp_path: Path) -> tuple[str, int, int]:
    source = tmp_path / "source.db"
    with Store.open(f"sqlite:///{source}") as store:
        store.sync_golden_set(make_golden())
        first = scored_run(store, {"cc-001": all_three(3), "cc-002": all_three(2)})
        second = scored_run(store, {"cc-001": all_three(2), "cc-002": all_three(2)})
    # what an auditor is handed: one file in the rollback-journal format (sqlite3 .backup)
    copy_folder = tmp_path / "audit-copy"
    copy_folder.mkdir()
    copy = copy_folder / "screeneval.db"
    with sqlite3.connect(source) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
    copy.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    copy_folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    yield f"sqlite:///{copy}", first, second
    copy_folder.chmod(stat.S_IRWXU)


@pytest.mark.parametrize("nobody_may_write", [False, True], ids=["mode=ro", "immutable"])
def test_read_only_commands_work_on_a_read_only_copy(
    read_only_copy: tuple[str, int, int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    nobody_may_write: bool,
) -> None:
    url, first, second = read_only_copy
    copy = Path(url.removeprefix("sqlite:///"))
    if nobody_may_write:
        # root may write anything; pretend we are the auditor who may not
        monkeypatch.setattr(
            "pytest_screeneval.store.connect.os.access", lambda *args, **kwargs: False
        )
    before = (hashlib.sha256(copy.read_bytes()).hexdigest(), sorted(os.listdir(copy.parent)))
    out_folder = tmp_path / "out"
    out_folder.mkdir()
    commands = [
        ["runs"],
        ["show", str(second)],
        ["diff", str(first), str(second)],
        ["report", str(second), "--json", str(out_folder / "r.json")],
        ["verify"],
    ]
    for command in commands:
        code, _, err = run_cli(capsys, "--db", url, *command)
        assert (command, code, err) == (command, 0, "")
    assert _sqlite_header(copy) == b"\x01\x01"  # no switch to WAL
    after = (hashlib.sha256(copy.read_bytes()).hexdigest(), sorted(os.listdir(copy.parent)))
    assert after == before


def test_a_read_only_open_never_creates_a_store(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="There is no SQLite store at"):
        Store.open(f"sqlite:///{tmp_path / 'none.db'}", read_only=True)
    assert not (tmp_path / "none.db").exists()
