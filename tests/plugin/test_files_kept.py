"""Files are never lost, and none is passed over in silence.

`cases export` never replaces a person's edited file without --force and never writes through a
symlink; a closed pipe ends `screeneval` quietly; case files that are not read (misplaced, a
dangling symlink, a symlink loop, which must not hang collection) are named in the summary; a
missing store folder is created with a word.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.plugin_project import expected_scores, set_scores, write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.store.database import Store

BOUND_S = 90.0


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = screeneval(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def exported(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> tuple[str, Path]:
    write_project(pytester)
    url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    assert cli(capsys, "--db", url, "cases", "import", str(pytester.path / "cases"))[0] == 0
    folder = pytester.path / "exported"
    code, _, err = cli(capsys, "--db", url, "cases", "export", str(folder))
    assert code == 0, err
    return url, folder


def test_export_refuses_to_replace_an_edited_file_unless_forced(
    exported: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, folder = exported
    edited = folder / "alpha" / "al-001.yaml"
    mine = edited.read_text() + "# a note a person added\n"
    edited.write_text(mine)
    untouched = folder / "beta" / "be-001.yaml"
    before = untouched.stat().st_mtime_ns
    code, _, err = cli(capsys, "--db", url, "cases", "export", str(folder))
    assert code == 1
    assert err == (
        f"screeneval: Cannot export to {folder}: 1 file(s) there differ from the store "
        "(alpha/al-001.yaml); nothing was written. Export to another folder, or replace them "
        "with --force.\n"
    )
    assert edited.read_text() == mine
    assert untouched.stat().st_mtime_ns == before  # an equal file is left as it is
    code, _, err = cli(capsys, "--db", url, "cases", "export", str(folder), "--force")
    assert code == 0, err
    assert edited.read_text() != mine and "a person added" not in edited.read_text()


def test_export_never_writes_through_a_symlink(
    exported: tuple[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url, folder = exported
    target = tmp_path / "someone-elses-file.txt"
    target.write_text("keep me")
    case_file = folder / "beta" / "be-002.yaml"
    case_file.unlink()
    case_file.symlink_to(target)
    for extra in ((), ("--force",)):
        code, _, err = cli(capsys, "--db", url, "cases", "export", str(folder), *extra)
        assert code == 1, extra
        assert "beta/be-002.yaml is a symlink or lies under one; the export never writes " in err
    assert target.read_text() == "keep me"


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    url = f"sqlite:///{(tmp_path / 'store.db').as_posix()}"
    Store.open(url).close()
    reader_gone = subprocess.Popen(
        [sys.executable, "-m", "pytest_screeneval.cli.main", "--db", url, "runs"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader_gone.stdout is not None and reader_gone.stderr is not None
    reader_gone.stdout.close()  # `| head` that has read what it wanted, before a byte came
    code = reader_gone.wait(timeout=BOUND_S)
    err = reader_gone.stderr.read().decode()
    assert err == "" and code == 141, err


def test_case_files_that_are_not_read_are_named_and_a_loop_does_not_hang(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    set_scores(pytester, expected_scores())
    cases = pytester.path / "cases"
    (cases / "alpha" / "loop").symlink_to(cases)  # a loop back to the cases folder
    (cases / "beta" / "gone.yaml").symlink_to(pytester.path / "nowhere.yaml")
    (cases / "al-009.yaml").write_text((cases / "alpha" / "al-001.yaml").read_text())
    deep = cases / "alpha" / "more"
    deep.mkdir()
    (deep / "al-010.yaml").write_text("id: al-010\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--screeneval"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        env=env,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    [line] = [ln for ln in output.splitlines() if ln.startswith("warning: case files not read: ")]
    for named in (
        "cases/al-009.yaml (not at <slice>/<id>.yaml)",
        "cases/alpha/loop (a symlink looping back to a folder above it)",
        "cases/alpha/more/al-010.yaml (not at <slice>/<id>.yaml)",
        "cases/beta/gone.yaml (a dangling symlink)",
    ):
        assert named in line, line


def test_a_missing_store_folder_is_created_with_a_word(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    set_scores(pytester, expected_scores())
    folder = pytester.path / "runs" / "store"
    url = f"sqlite:///{(folder / 'screeneval.db').as_posix()}"
    result = pytester.runpytest_subprocess("--screeneval", "--screeneval-db", url, "-k", "beta")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"warning: the store's folder {folder} did not exist; it was created"]
    )
    again = pytester.runpytest_subprocess("--screeneval", "--screeneval-db", url, "-k", "beta")
    assert "did not exist" not in again.stdout.str()
